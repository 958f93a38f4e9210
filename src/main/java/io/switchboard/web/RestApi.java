package io.switchboard.web;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.Bus;
import io.switchboard.cluster.RouterClient;
import io.switchboard.permission.CancelReason;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * The answers of {@code /api/*} and {@code /metrics} once a request is let in ({@link HttpEdge}
 * mounts the authentication in front of them): the ledger, the agent pool, the reasons, the knocks,
 * and the Prometheus text.
 */
final class RestApi {
  private final Vertx vertx;
  private final RouterClient nodes;
  private final SocketHub hub;

  RestApi(Vertx vertx, RouterClient nodes, SocketHub hub) {
    this.vertx = vertx;
    this.nodes = nodes;
    this.hub = hub;
  }

  void session(RoutingContext ctx) {
    HttpEdge.json(ctx, 200, new JsonObject().put("authenticated", true));
  }

  void permissions(RoutingContext ctx) {
    String state = ctx.request().getParam("state", "pending");
    String limitParam = ctx.request().getParam("limit", "100");
    int limit;
    try {
      limit = Integer.parseInt(limitParam);
    } catch (NumberFormatException e) {
      limit = -1;
    }
    if (!state.equals("pending") && !state.equals("all") || limit < 1 || limit > 10_000) {
      HttpEdge.json(ctx, 400, new JsonObject().put("error", "state must be pending or all, limit 1..10000"));
      return;
    }
    nodes.ask(Addresses.STORE_LEDGER_LIST, new JsonObject().put("state", state).put("limit", limit).put("events", true))
        .onSuccess(reply -> HttpEdge.json(ctx, 200, reply))
        .onFailure(err -> HttpEdge.json(ctx, 500, new JsonObject().put("error", err.getMessage())));
  }

  /** The agent processes: how many run of how many allowed, their memory, prompts waiting for a slot. */
  void agents(RoutingContext ctx) {
    nodes.ask(Addresses.AGENT_STATUS, new JsonObject(), Bus.quick())
        .onSuccess(s -> {
          JsonObject body = new JsonObject().put("processes", s.getLong("processes"))
              .put("maxProcesses", s.getInteger("maxProcesses")).put("rssBytes", s.getLong("rssBytes"))
              .put("queuedPrompts", s.getInteger("queuedPrompts")).put("idleStops", s.getLong("idleStops"))
              .put("evictions", s.getLong("evictions")).put("idleStopSeconds", s.getLong("idleStopSeconds"))
              .put("running", s.getJsonArray("running")).put("sandbox", s.getString("sandbox"));
          if (s.getJsonObject("nodes") != null) {
            body.put("nodes", s.getJsonObject("nodes")); // cluster mode: each agent node's own figures
          }
          HttpEdge.json(ctx, 200, body);
        })
        .onFailure(err -> HttpEdge.json(ctx, 503, new JsonObject().put("error", "the agent room did not answer: "
            + err.getMessage())));
  }

  /** Why a question ended without an answer, in words: the page says them as the IM chats do. */
  void reasons(RoutingContext ctx) {
    HttpEdge.json(ctx, 200, new JsonObject().put("reasons", CancelReason.all()));
  }

  /** Who wrote to a plugin without being let in (plugins[].users), for the operator to admit. */
  void knocks(RoutingContext ctx) {
    vertx.eventBus().<JsonObject>request(Addresses.PLUGIN_STATUS, new JsonObject(), Bus.quick())
        .onSuccess(reply -> HttpEdge.json(ctx, 200, new JsonObject().put("knocks",
            reply.body().getJsonArray("knocks", new JsonArray()))))
        .onFailure(err -> HttpEdge.json(ctx, 503, new JsonObject().put("error", "the plugin room did not answer: "
            + err.getMessage())));
  }

  /** Prometheus text (the token is asked for in front of it unless {@code http.publicMetrics}). */
  void metrics(RoutingContext ctx) {
    vertx.eventBus().<String>request(Addresses.METRICS_SCRAPE, new JsonObject().put("websockets", hub.openCount()))
        .onSuccess(m -> ctx.response().putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            .end(m.body()))
        .onFailure(err -> HttpEdge.json(ctx, 503, new JsonObject().put("error", err.getMessage())));
  }
}
