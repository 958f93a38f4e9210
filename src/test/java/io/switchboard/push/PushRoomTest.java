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
import java.util.Collections;
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

  /**
   * Push services that fail without an answer (issue 43): one takes each request and never answers,
   * one closes the connection instead of answering. Each gets five tries of the card's push and no
   * more (the count each service saw), then the push is dropped; a device at a healthy service gets
   * the card and its end once each; the failing services' devices get the end once it answers again.
   */
  @Test
  void aHangingAndADroppingServiceGetFiveTriesEachAndAHealthyDeviceEveryPushOnce(Vertx vertx) throws Exception {
    // A short send timeout so five hangs take seconds; long enough that a healthy answer is never cut.
    ChatClient c = hostileGateway(vertx, new PushRoom.Timings(1_500, 20));
    byte[] key = publicKey;
    service = LoopbackPushService.start(key);
    try (LoopbackPushService dropping = LoopbackPushService.start(key);
         LoopbackPushService healthy = LoopbackPushService.start(key)) {
      LoopbackPushService.Subscriber hangs = service.newSubscriber();
      LoopbackPushService.Subscriber drops = dropping.newSubscriber();
      for (int i = 0; i < PushRoom.MAX_ATTEMPTS; i++) {
        hangs.hang();
        drops.drop();
      }
      LoopbackPushService.Subscriber fine = healthy.newSubscriber();
      for (LoopbackPushService.Subscriber s : List.of(hangs, drops, fine)) {
        c.send(new JsonObject().put("type", "push_subscribe").put("subscription", s.subscription()));
        c.next("push_subscribed");
      }
      String t = thread(c);
      c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "note this"));
      String requestId = c.next("permission_request").getString("requestId");
      assertEquals(List.of("card " + requestId), pushes(healthy.awaitReceived(1, Duration.ofSeconds(10))));

      // Once no push is due the room sends nothing more: whatever a service saw by then is all it gets.
      waitFor(() -> pendingPushes(vertx) == 0, "the card's pushes settled", 60_000);
      assertEquals(Collections.nCopies(PushRoom.MAX_ATTEMPTS, LoopbackPushService.HUNG), answers(service),
          "five tries at the service that hangs, then the push is dropped");
      assertEquals(Collections.nCopies(PushRoom.MAX_ATTEMPTS, LoopbackPushService.DROPPED), answers(dropping),
          "five tries at the service that drops the connection");
      assertEquals(Collections.nCopies(PushRoom.MAX_ATTEMPTS, "card " + requestId), pushes(service.received()),
          "each try the same push");

      // Their scripts spent, both answer 201: the end reaches every device, once.
      c.send(new JsonObject().put("type", "permission_answer").put("requestId", requestId).put("optionId", "allow-once"));
      healthy.awaitReceived(2, Duration.ofSeconds(10));
      service.awaitReceived(PushRoom.MAX_ATTEMPTS + 1, Duration.ofSeconds(10));
      dropping.awaitReceived(PushRoom.MAX_ATTEMPTS + 1, Duration.ofSeconds(10));
      waitFor(() -> pendingPushes(vertx) == 0, "the end's pushes settled");
      assertEquals(List.of("card " + requestId, "end " + requestId), pushes(healthy.received()),
          "the healthy device got each push once");
      assertEquals(2, healthy.requests());
      assertEquals("end " + requestId, pushes(service.received()).get(PushRoom.MAX_ATTEMPTS));
      assertEquals(PushRoom.MAX_ATTEMPTS + 1, service.requests());
      assertEquals(PushRoom.MAX_ATTEMPTS + 1, dropping.requests());
    }
  }

  /**
   * A push service that takes a push and never answers (the room's timeout is longer than this test)
   * keeps only its own device waiting: a healthy device gets the card and its end while the hang is
   * still under way; a service that answers 500 gets the same push again after its pause, and its
   * 201 settles it; the healthy device gets nothing twice.
   */
  @Test
  void aHealthyDeviceWaitsNeitherForAHangingSendNorForAnotherServicesPause(Vertx vertx) throws Exception {
    ChatClient c = hostileGateway(vertx, new PushRoom.Timings(60_000, 200));
    byte[] key = publicKey;
    service = LoopbackPushService.start(key);
    try (LoopbackPushService stuck = LoopbackPushService.start(key);
         LoopbackPushService flaky = LoopbackPushService.start(key)) {
      LoopbackPushService.Subscriber hangs = stuck.newSubscriber().hang();
      LoopbackPushService.Subscriber fails = flaky.newSubscriber().answer(500, null);
      LoopbackPushService.Subscriber fine = service.newSubscriber();
      for (LoopbackPushService.Subscriber s : List.of(hangs, fails, fine)) {
        c.send(new JsonObject().put("type", "push_subscribe").put("subscription", s.subscription()));
        c.next("push_subscribed");
      }
      String t = thread(c);
      c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "note this"));
      String requestId = c.next("permission_request").getString("requestId");
      assertEquals(List.of(LoopbackPushService.HUNG), answers(stuck.awaitReceived(1, Duration.ofSeconds(10))));
      assertEquals(List.of("card " + requestId), pushes(service.awaitReceived(1, Duration.ofSeconds(10))));
      // Nothing else sends the 500's push again (no other push is due): only the timer at its pause's end.
      List<LoopbackPushService.Received> tried = flaky.awaitReceived(2, Duration.ofSeconds(10));
      assertEquals(List.of(500, 201), tried.stream().map(LoopbackPushService.Received::answered).toList());
      assertEquals(List.of("card " + requestId, "card " + requestId), pushes(tried), "the same push again");

      c.send(new JsonObject().put("type", "permission_answer").put("requestId", requestId).put("optionId", "allow-once"));
      assertEquals(List.of("card " + requestId, "end " + requestId),
          pushes(service.awaitReceived(2, Duration.ofSeconds(10))), "the end, while the other service still hangs");
      flaky.awaitReceived(3, Duration.ofSeconds(10));
      assertEquals(1, stuck.requests(), "the hanging send is still the stuck service's only one");
      waitFor(() -> pendingPushes(vertx) == 1, "all settled but the stuck service's card");
      assertEquals(2, service.requests(), "the healthy device got each push once");
      assertEquals(3, flaky.requests());
    } // the stuck service closes: its send fails at once, and the stop need not wait for its timeout
  }

  byte[] publicKey;

  /** A gateway with these push timings and a page on it; {@link #publicKey} is its VAPID key. */
  private ChatClient hostileGateway(Vertx vertx, PushRoom.Timings timings) throws Exception {
    Settings settings = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("data"), "demo",
        List.of(AgentHarness.demo()), List.of(), Settings.LogFormat.TEXT)
        .withAttention(new Attention(new Attention.Spec(600_000L, 0L, null, 0L, null, null), Map.of(), Map.of()));
    gateway = new GatewayHarness(vertx, settings, io.switchboard.Gateway.Tuning.DEFAULT.withPush(timings));
    ChatClient c = ChatClient.open(vertx, gateway.port, gateway.token);
    publicKey = Base64.getUrlDecoder().decode(c.next("welcome").getJsonObject("push").getString("publicKey"));
    return c;
  }

  private static String thread(ChatClient c) {
    c.send(new JsonObject().put("type", "new_thread").put("clientRef", "n"));
    String t = c.next("thread").getString("threadId");
    c.send(new JsonObject().put("type", "attach").put("threadId", t));
    return t;
  }

  /** The push outbox's rows still due (sent and not yet answered, or held). */
  private static int pendingPushes(Vertx vertx) {
    return await(vertx.eventBus().<JsonObject>request(Addresses.STORE_OUTBOX_PENDING, new JsonObject()
        .put("pluginId", PushRoom.OUTBOX).put("limit", 1000))).body().getJsonArray("outputs").size();
  }

  private static List<Integer> answers(LoopbackPushService s) {
    return answers(s.received());
  }

  private static List<Integer> answers(List<LoopbackPushService.Received> received) {
    return received.stream().map(LoopbackPushService.Received::answered).toList();
  }

  /** Each push as "type requestId". */
  private static List<String> pushes(List<LoopbackPushService.Received> received) {
    return received.stream().map(r -> new JsonObject(r.text()))
        .map(p -> p.getString("type") + " " + p.getString("requestId")).toList();
  }
}
