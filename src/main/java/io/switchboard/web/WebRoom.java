package io.switchboard.web;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.Bus;
import io.switchboard.config.Settings;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The web room: the HTTP listener. For now it answers {@code /healthz} and {@code /readyz}; the
 * chat page, login and {@code /ws/chat} come with the web-chat issue.
 */
public final class WebRoom extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(WebRoom.class);

  private final Settings.Http http;
  private HttpServer server;

  public WebRoom(Settings.Http http) {
    this.http = http;
  }

  @Override
  public Future<?> start() {
    Router router = Router.router(vertx);
    router.get("/healthz").handler(ctx -> json(ctx, 200, new JsonObject().put("status", "ok")));
    router.get("/readyz").handler(this::ready);
    server = vertx.createHttpServer();
    return server.requestHandler(router).listen(http.port(), http.host())
        .onSuccess(s -> log.info("HTTP listening on {}:{}", http.host(), s.actualPort()))
        .recover(err -> Future.failedFuture(new IllegalStateException(
            "cannot listen on " + http.host() + ":" + http.port() + ": " + err.getMessage(), err)));
  }

  /** The port actually bound (the configured one, or the free one picked for port 0). */
  public int boundPort() {
    return server.actualPort();
  }

  /** Ready when the rooms answer and the database takes a write; 503 with the reasons otherwise. */
  private void ready(RoutingContext ctx) {
    var bus = vertx.eventBus();
    Future<Object> store = bus.request(Addresses.STORE_HEALTH, new JsonObject(), Bus.quick()).map(m -> "ok");
    Future<Object> permission = bus.request(Addresses.PERMISSION_STATUS, new JsonObject(), Bus.quick()).map(m -> "ok");
    Future.join(store, permission).onComplete(all -> {
      JsonObject checks = new JsonObject()
          .put("database", verdict(store, "database not writable"))
          .put("permission", verdict(permission, "permission room not answering"));
      boolean ok = store.succeeded() && permission.succeeded();
      json(ctx, ok ? 200 : 503, new JsonObject().put("status", ok ? "ready" : "degraded").put("checks", checks));
    });
  }

  private static String verdict(Future<Object> check, String problem) {
    return check.succeeded() ? "ok" : problem + ": " + check.cause().getMessage();
  }

  private static void json(RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json")
        .putHeader("Cache-Control", "no-store").end(body.encode());
  }
}
