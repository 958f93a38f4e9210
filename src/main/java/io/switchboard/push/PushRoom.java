package io.switchboard.push;

import io.switchboard.bus.Addresses;
import io.switchboard.permission.Waiting;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.nio.file.Path;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The push room: sends the outbox's push messages (written with the ledger's rows, one per
 * subscribed device) to the devices' push services — each service's in outbox order, one at a
 * time, each service on its own so one that hangs or holds never delays another's devices — and
 * acknowledges each once its service took it. A device its service says is gone (404, 410) is
 * forgotten; a 429 or 503 holds that service's sends for its {@code Retry-After} (ten minutes at
 * most); other failures (an error status, no answer, a connection dropped) hold it with a growing
 * pause, five tries, then the push is dropped (a push is a nudge, the card is the record). A timer
 * sends what was held when its hold ends; no redirect is followed. A stop starts no send and waits
 * for those under way, so a push its service took is acknowledged, never sent again after the start.
 */
public final class PushRoom extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(PushRoom.class);
  /** The outbox the ledger writes pushes to (store's Outbox.PUSH). */
  public static final String OUTBOX = "_push";
  static final int MAX_ATTEMPTS = 5;
  /** How long a push of a request with no deadline may wait at the push service for the device. */
  static final int TTL_SECONDS = 24 * 3600;
  /**
   * The VAPID {@code sub} push services may contact: a gateway has no mail address of its own, and
   * RFC 8292 allows an https URL; this names the software, not a person.
   */
  public static final String SUBJECT = "https://github.com/switchboard-gateway/switchboard";

  /** The longest a push service's Retry-After may hold its pushes: a year's would silence a device for good. */
  static final long MAX_HOLD_MS = 10 * 60_000;
  /** Pushes read from the outbox at once. */
  static final int BATCH = 200;
  /** What a stop waits beyond a send's own timeout: encryption and the acknowledgement's write. */
  static final long STOP_MARGIN_MS = 2_000;

  /**
   * Timings that are not configuration (tests shorten them): {@code sendTimeoutMs} bounds one send
   * (and so a stop's wait); the pause after the n-th failed try is {@code pauseUnitMs << n}.
   */
  public record Timings(long sendTimeoutMs, long pauseUnitMs) {
    public static final Timings DEFAULT = new Timings(PushSender.TIMEOUT_MS, 1_000);
  }

  private final Path keyFile;
  private final String subject;
  private final Timings timings;
  private PushSender sender;
  private String publicKey;
  private EventBus bus;
  /** A read of the outbox is under way; {@code again}: something asked for another meanwhile. */
  private boolean reading;
  private boolean again;
  /** Set by stop(): no send starts after it, so none is cut off by the stop and sent again after the start. */
  private boolean stopping;
  /** Per push service (its origin): its sends under way, one at a time; a stop waits for them. */
  private final Map<String, Future<Void>> busy = new HashMap<>();
  /** Reads of the outbox started so far; per push service, how many had started when its sends last ended. */
  private long reads;
  private final Map<String, Long> endedAtRead = new HashMap<>();
  /** Per push service (its origin): no send before this (a 429's Retry-After, or a back-off after a failure). */
  private final Map<String, Long> holds = new HashMap<>();
  private long holdTimer = -1;
  private final Map<String, Integer> attempts = new HashMap<>();
  private final ZoneId zone = ZoneId.systemDefault();

  /** {@code keyFile}: the VAPID key pair ({@code <dataDir>/vapid.json}); {@code subject}: the contact push services see. */
  public PushRoom(Path keyFile, String subject) {
    this(keyFile, subject, Timings.DEFAULT);
  }

  public PushRoom(Path keyFile, String subject, Timings timings) {
    this.keyFile = keyFile;
    this.subject = subject;
    this.timings = timings;
  }

  @Override
  public Future<?> start() {
    bus = vertx.eventBus();
    return vertx.executeBlocking(() -> VapidKeyFile.loadOrCreate(keyFile), false).map(keys -> {
      publicKey = VapidKeyFile.publicKeyBase64Url(keys);
      // No redirect followed: the endpoint is the subscriber's to choose, and a redirect would carry
      // the VAPID Authorization header wherever it pointed.
      sender = new PushSender(vertx, WebClient.create(vertx, new WebClientOptions().setUserAgent("switchboard")
          .setFollowRedirects(false)), keys, subject, timings.sendTimeoutMs());
      bus.<JsonObject>localConsumer(Addresses.PUSH_KEY, m -> m.reply(new JsonObject().put("publicKey", publicKey)));
      bus.<JsonObject>consumer(Addresses.OUTBOX_READY, m -> {
        JsonArray plugins = m.body().getJsonArray("pluginIds", new JsonArray());
        if (plugins.contains(OUTBOX)) {
          drain();
        }
      });
      drain(); // what a gateway that stopped left unsent
      return null;
    });
  }

  /**
   * Starts no send, and waits for those under way (each bounded by its timeout) to be answered and
   * their answers recorded: the web client closes after this, and a send it cut off would have
   * reached the service, be logged as failed and go again after the start (issue 43).
   */
  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(holdTimer);
    return Future.join(new ArrayList<>(busy.values())).transform(x -> Future.succeededFuture())
        .timeout(timings.sendTimeoutMs() + STOP_MARGIN_MS, TimeUnit.MILLISECONDS)
        .recover(x -> {
          log.warn("push: stopped with {} sends unanswered; they go again after the start", busy.size());
          return Future.succeededFuture();
        });
  }

  private void drain() {
    if (stopping) {
      return;
    }
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    again = false;
    long read = ++reads;
    bus.<JsonObject>request(Addresses.STORE_OUTBOX_PENDING, new JsonObject().put("pluginId", OUTBOX).put("limit", BATCH))
        .compose(m -> dispatch(read, m.body().getJsonArray("outputs").stream().map(o -> (JsonObject) o).toList()))
        .onComplete(done -> {
          reading = false;
          if (done.failed()) {
            log.warn("push: the outbox could not be read ({})", done.cause().getMessage());
          }
          if (again) {
            drain();
          } else {
            wakeAtHoldsEnd();
          }
        });
  }

  /** A held push is sent when its hold ends: a timer for the earliest hold still ahead. */
  private void wakeAtHoldsEnd() {
    long now = System.currentTimeMillis();
    holds.values().removeIf(until -> until <= now);
    vertx.cancelTimer(holdTimer);
    holdTimer = -1;
    if (stopping) {
      return;
    }
    holds.values().stream().min(Long::compare).ifPresent(until -> holdTimer = vertx.setTimer(Math.max(1,
        until - now), t -> {
          holdTimer = -1;
          drain();
        }));
  }

  private record Pending(JsonObject out, JsonObject sub, String origin) {}

  /**
   * Starts each push service's sends, in outbox order, unless it is busy (its sends under way read
   * the outbox again when they end) or held (the timer reads it when the hold ends): a service that
   * hangs keeps only its own devices waiting. A service whose sends ended while this read was under
   * way is left to the next read: this one may still list a push they sent and acknowledged.
   */
  private Future<Void> dispatch(long read, List<JsonObject> outputs) {
    List<Future<JsonObject>> lookups = new ArrayList<>();
    for (JsonObject out : outputs) {
      lookups.add(bus.<JsonObject>request(Addresses.STORE_PUSH_GET, new JsonObject().put("subscriptionId",
          out.getString("chatId"))).map(m -> m.body()));
    }
    return Future.all(lookups).compose(found -> {
      Map<String, List<Pending>> byService = new LinkedHashMap<>();
      List<Future<Void>> forgotten = new ArrayList<>();
      for (int i = 0; i < outputs.size(); i++) {
        JsonObject sub = found.<JsonObject>resultAt(i).getJsonObject("subscription");
        if (sub == null) {
          forgotten.add(ack(outputs.get(i).getString("outputId"))); // the device unsubscribed meanwhile
          continue;
        }
        String origin = PushSubscription.origin(sub.getString("endpoint"));
        byService.computeIfAbsent(origin, k -> new ArrayList<>()).add(new Pending(outputs.get(i), sub, origin));
      }
      long now = System.currentTimeMillis();
      byService.forEach((origin, queue) -> {
        if (stopping || busy.containsKey(origin) || holds.getOrDefault(origin, 0L) > now
            || endedAtRead.getOrDefault(origin, 0L) >= read) {
          return;
        }
        Future<Void> sends = sendInOrder(queue, 0);
        busy.put(origin, sends);
        sends.onComplete(done -> {
          busy.remove(origin);
          endedAtRead.put(origin, reads);
          if (done.failed()) {
            // An acknowledgement not written: pause before that service's pushes are read and tried again.
            log.warn("push: the outbox could not record a send to {} ({})", origin, done.cause().getMessage());
            holds.put(origin, System.currentTimeMillis() + timings.pauseUnitMs());
          }
          drain(); // its pushes written meanwhile
        });
      });
      return Future.join(forgotten).mapEmpty();
    });
  }

  /** One push service's pushes, one at a time, until it holds them or the room stops. */
  private Future<Void> sendInOrder(List<Pending> queue, int i) {
    if (i >= queue.size() || stopping || holds.getOrDefault(queue.get(i).origin(), 0L) > System.currentTimeMillis()) {
      return Future.succeededFuture();
    }
    return sendOne(queue.get(i)).compose(goOn -> goOn ? sendInOrder(queue, i + 1) : Future.succeededFuture());
  }

  private Future<Boolean> sendOne(Pending p) {
    JsonObject out = p.out();
    JsonObject sub = p.sub();
    String outputId = out.getString("outputId");
    String device = out.getString("chatId");
    PushSubscription to = new PushSubscription(sub.getString("endpoint"), sub.getString("p256dh"),
        sub.getString("auth"));
    JsonObject body = out.getJsonObject("body");
    String kind = out.getString("kind");
    JsonObject payload = payload(kind, body, sub.getBoolean("details", false));
    boolean end = kind.equals("card_end");
    JsonObject deadline = body.getJsonObject("deadline");
    int ttl = end ? 600 : deadline == null ? TTL_SECONDS
        : (int) Math.max(60, (deadline.getLong("at") - System.currentTimeMillis()) / 1000);
    return sender.send(to, payload, body.getString("requestId"), ttl, !end)
        .recover(err -> Future.succeededFuture(new Delivery(Delivery.Status.FAILED, -1, 0, err.getMessage())))
        .compose(d -> settled(outputId, device, p.origin(), kind, d));
  }

  private Future<Boolean> settled(String outputId, String device, String origin, String kind, Delivery d) {
    bus.publish(Addresses.PUSH_SENT, new JsonObject().put("status", d.status().name()).put("kind", kind));
    switch (d.status()) {
      case DELIVERED -> {
        attempts.remove(outputId);
        return ack(outputId).map(true);
      }
      case TOO_LARGE -> {
        log.warn("push: the service refused a {} as too large ({}); dropped", kind, d.reason());
        return ack(outputId).map(true);
      }
      case GONE -> {
        log.info("push: device {} is no longer subscribed at its push service ({}); forgotten", device, d.status());
        attempts.remove(outputId);
        return bus.request(Addresses.STORE_PUSH_UNSUBSCRIBE, new JsonObject().put("subscriptionId", device))
            .compose(x -> ack(outputId)).map(true);
      }
      case RETRY_AFTER -> {
        // At least a pause: a Retry-After of 0 would have the service asked again and again at once.
        long wait = Math.max(timings.pauseUnitMs(), Math.min(d.retryAfterMs(), MAX_HOLD_MS));
        log.warn("push: {} asks to wait {} before its next push{}", origin, Waiting.duration(wait),
            wait < d.retryAfterMs() ? " (it asked for " + Waiting.duration(d.retryAfterMs()) + ")" : "");
        holds.put(origin, System.currentTimeMillis() + wait);
        return Future.succeededFuture(false);
      }
      default -> {
        int n = attempts.merge(outputId, 1, Integer::sum);
        if (n >= MAX_ATTEMPTS) {
          log.warn("push: a {} for device {} failed {} times ({}); dropped", kind, device, n, d.reason());
          attempts.remove(outputId);
          return ack(outputId).map(true);
        }
        long pause = timings.pauseUnitMs() << Math.min(n, 6);
        holds.put(origin, System.currentTimeMillis() + pause);
        log.info("push: a {} for device {} failed ({}); trying again in {}", kind, device, d.reason(),
            Waiting.duration(pause));
        return Future.succeededFuture(false);
      }
    }
  }

  private Future<Void> ack(String outputId) {
    return bus.request(Addresses.STORE_OUTBOX_ACK, new JsonObject().put("pluginId", OUTBOX)
        .put("outputIds", new JsonArray().add(outputId))).mapEmpty();
  }

  /**
   * What the service worker gets (docs/protocol-web.md, "Push"): a card or reminder says who asks
   * and, only on a device that opted in, what; an end closes the notification of that request.
   */
  JsonObject payload(String kind, JsonObject body, boolean details) {
    String requestId = body.getString("requestId");
    String threadId = body.getString("threadId");
    if (kind.equals("card_end")) {
      return new JsonObject().put("type", "end").put("requestId", requestId); // the tag of its notification
    }
    String agent = body.getString("agentId", "An agent");
    String project = body.getString("projectId");
    String tool = body.getJsonObject("toolCall", new JsonObject()).getString("title", "a tool call");
    if (tool.length() > 120) {
      tool = tool.substring(0, 119) + "\u2026";
    }
    String step = kind.equals("reminder") ? body.getString("step", "remind") : "card";
    String title = (step.equals("card") ? "" : "Still waiting: ") + agent + " asks for permission"
        + (project == null ? "" : " in " + project);
    StringBuilder text = new StringBuilder(details ? tool : "Open Switchboard to see what it wants.");
    JsonObject deadline = body.getJsonObject("deadline");
    JsonObject payload = new JsonObject().put("type", step).put("requestId", requestId).put("threadId", threadId)
        .put("title", title).put("url", "/#thread=" + threadId + "&request=" + requestId);
    if (deadline != null && deadline.getLong("at") != null) {
      String expiry = Waiting.expiry(deadline.getLong("at"), System.currentTimeMillis(), zone);
      text.append(' ').append(Character.toUpperCase(expiry.charAt(0))).append(expiry.substring(1)).append('.');
      payload.put("deadline", java.time.Instant.ofEpochMilli(deadline.getLong("at")).toString());
    }
    return payload.put("body", text.toString());
  }
}
