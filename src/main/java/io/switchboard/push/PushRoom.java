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
 * subscribed device) to the devices' push services, one at a time in outbox order, and
 * acknowledges each once its service took it. A device its service says is gone (404, 410) is
 * forgotten; a 429 or 503 holds every send for its {@code Retry-After}; other failures are tried
 * again with a growing pause, five times, then dropped (a push is a nudge, the card is the record).
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

  private final Path keyFile;
  private final String subject;
  private PushSender sender;
  private String publicKey;
  private EventBus bus;
  private boolean draining;
  private boolean again;
  /** No send before this (a 429's Retry-After, or a back-off after a failure). */
  private long holdUntil;
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
      sender = new PushSender(vertx, WebClient.create(vertx, new WebClientOptions().setUserAgent("switchboard")),
          keys, subject);
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

  private void drain() {
    if (draining) {
      again = true;
      return;
    }
    long wait = holdUntil - System.currentTimeMillis();
    if (wait > 0) {
      if (holdTimer < 0) {
        holdTimer = vertx.setTimer(wait, t -> {
          holdTimer = -1;
          drain();
        });
      }
      return;
    }
    draining = true;
    again = false;
    bus.<JsonObject>request(Addresses.STORE_OUTBOX_PENDING, new JsonObject().put("pluginId", OUTBOX).put("limit", 50))
        .compose(m -> sendAll(new ArrayList<>(m.body().getJsonArray("outputs").stream()
            .map(o -> (JsonObject) o).toList()), 0))
        .onComplete(done -> {
          draining = false;
          if (done.failed()) {
            log.warn("push: the outbox could not be read ({})", done.cause().getMessage());
          }
          if (again || done.succeeded() && done.result()) {
            drain();
          }
        });
  }

  /** Sends in order; true when there may be more to send now, false when held or done. */
  private Future<Boolean> sendAll(List<JsonObject> outputs, int i) {
    if (i >= outputs.size()) {
      return Future.succeededFuture(outputs.size() == 50);
    }
    JsonObject out = outputs.get(i);
    return sendOne(out).compose(goOn -> goOn ? sendAll(outputs, i + 1) : Future.succeededFuture(false));
  }

  private Future<Boolean> sendOne(JsonObject out) {
    String outputId = out.getString("outputId");
    String device = out.getString("chatId");
    return bus.<JsonObject>request(Addresses.STORE_PUSH_GET, new JsonObject().put("subscriptionId", device))
        .compose(m -> {
          JsonObject sub = m.body().getJsonObject("subscription");
          if (sub == null) {
            return ack(outputId).map(true); // the device unsubscribed meanwhile
          }
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
              .compose(d -> settled(outputId, device, kind, d));
        });
  }

  private Future<Boolean> settled(String outputId, String device, String kind, Delivery d) {
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
        log.warn("push: the push service asks to wait {} before the next push", Waiting.duration(d.retryAfterMs()));
        holdUntil = System.currentTimeMillis() + d.retryAfterMs();
        return Future.succeededFuture(false);
      }
      default -> {
        int n = attempts.merge(outputId, 1, Integer::sum);
        if (n >= MAX_ATTEMPTS) {
          log.warn("push: a {} for device {} failed {} times ({}); dropped", kind, device, n, d.reason());
          attempts.remove(outputId);
          return ack(outputId).map(true);
        }
        holdUntil = System.currentTimeMillis() + (1000L << Math.min(n, 6));
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
