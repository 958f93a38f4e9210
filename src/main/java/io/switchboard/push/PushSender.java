package io.switchboard.push;

import com.interaso.webpush.VapidKeys;
import com.interaso.webpush.WebPush;
import io.switchboard.push.Delivery.Status;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends one Web Push message: the library encrypts it (RFC 8291) and signs the VAPID header
 * (RFC 8292) on a worker thread, Vert.x's web client posts it, and the push service's answer
 * becomes a {@link Delivery} saying what to do next. Logs name the push service's host only: the
 * endpoint is a capability URL.
 */
public final class PushSender {
  private static final Logger log = LoggerFactory.getLogger(PushSender.class);
  /**
   * The largest JSON payload we send. RFC 8291 allows 3993 bytes of plaintext in the 4096 a push
   * service must take; staying under 3000 leaves room and keeps the payload a notice, not a document.
   */
  public static final int MAX_PAYLOAD_BYTES = 3000;
  static final long TIMEOUT_MS = 10_000;
  static final long DEFAULT_RETRY_AFTER_MS = 60_000;
  static final int TOPIC_CHARS = 32;
  private static final int REASON_CHARS = 200;

  private final Vertx vertx;
  private final WebClient client;
  private final WebPush webPush;
  private final long timeoutMs;

  /**
   * @param subject the VAPID {@code sub}: a {@code mailto:} or {@code https:} contact for the push
   *     service's operator (Apple's service refuses anything else)
   */
  public PushSender(Vertx vertx, WebClient client, VapidKeys keys, String subject) {
    this(vertx, client, keys, subject, TIMEOUT_MS);
  }

  /** {@code timeoutMs}: how long a send waits for the push service's answer before it counts as failed. */
  public PushSender(Vertx vertx, WebClient client, VapidKeys keys, String subject, long timeoutMs) {
    if (subject == null || !(subject.startsWith("mailto:") || subject.startsWith("https://"))) {
      throw new IllegalArgumentException("the VAPID subject must be a mailto: or https:// contact, not " + subject);
    }
    this.vertx = vertx;
    this.client = client;
    this.webPush = new WebPush(subject, keys);
    this.timeoutMs = timeoutMs;
  }

  /**
   * Encrypts {@code payload} for {@code to} and posts it. The future fails only when the message
   * cannot be sent at all (too large, bad arguments); every answer, and no answer, is a {@link Delivery}.
   *
   * @param topic replaces an undelivered earlier message with the same topic; shortened by {@link #topic}
   * @param ttlSeconds how long the push service keeps the message for an offline device
   * @param urgent {@code Urgency: high} (may wake a sleeping phone) rather than {@code normal}
   */
  public Future<Delivery> send(PushSubscription to, JsonObject payload, String topic, int ttlSeconds, boolean urgent) {
    byte[] plaintext = payload.encode().getBytes(StandardCharsets.UTF_8);
    if (plaintext.length > MAX_PAYLOAD_BYTES) {
      return Future.failedFuture(new IllegalArgumentException("the push payload is " + plaintext.length
          + " bytes of JSON, over the limit of " + MAX_PAYLOAD_BYTES + "; send an id the page can fetch instead"));
    }
    if (ttlSeconds < 0) {
      return Future.failedFuture(new IllegalArgumentException("ttlSeconds must be 0 or more, not " + ttlSeconds));
    }
    String header = topic(topic);
    WebPush.Urgency urgency = urgent ? WebPush.Urgency.High : WebPush.Urgency.Normal;
    // ECDH, HKDF, AES-GCM and an ECDSA signature: about a millisecond, not for the event loop.
    Future<Sealed> sealed = vertx.executeBlocking(() -> new Sealed(
        webPush.getBody(plaintext, to.p256dhBytes(), to.authBytes()),
        webPush.getHeaders(to.endpoint(), ttlSeconds, header, urgency)), false);
    return sealed.compose(message -> post(to, message))
        .onSuccess(delivery -> logged(to, header, delivery));
  }

