package io.switchboard.push;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.config.Attention;
import io.switchboard.config.Settings;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.switchboard.testkit.LoopbackPushService;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole gateway pushing to a loopback push service (no network): a page subscribes a device,
 * a card is pushed (encrypted to the device, signed with the gateway's VAPID key), its end closes
 * the notification, a reminder is pushed too, and a device its push service calls gone is forgotten.
 */
@ExtendWith(VertxExtension.class)
class PushRoomTest {
  @TempDir
  Path dir;
  GatewayHarness gateway;
  LoopbackPushService service;

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    if (service != null) {
      service.close();
    }
  }

  @Test
  void aCardReachesASubscribedDeviceAndItsEndClosesTheNotification(Vertx vertx) throws Exception {
    Settings settings = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("data"), "demo",
        List.of(AgentHarness.demo()), List.of(), Settings.LogFormat.TEXT)
        .withAttention(new Attention(new Attention.Spec(1_000L, 0L, null, 0L, null, null), Map.of(), Map.of()));
    gateway = new GatewayHarness(vertx, settings, io.switchboard.Gateway.Tuning.DEFAULT);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(
        gateway.dataDir.resolve("vapid.json"))), "the VAPID key pair is the owner's alone");
    ChatClient c = ChatClient.open(vertx, gateway.port, gateway.token);
    String key = c.next("welcome").getJsonObject("push").getString("publicKey");
    service = LoopbackPushService.start(Base64.getUrlDecoder().decode(key));
    LoopbackPushService.Subscriber phone = service.newSubscriber();

    c.send(new JsonObject().put("type", "push_subscribe").put("subscription", new JsonObject().put("endpoint", "ftp://x")
        .put("keys", phone.subscription().getJsonObject("keys"))));
    JsonObject refused = c.next("error");
    assertTrue(refused.getString("message").contains("endpoint"), "a bad subscription names what is wrong: " + refused);
    c.send(new JsonObject().put("type", "push_subscribe").put("subscription", phone.subscription()));
    assertEquals(phone.endpoint(), c.next("push_subscribed").getString("endpoint"));

    c.send(new JsonObject().put("type", "new_thread").put("clientRef", "n"));
    String t = c.next("thread").getString("threadId");
    c.send(new JsonObject().put("type", "attach").put("threadId", t));
    c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "note this"));
    JsonObject card = c.next("permission_request");
    String requestId = card.getString("requestId");

    List<LoopbackPushService.Received> got = service.awaitReceived(1, Duration.ofSeconds(30));
    JsonObject push = new JsonObject(got.get(0).text());
    assertEquals("card", push.getString("type"));
    assertEquals(requestId, push.getString("requestId"));
    assertEquals("/#thread=" + t + "&request=" + requestId, push.getString("url"), "a tap opens the card");
    assertTrue(push.getString("title").contains("demo asks for permission"), push.encode());
    assertFalse(push.getString("body").contains(card.getJsonObject("toolCall").getString("title")),
        "a lock screen shows no tool call unless the device opted in: " + push.encode());
    assertEquals("high", got.get(0).urgency());
    assertTrue(requestId.endsWith(got.get(0).topic()), "one topic per request: a newer push replaces an older one");

    JsonObject reminder = new JsonObject(service.awaitReceived(2, Duration.ofSeconds(30)).get(1).text());
    assertEquals("remind", reminder.getString("type"), "the reminder is pushed too");
    c.send(new JsonObject().put("type", "permission_answer").put("requestId", requestId).put("optionId", "allow-once"));
    JsonObject end = new JsonObject(service.awaitReceived(3, Duration.ofSeconds(30)).get(2).text());
    assertEquals(new JsonObject().put("type", "end").put("requestId", requestId), end,
        "the request's end closes its notification");
    JsonObject row = await(vertx.eventBus().<JsonObject>request(Addresses.STORE_LEDGER_GET,
        new JsonObject().put("requestId", requestId))).body().getJsonObject("request");
    assertTrue(row.getJsonArray("events").stream().anyMatch(e -> "pushed".equals(((JsonObject) e).getString("event"))),
        "the ledger records the push: " + row.encode());
    assertTrue(service.rejected().isEmpty(), "every push carried a valid VAPID signature: " + service.rejected());

    // The device is gone at its push service: the next push gets 410, and the gateway forgets it.
    phone.answer(410, null);
    c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "note that too"));
    c.next(f -> "permission_request".equals(f.getString("type")) && !requestId.equals(f.getString("requestId")),
        "the second card");
    waitFor(() -> await(vertx.eventBus().<JsonObject>request(Addresses.STORE_PUSH_LIST, new JsonObject())).body()
        .getJsonArray("subscriptions").isEmpty(), "the gone device forgotten");
  }
}
