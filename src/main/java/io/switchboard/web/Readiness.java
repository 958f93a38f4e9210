package io.switchboard.web;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.Bus;
import io.switchboard.cluster.RouterClient;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.List;

/**
 * {@code GET /readyz}: 200 {@code ready} when every room answers and the database takes a write,
 * else 503 {@code degraded} with each failing check named (docs/operations.md). Written here rather
 * than with vertx-health-check's {@code HealthCheckHandler}, whose body ({@code "status":"UP"}, a
 * list of checks, an {@code outcome}) is not the documented one.
 */
final class Readiness {
  static final long STORE_HEALTH_TTL_MS = 5_000;
  private final Vertx vertx;
  private final RouterClient nodes;
  private final long outboxStuckMs;
  /** When the store last took its health write (event loop only). */
  private long storeHealthyAt;

  Readiness(Vertx vertx, RouterClient nodes, long outboxStuckMs) {
    this.vertx = vertx;
    this.nodes = nodes;
    this.outboxStuckMs = outboxStuckMs;
  }

  /** Ready when the rooms answer and the database takes a write; 503 with the reasons otherwise. */
  void handle(RoutingContext ctx) {
    var bus = vertx.eventBus();
    // The store's check is a write: an unauthenticated caller may not make one per request, so a
    // success counts for a few seconds.
    long asked = System.currentTimeMillis();
    Future<Object> store = asked - storeHealthyAt < STORE_HEALTH_TTL_MS ? Future.succeededFuture("ok")
        : nodes.ask(Addresses.STORE_HEALTH, new JsonObject(), Bus.quick()).map(m -> {
          storeHealthyAt = Math.max(storeHealthyAt, asked);
          return "ok";
        });
    Future<Object> permission = answers(Addresses.PERMISSION_STATUS);
    Future<Object> threads = answers(Addresses.THREAD_LIST);
    Future<Object> agents = answers(Addresses.AGENT_STATUS);
    Future<Object> plugins = bus.<JsonObject>request(Addresses.PLUGIN_STATUS, new JsonObject(), Bus.quick())
        .compose(m -> {
          List<String> givenUp = m.body().getJsonArray("plugins").stream().map(p -> (JsonObject) p)
              .filter(p -> "GIVEN_UP".equals(p.getString("state"))).map(p -> p.getString("id")).toList();
          return givenUp.isEmpty() ? Future.succeededFuture("ok")
              : Future.failedFuture("given up after failing too often: " + String.join(", ", givenUp));
        });
    long now = System.currentTimeMillis();
    Future<Object> outbox = nodes.ask(Addresses.STORE_OUTBOX_STATS, new JsonObject(), Bus.quick())
        .compose(m -> {
          List<String> stuck = m.getJsonArray("plugins").stream().map(p -> (JsonObject) p)
              .filter(p -> now - p.getLong("oldestCreatedAt") > outboxStuckMs)
              // A slow push service is somebody else's; the push room gives up on a message by itself.
              .filter(p -> !p.getString("pluginId").startsWith("_"))
              .map(p -> p.getString("pluginId") + " (" + (now - p.getLong("oldestCreatedAt")) / 1000 + " s)").toList();
          return stuck.isEmpty() ? Future.succeededFuture("ok")
              : Future.failedFuture("unacknowledged outputs older than " + outboxStuckMs / 1000 + " s for "
                  + String.join(", ", stuck));
        });
    Future.join(List.of(store, permission, threads, agents, plugins, outbox)).onComplete(all -> {
      JsonObject checks = new JsonObject()
          .put("outbox", verdict(outbox, "outbox"))
          .put("database", verdict(store, "database not writable"))
          .put("permission", verdict(permission, "permission room not answering"))
          .put("threads", verdict(threads, "thread room not answering"))
          .put("agents", verdict(agents, "agent room not answering"))
          .put("plugins", verdict(plugins, "plugins"));
      boolean ok = all.succeeded();
      HttpEdge.json(ctx, ok ? 200 : 503, new JsonObject().put("status", ok ? "ready" : "degraded").put("checks", checks));
    });
  }

  /** A room's check: it answers its status question in time. */
  private Future<Object> answers(String address) {
    return nodes.ask(address, new JsonObject(), Bus.quick()).map(m -> "ok");
  }

  private static String verdict(Future<Object> check, String problem) {
    return check.succeeded() ? "ok" : problem + ": " + check.cause().getMessage();
  }
}
