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
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The push room: sends the outbox's push messages (written with the ledger's rows, one per
 * subscribed device) to the devices' push services — each service's in outbox order, one at a
 * time, different services side by side — and acknowledges each once its service took it. A
 * device its service says is gone (404, 410) is forgotten; a 429 or 503 holds that service's
 * sends for its {@code Retry-After} (ten minutes at most); other failures hold it with a growing
 * pause, five tries, then the push is dropped (a push is a nudge, the card is the record). A timer
 * sends what was held when its hold ends; no redirect is followed.
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

  private final Path keyFile;
  private final String subject;
  private PushSender sender;
  private String publicKey;
  private EventBus bus;
  private boolean draining;
  private boolean again;
  /** The drain under way: a stop waits for its sends, so none is cut off half-sent and sent again. */
  private Future<?> current = Future.succeededFuture();
  /** Per push service (its origin): no send before this (a 429's Retry-After, or a back-off after a failure). */
  private final Map<String, Long> holds = new HashMap<>();
  private long holdTimer = -1;
  private final Map<String, Integer> attempts = new HashMap<>();
  private final ZoneId zone = ZoneId.systemDefault();

  /** {@code keyFile}: the VAPID key pair ({@code <dataDir>/vapid.json}); {@code subject}: the contact push services see. */
  public PushRoom(Path keyFile, String subject) {
    this.keyFile = keyFile;
    this.subject = subject;
  }

  @Override
  public Future<?> start() {
    bus = vertx.eventBus();
    return vertx.executeBlocking(() -> VapidKeyFile.loadOrCreate(keyFile), false).map(keys -> {
      publicKey = VapidKeyFile.publicKeyBase64Url(keys);
      // No redirect followed: the endpoint is the subscriber's to choose, and a redirect would carry
      // the VAPID Authorization header wherever it pointed.
      sender = new PushSender(vertx, WebClient.create(vertx, new WebClientOptions().setUserAgent("switchboard")
          .setFollowRedirects(false)), keys, subject);
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

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(holdTimer);
    // The sends under way finish (each is bounded by PushSender's timeout) and are acknowledged.
    return current.transform(x -> Future.succeededFuture()).timeout(PushSender.TIMEOUT_MS + 2_000,
        java.util.concurrent.TimeUnit.MILLISECONDS).recover(x -> Future.succeededFuture());
  }

  private void drain() {
    if (draining) {
      again = true;
      return;
    }
    draining = true;
    again = false;
    Future<Boolean> run = bus.<JsonObject>request(Addresses.STORE_OUTBOX_PENDING, new JsonObject()
            .put("pluginId", OUTBOX).put("limit", BATCH))
        .compose(m -> sendBatch(m.body().getJsonArray("outputs").stream().map(o -> (JsonObject) o).toList()));
    current = run;
    run.onComplete(done -> {
      draining = false;
      if (done.failed()) {
        log.warn("push: the outbox could not be read ({})", done.cause().getMessage());
      }
      if (again || done.succeeded() && done.result()) {
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
    holds.values().stream().min(Long::compare).ifPresent(until -> holdTimer = vertx.setTimer(Math.max(1,
        until - now), t -> {
          holdTimer = -1;
          drain();
        }));
  }

  private record Pending(JsonObject out, JsonObject sub, String origin) {}

  /**
   * Sends a batch: each push service's pushes in outbox order, the services side by side (one that
   * hangs or holds never delays another's devices). True when a full batch sent something: there may be more.
   */
  private Future<Boolean> sendBatch(List<JsonObject> outputs) {
    List<Future<JsonObject>> lookups = new ArrayList<>();
    for (JsonObject out : outputs) {
      lookups.add(bus.<JsonObject>request(Addresses.STORE_PUSH_GET, new JsonObject().put("subscriptionId",
          out.getString("chatId"))).map(m -> m.body()));
    }
    return Future.all(lookups).compose(found -> {
      Map<String, List<Pending>> byService = new java.util.LinkedHashMap<>();
      List<Future<Boolean>> sends = new ArrayList<>();
      for (int i = 0; i < outputs.size(); i++) {
        JsonObject sub = found.<JsonObject>resultAt(i).getJsonObject("subscription");
        if (sub == null) {
          sends.add(ack(outputs.get(i).getString("outputId")).map(true)); // the device unsubscribed meanwhile
          continue;
        }
        String origin = PushSubscription.origin(sub.getString("endpoint"));
        byService.computeIfAbsent(origin, k -> new ArrayList<>()).add(new Pending(outputs.get(i), sub, origin));
      }
      byService.values().forEach(queue -> sends.add(sendInOrder(queue, 0)));
      return Future.join(sends).transform(x -> Future.succeededFuture(outputs.size() == BATCH
          && sends.stream().anyMatch(f -> f.succeeded() && f.result())));
    });
  }

  /** One push service's pushes, one at a time, until it holds them; true when one was settled. */
  private Future<Boolean> sendInOrder(List<Pending> queue, int i) {
    if (i >= queue.size() || holds.getOrDefault(queue.get(i).origin(), 0L) > System.currentTimeMillis()) {
      return Future.succeededFuture(i > 0);
    }
    return sendOne(queue.get(i)).compose(goOn -> goOn ? sendInOrder(queue, i + 1) : Future.succeededFuture(i > 0));
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
        long wait = Math.min(d.retryAfterMs(), MAX_HOLD_MS);
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
        holds.put(origin, System.currentTimeMillis() + (1000L << Math.min(n, 6)));
        log.info("push: a {} for device {} failed ({}); trying again in {} s", kind, device, d.reason(),
            1L << Math.min(n, 6));
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