  private record Sealed(byte[] body, Map<String, String> headers) {}

  private Future<Delivery> post(PushSubscription to, Sealed message) {
    HttpRequest<Buffer> request = client.postAbs(to.endpoint()).timeout(timeoutMs);
    message.headers().forEach(request::putHeader); // Authorization, Content-Encoding, TTL, Urgency, Topic
    return request.sendBuffer(Buffer.buffer(message.body()))
        .map(response -> delivery(to, response))
        .recover(error -> Future.succeededFuture(
            new Delivery(Status.FAILED, -1, 0, redact(to, String.valueOf(error.getMessage())))));
  }

  private static Delivery delivery(PushSubscription to, HttpResponse<Buffer> response) {
    int code = response.statusCode();
    String body = response.body() == null ? "" : response.body().toString(StandardCharsets.UTF_8);
    String reason = redact(to, body.length() > REASON_CHARS ? body.substring(0, REASON_CHARS) : body);
    return switch (code) {
      case 200, 201, 202 -> new Delivery(Status.DELIVERED, code, 0, reason);
      case 404, 410 -> new Delivery(Status.GONE, code, 0, reason);
      case 413 -> new Delivery(Status.TOO_LARGE, code, 0, reason);
      case 429, 503 -> new Delivery(Status.RETRY_AFTER, code,
          retryAfterMs(response.getHeader("Retry-After"), System.currentTimeMillis()), reason);
      default -> new Delivery(Status.FAILED, code, 0, reason);
    };
  }

  /**
   * RFC 8030 §5.4 allows a Topic of at most 32 characters of the base64url alphabet. Other
   * characters are dropped and a longer topic keeps its last 32 (our ids end in their most distinct
   * part). The same topic always gives the same header, so a newer message still replaces an older
   * one; {@code null} (no Topic header) when nothing is left.
   */
  static String topic(String topic) {
    if (topic == null) {
      return null;
    }
    String kept = topic.replaceAll("[^A-Za-z0-9_-]", "");
    kept = kept.length() > TOPIC_CHARS ? kept.substring(kept.length() - TOPIC_CHARS) : kept;
    return kept.isEmpty() ? null : kept;
  }

  /** {@code Retry-After} as seconds or an HTTP-date, in milliseconds from now; 60 s when absent or unreadable. */
  static long retryAfterMs(String value, long nowMs) {
    if (value == null || value.isBlank()) {
      return DEFAULT_RETRY_AFTER_MS;
    }
    String v = value.trim();
    try {
      long seconds = Long.parseLong(v);
      return seconds < 0 ? DEFAULT_RETRY_AFTER_MS : Math.multiplyExact(seconds, 1000L);
    } catch (NumberFormatException | ArithmeticException notSeconds) {
      // an HTTP-date, or garbage
    }
    try {
      long at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
      return Math.max(0, at - nowMs);
    } catch (DateTimeParseException notADate) {
      return DEFAULT_RETRY_AFTER_MS;
    }
  }

  /** Removes the endpoint's path from a text (an error or the service's answer may quote it). */
  private static String redact(PushSubscription to, String text) {
    String path = URI.create(to.endpoint()).getRawPath();
    String redacted = text.replace(to.endpoint(), to.host() + "/…");
    return path == null || path.length() < 2 ? redacted : redacted.replace(path, "/…");
  }

  private static void logged(PushSubscription to, String topic, Delivery d) {
    switch (d.status()) {
      case DELIVERED -> log.debug("push to {} topic {}: delivered ({})", to.host(), topic, d.httpStatus());
      case GONE -> log.info("push to {} topic {}: subscription gone ({})", to.host(), topic, d.httpStatus());
      default -> log.warn("push to {} topic {}: {} ({}, retry after {} ms) {}", to.host(), topic,
          d.status(), d.httpStatus(), d.retryAfterMs(), d.reason());
    }
  }
}
