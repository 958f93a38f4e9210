package io.switchboard.push;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.interaso.webpush.VapidKeys;
import io.switchboard.push.Delivery.Status;
import io.switchboard.testkit.LoopbackPushService;
import io.switchboard.testkit.LoopbackPushService.Received;
import io.switchboard.testkit.LoopbackPushService.Subscriber;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.VertxExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * PushSender against the loopback push service: what a push service reads (VAPID verified, body
 * decrypted, headers as sent), and what each of its answers means to the caller. Also the edges:
 * the key file and the subscription a page hands in.
 */
@ExtendWith(VertxExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PushSenderTest {
  VapidKeys keys;
  LoopbackPushService service;
  WebClient client;
  PushSender sender;

  @BeforeAll
  void start(Vertx vertx) throws IOException {
    keys = VapidKeys.generate();
    service = LoopbackPushService.start(keys.getApplicationServerKey());
    client = WebClient.create(vertx);
    sender = new PushSender(vertx, client, keys, "mailto:ops@example.com");
  }

  @AfterAll
  void stop() {
    service.close();
    client.close();
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.await(20, TimeUnit.SECONDS);
  }

  private Received lastFor(Subscriber s) {
    List<Received> all = service.received();
    return all.stream().filter(r -> r.subscriberId().equals(s.id)).reduce((a, b) -> b)
        .orElseThrow(() -> new AssertionError("nothing received for " + s.id + "; rejected: " + service.rejected()));
  }

  @Test
  void aDeliveredMessageIsReadByTheServiceAsSent() throws Exception {
    Subscriber s = service.newSubscriber();
    PushSubscription to = PushSubscription.parse(s.subscription());
    JsonObject payload = new JsonObject().put("title", "Permission asked").put("body", "rm -rf build/ — allow?")
        .put("requestId", "req-42");

    Delivery d = await(sender.send(to, payload, "permission:thread-7/req-42", 90, true));
    assertEquals(new Delivery(Status.DELIVERED, 201, 0, ""), d);
    Received r = lastFor(s);
    assertEquals(payload, new JsonObject(r.text()), "decrypted with the subscriber's key: VAPID and RFC 8291 held");
    assertEquals("90", r.ttl());
    assertEquals("high", r.urgency());
    assertEquals("permissionthread-7req-42", r.topic());

    await(sender.send(to, payload, null, 0, false));
    assertEquals("normal", lastFor(s).urgency());
    assertEquals("0", lastFor(s).ttl());
    assertNull(lastFor(s).topic(), "no topic, no Topic header");
    assertTrue(service.rejected().stream().noneMatch(x -> x.subscriberId().equals(s.id)), service.rejected().toString());
  }

  @Test
  void eachAnswerOfThePushServiceMeansOneThing() throws Exception {
    Subscriber s = service.newSubscriber()
        .answer(404, null).answer(410, null).answer(413, null).answer(429, "7").answer(503, null)
        .answer(503, "soon").answer(500, null).answer(202, null);
    PushSubscription to = PushSubscription.parse(s.subscription());
    JsonObject ping = new JsonObject().put("ping", 1);
    assertEquals(new Delivery(Status.GONE, 404, 0, "scripted 404"), await(sender.send(to, ping, "t", 60, false)));
    assertEquals(Status.GONE, await(sender.send(to, ping, "t", 60, false)).status());
    assertEquals(Status.TOO_LARGE, await(sender.send(to, ping, "t", 60, false)).status());
    assertEquals(new Delivery(Status.RETRY_AFTER, 429, 7000, "scripted 429"), await(sender.send(to, ping, "t", 60, false)));
    Delivery unavailable = await(sender.send(to, ping, "t", 60, false));
    assertEquals(Status.RETRY_AFTER, unavailable.status());
    assertEquals(PushSender.DEFAULT_RETRY_AFTER_MS, unavailable.retryAfterMs(), "no Retry-After: 60 s");
    assertEquals(PushSender.DEFAULT_RETRY_AFTER_MS, await(sender.send(to, ping, "t", 60, false)).retryAfterMs(),
        "an unreadable Retry-After: 60 s");
    assertEquals(new Delivery(Status.FAILED, 500, 0, "scripted 500"), await(sender.send(to, ping, "t", 60, false)));
    assertEquals(Status.DELIVERED, await(sender.send(to, ping, "t", 60, false)).status());
  }

  /** Proves the service's VAPID check can fail: a sender with another key is refused (RFC 8292: 403). */
  @Test
  void aSenderWithAnotherVapidKeyIsRefused(Vertx vertx) throws Exception {
    Subscriber s = service.newSubscriber();
    PushSender stranger = new PushSender(vertx, client, VapidKeys.generate(), "mailto:ops@example.com");
    Delivery d = await(stranger.send(PushSubscription.parse(s.subscription()), new JsonObject().put("x", 1), "t", 60, false));
    assertEquals(Status.FAILED, d.status());
    assertEquals(403, d.httpStatus());
    assertTrue(service.rejected().stream().anyMatch(r -> r.subscriberId().equals(s.id) && r.status() == 403),
        service.rejected().toString());
    assertTrue(service.received().stream().noneMatch(r -> r.subscriberId().equals(s.id)));
  }

  @Test
  void anOversizePayloadIsRefusedBeforeAnyRequest() throws Exception {
    PushSubscription to = PushSubscription.parse(service.newSubscriber().subscription());
    int before = service.requests();
    JsonObject big = new JsonObject().put("body", "x".repeat(PushSender.MAX_PAYLOAD_BYTES));
    Future<Delivery> refused = sender.send(to, big, "t", 60, false);
    assertTrue(refused.failed(), "refused at once, before any crypto or request");
    assertTrue(refused.cause().getMessage().contains("over the limit of 3000"), refused.cause().getMessage());
    assertEquals(before, service.requests(), "no request reached the push service");
  }

  @Test
  void noAnswerAtAllIsFailedWithoutAStatus() throws Exception {
    LoopbackPushService closed = LoopbackPushService.start(null);
    PushSubscription to = PushSubscription.parse(closed.newSubscriber().subscription());
    closed.close();
    Delivery d = await(sender.send(to, new JsonObject().put("x", 1), "t", 60, false));
    assertEquals(Status.FAILED, d.status());
    assertEquals(-1, d.httpStatus());
    assertTrue(!d.reason().contains("/push/"), "the endpoint's path stays out of the reason: " + d.reason());
  }

  @Test
  void topicsAreShortenedToWhatRfc8030Allows() {
    assertEquals("permissionthread-7req-42", PushSender.topic("permission:thread-7/req-42"));
    String longTopic = "permission/" + "a".repeat(40) + "/0123456789abcdefghij";
    String kept = PushSender.topic(longTopic);
    assertEquals(32, kept.length());
    assertTrue(kept.endsWith("0123456789abcdefghij"), kept);
    assertEquals(kept, PushSender.topic(longTopic), "the same topic, the same header");
    assertNull(PushSender.topic(":/ "));
    assertNull(PushSender.topic(null));
  }

  @Test
  void retryAfterIsSecondsOrAnHttpDate() {
    long now = Instant.parse("2026-12-02T10:00:00Z").toEpochMilli();
    String inFiveSeconds = DateTimeFormatter.RFC_1123_DATE_TIME.format(Instant.ofEpochMilli(now + 5000).atZone(ZoneOffset.UTC));
    assertEquals(5000, PushSender.retryAfterMs(inFiveSeconds, now));
    assertEquals(0, PushSender.retryAfterMs("Wed, 21 Oct 2015 07:28:00 GMT", now), "a date gone by: now");
    assertEquals(120_000, PushSender.retryAfterMs(" 120 ", now));
    assertEquals(PushSender.DEFAULT_RETRY_AFTER_MS, PushSender.retryAfterMs("-3", now));
    assertEquals(PushSender.DEFAULT_RETRY_AFTER_MS, PushSender.retryAfterMs(null, now));
  }

  @Test
  void theVapidSubjectMustBeAContact(Vertx vertx) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new PushSender(vertx, client, keys, "ops@example.com"));
    assertTrue(e.getMessage().contains("subject"), e.getMessage());
  }

  // ---- VapidKeyFile

  @Test
  void theKeyFileIsMadeOwnerOnlyAndReadBack(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("data").resolve("vapid.json");
    VapidKeys made = VapidKeyFile.loadOrCreate(file);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    try (var listing = Files.list(file.getParent())) {
      assertEquals(List.of(file), listing.toList(), "no temporary file left behind");
    }
    VapidKeys read = VapidKeyFile.loadOrCreate(file);
    assertEquals(made.getX509PublicKey(), read.getX509PublicKey());
    assertEquals(made.getPkcs8PrivateKey(), read.getPkcs8PrivateKey());
    JsonObject json = new JsonObject(Files.readString(file));
    assertEquals(made.getX509PublicKey(), json.getString("publicKey"));

    byte[] applicationServerKey = Base64.getUrlDecoder().decode(VapidKeyFile.publicKeyBase64Url(read));
    assertArrayEquals(made.getApplicationServerKey(), applicationServerKey);
    assertEquals(65, applicationServerKey.length);
    assertTrue(!VapidKeyFile.publicKeyBase64Url(read).contains("="), "no padding");
  }

  @Test
  void aDamagedKeyFileIsAnErrorNamingTheFileNeverReplaced(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("vapid.json");
    VapidKeys made = VapidKeyFile.loadOrCreate(file);
    String good = Files.readString(file);
    for (String damaged : List.of("{\"publicKey\": \"MFkw", "[]",
        new JsonObject().put("publicKey", made.getX509PublicKey()).encode(),
        new JsonObject().put("publicKey", made.getX509PublicKey()).put("privateKey", "bm90IGEga2V5").encode(),
        new JsonObject().put("publicKey", VapidKeys.generate().getX509PublicKey())
            .put("privateKey", made.getPkcs8PrivateKey()).encode())) {
      Files.writeString(file, damaged);
      IOException e = assertThrows(IOException.class, () -> VapidKeyFile.loadOrCreate(file), damaged);
      assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
      assertEquals(damaged, Files.readString(file), "left as it was");
    }
    Files.writeString(file, new JsonObject().put("publicKey", made.getX509PublicKey()).encode());
    assertTrue(assertThrows(IOException.class, () -> VapidKeyFile.loadOrCreate(file)).getMessage().contains("privateKey"));
    Files.writeString(file, good);
    assertEquals(made.getX509PublicKey(), VapidKeyFile.loadOrCreate(file).getX509PublicKey());
  }

  // ---- PushSubscription

  private static String parseError(JsonObject json) {
    return assertThrows(IllegalArgumentException.class, () -> PushSubscription.parse(json)).getMessage();
  }

  @Test
  void aSubscriptionNamesTheFieldThatIsWrong() {
    JsonObject good = service.newSubscriber().subscription();
    PushSubscription parsed = PushSubscription.parse(good);
    assertEquals(good.getString("endpoint"), parsed.endpoint());
    assertEquals(PushSubscription.parse(parsed.toJson()), parsed);
    assertTrue(!parsed.toString().contains("/push/"), "toString hides the capability URL: " + parsed);

    assertTrue(parseError(without(good, "keys")).startsWith("subscription.keys "));
    assertTrue(parseError(good.copy().put("endpoint", 42)).startsWith("subscription.endpoint "));
    assertTrue(parseError(good.copy().put("endpoint", "http://push.example.net/x")).startsWith("subscription.endpoint "));
    assertTrue(parseError(good.copy().put("endpoint", "ftp://push.example.net/x")).startsWith("subscription.endpoint "));
    assertTrue(parseError(good.copy().put("endpoint", "/push/relative")).startsWith("subscription.endpoint "));
    assertTrue(parseError(good.copy().put("endpoint", "https://push.example.net/" + "x".repeat(2048)))
        .startsWith("subscription.endpoint "));
    assertTrue(parseError(withKey(good, "p256dh", "BAAA")).startsWith("subscription.keys.p256dh "));
    assertTrue(parseError(withKey(good, "p256dh", "not base64url!")).startsWith("subscription.keys.p256dh "));
    byte[] offCurve = new byte[65];
    offCurve[0] = 0x04;
    String offCurveKey = Base64.getUrlEncoder().withoutPadding().encodeToString(offCurve);
    assertTrue(parseError(withKey(good, "p256dh", offCurveKey)).contains("curve"));
    assertTrue(parseError(withKey(good, "auth", "AAAAAAAAAAAAAAAAAAAA")).startsWith("subscription.keys.auth "));
    assertTrue(parseError(withKey(good, "auth", null)).startsWith("subscription.keys.auth "));

    assertEquals("push.example.net", PushSubscription.parse(good.copy().put("endpoint", "https://push.example.net/wpush/v2/abc")).host());
  }

  private static JsonObject without(JsonObject json, String key) {
    JsonObject copy = json.copy();
    copy.remove(key);
    return copy;
  }

  private static JsonObject withKey(JsonObject json, String key, String value) {
    JsonObject copy = json.copy();
    copy.getJsonObject("keys").put(key, value);
    return copy;
  }
}
