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

  /**
   * Push services that misbehave (issue 43): one answers 429 with a short Retry-After, then a year's;
   * a device at another service gets every push at once all the same, and the held push is sent
   * when its hold ends, without another push to wake the room. Endpoints of the subscriber's
   * choosing that name an address of the gateway's own network are refused, and a socket cannot
   * subscribe more than ten devices.
   */
  @Test
  void aHeldPushServiceNeitherStallsAnotherNorKeepsItsPushForever(Vertx vertx) throws Exception {
    Settings settings = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("data"), "demo",
        List.of(AgentHarness.demo()), List.of(), Settings.LogFormat.TEXT)
        .withAttention(new Attention(new Attention.Spec(600_000L, 0L, null, 0L, null, null), Map.of(), Map.of()));
    gateway = new GatewayHarness(vertx, settings, io.switchboard.Gateway.Tuning.DEFAULT);
    ChatClient c = ChatClient.open(vertx, gateway.port, gateway.token);
    byte[] key = Base64.getUrlDecoder().decode(c.next("welcome").getJsonObject("push").getString("publicKey"));
    service = LoopbackPushService.start(key);
    try (LoopbackPushService other = LoopbackPushService.start(key)) {
      LoopbackPushService.Subscriber held = service.newSubscriber().answer(429, "2").answer(201, null)
          .answer(429, "31536000");
      LoopbackPushService.Subscriber healthy = other.newSubscriber();
      for (LoopbackPushService.Subscriber s : List.of(held, healthy)) {
        c.send(new JsonObject().put("type", "push_subscribe").put("subscription", s.subscription()));
        c.next("push_subscribed");
      }
      for (String bad : List.of("https://169.254.169.254/push/x", "https://10.0.0.7/push", "https://[fe80::1]/push",
          "https://printer.local/push", "https://metadata/push")) {
        c.send(new JsonObject().put("type", "push_subscribe").put("subscription", healthy.subscription()
            .put("endpoint", bad)));
        JsonObject refused = c.next("error");
        assertTrue(refused.getString("message").contains("endpoint"), bad + ": " + refused);
      }
      c.send(new JsonObject().put("type", "new_thread").put("clientRef", "n"));
      String t = c.next("thread").getString("threadId");
      c.send(new JsonObject().put("type", "attach").put("threadId", t));
      c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "note this"));
      String first = c.next("permission_request").getString("requestId");
      assertTrue(new JsonObject(other.awaitReceived(1, Duration.ofSeconds(10)).get(0).text()).getString("requestId")
          .equals(first), "the healthy device's push");
      List<LoopbackPushService.Received> tried = service.awaitReceived(2, Duration.ofSeconds(15));
      assertEquals(List.of(429, 201), tried.stream().map(LoopbackPushService.Received::answered).toList(),
          "the held push was sent again when its hold ended");

      // A year's Retry-After at one service: the other's device still gets the next card at once.
      c.send(new JsonObject().put("type", "permission_answer").put("requestId", first).put("optionId", "allow-once"));
      other.awaitReceived(2, Duration.ofSeconds(10)); // the first card's end
      service.awaitReceived(3, Duration.ofSeconds(10)); // its end, answered 429 for a year
      c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "note that too"));
      String second = c.next(f -> "permission_request".equals(f.getString("type"))
          && !first.equals(f.getString("requestId")), "the second card").getString("requestId");
      assertEquals(second, new JsonObject(other.awaitReceived(3, Duration.ofSeconds(10)).get(2).text())
          .getString("requestId"), "the healthy device is not held by the other service's year");
      assertEquals(3, service.received().size(), "the held service gets nothing more before its (bounded) hold ends");
    }

    // Ten devices at most: the oldest goes.
    for (int i = 0; i < 12; i++) {
      c.send(new JsonObject().put("type", "push_subscribe").put("subscription", service.newSubscriber().subscription()));
      c.next("push_subscribed");
    }
    assertEquals(10, await(vertx.eventBus().<JsonObject>request(Addresses.STORE_PUSH_LIST, new JsonObject())).body()
        .getJsonArray("subscriptions").size());
  }
}
