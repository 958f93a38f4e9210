package io.switchboard.web;

import io.switchboard.config.Settings;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.AuthenticationHandler;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.CSPHandler;
import io.vertx.ext.web.handler.FileSystemAccess;
import io.vertx.ext.web.handler.SimpleAuthenticationHandler;
import io.vertx.ext.web.handler.StaticHandler;
import io.vertx.ext.web.handler.XFrameHandler;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The web room's HTTP listener and router: request deadlines, security headers, the Host check,
 * which routes need a login (one authentication handler, with each route's own 401), the chat
 * page, and the {@code /ws/chat} upgrade. What each route answers lives in {@link Logins},
 * {@link RestApi} and {@link Readiness}.
 */
final class HttpEdge {
  private static final Logger log = LoggerFactory.getLogger(HttpEdge.class);
  /** A connection with nothing read or written for this long is closed (half-sent requests too). */
  static final int IDLE_TIMEOUT_SECONDS = 60;
  /** Netty's own limit is above the protocol's 1 MiB, so an oversized frame gets an error, not a hang-up. */
  private static final int TRANSPORT_FRAME_LIMIT = 4 * 1024 * 1024;
  private static final String LOG_IN = "log in or send a bearer token";

  private final Vertx vertx;
  private final Settings settings;
  private final WebRoom room;
  private final SocketHub hub;
  private final Logins logins;
  private final RequestDeadlines deadlines;
  /** The names this server answers to (Host header): anything else is refused, against DNS rebinding. */
  private Set<String> allowedHosts;

  HttpEdge(Vertx vertx, Settings settings, WebRoom room, SocketHub hub, Logins logins, long requestReadMs) {
    this.vertx = vertx;
    this.settings = settings;
    this.room = room;
    this.hub = hub;
    this.logins = logins;
    this.deadlines = new RequestDeadlines(vertx, requestReadMs);
  }

  /**
   * Listens on the configured host and port, answering to {@code hosts} with the page in
   * {@code pageFolder} (absolute, {@link PageFolder}) and its {@code policy}.
   */
  Future<HttpServer> listen(Set<String> hosts, Path pageFolder, CSPHandler policy, RestApi api, Readiness readiness) {
    allowedHosts = hosts;
    Router router = router(pageFolder, policy, api, readiness);
    HttpServerOptions options = new HttpServerOptions().setMaxWebSocketFrameSize(TRANSPORT_FRAME_LIMIT)
        .setMaxWebSocketMessageSize(TRANSPORT_FRAME_LIMIT)
        // A browser that stopped reading never answers our close: drop its connection (and the frames
        // it holds) after 2 s instead of the default 10.
        .setWebSocketClosingTimeout(2)
        .setIdleTimeout(IDLE_TIMEOUT_SECONDS).setIdleTimeoutUnit(TimeUnit.SECONDS)
        // No browser speaks HTTP/2 without TLS; without it, a connection is handed over (and its
        // request deadline starts) as it opens, not once its first request's bytes have come in.
        .setHttp2ClearTextEnabled(false);
    return vertx.createHttpServer(options).connectionHandler(deadlines::awaitRequest)
        .requestHandler(request -> {
          deadlines.requestIn(request);
          router.handle(request);
        })
        .listen(settings.http().port(), settings.http().host());
  }

  private Router router(Path pageFolder, CSPHandler policy, RestApi api, Readiness readiness) {
    Router router = Router.router(vertx);
    router.route().handler(deadlines::awaitNextRequest);
    router.route().handler(policy).handler(XFrameHandler.create(XFrameHandler.DENY)).handler(HttpEdge::moreHeaders);
    router.route().handler(this::checkHost);
    router.get("/healthz").handler(ctx -> json(ctx, 200, new JsonObject().put("status", "ok")));
    router.get("/readyz").handler(readiness::handle);
    // JSON only, and no file uploads: a multipart POST (any web page can send one) never reaches the disk.
    router.post("/api/login").handler(BodyHandler.create(false).setBodyLimit(4096)).handler(logins::loginAllowed)
        .handler(logins::login).failureHandler(ctx -> {
          if (!Logins.refusal(ctx, c -> json(c, 401, new JsonObject().put("error", "wrong token")))) {
            ctx.next();
          }
        });
    router.post("/api/logout").handler(logins::logout);
    // vertx-web's handler with our own check (a session cookie, or the token as a bearer): none of
    // its stock ones takes either of two credentials with the 401 bodies the API documents.
    AuthenticationHandler auth = SimpleAuthenticationHandler.create().authenticate(logins::authenticate);
    Handler<RoutingContext> logIn = ctx -> json(ctx, 401, new JsonObject().put("error", LOG_IN));
    loggedIn(router.get("/api/session"), auth, ctx -> json(ctx, 401, new JsonObject().put("authenticated", false)),
        api::session);
    loggedIn(router.get("/api/permissions"), auth, logIn, api::permissions);
    loggedIn(router.get("/api/agents"), auth, logIn, api::agents);
    loggedIn(router.get("/api/knocks"), auth, logIn, api::knocks);
    loggedIn(router.get("/api/reasons"), auth, logIn, api::reasons);
    loggedIn(router.get("/api/sessions"), auth, logIn, logins::listSessions);
    loggedIn(router.delete("/api/sessions/:id"), auth, logIn, logins::endSession);
    if (settings.http().publicMetrics()) {
      router.get("/metrics").handler(api::metrics);
    } else {
      loggedIn(router.get("/metrics"), auth, ctx -> json(ctx, 401, new JsonObject().put("error",
          "log in, send a bearer token, or set http.publicMetrics")), api::metrics);
    }
    // The socket is refused before the upgrade, so no frame is ever read from a client not let in.
    loggedIn(router.get("/ws/chat"), auth, ctx -> ctx.response().setStatusCode(401).end(LOG_IN), this::upgrade);
    router.get("/webjars/*").handler(StaticHandler.create("META-INF/resources/webjars").setCachingEnabled(true)
        .setMaxAgeSeconds(86_400));
    // From the classpath's copy, never a ./webroot in the working directory (PageFolder says why).
    router.get("/*").handler(StaticHandler.create(FileSystemAccess.ROOT, pageFolder.toString())
        .setIndexPage("index.html").setCachingEnabled(false));
    return router;
  }

  /**
   * {@code route} for a logged-in caller only; another gets {@code refused}'s 401, or a 429 when
   * its address sent too many wrong tokens.
   */
  private static void loggedIn(Route route, AuthenticationHandler auth,
      Handler<RoutingContext> refused, Handler<RoutingContext> handler) {
    route.handler(auth).handler(handler).failureHandler(ctx -> {
      if (!Logins.refusal(ctx, refused)) {
        ctx.next();
      }
    });
  }

  /** The headers vertx-web has no handler for (the CSP and X-Frame-Options come from its own). */
  private static void moreHeaders(RoutingContext ctx) {
    ctx.response().putHeader("X-Content-Type-Options", "nosniff").putHeader("Referrer-Policy", "no-referrer");
    // ES modules must be served as JavaScript; the webjars' .mjs files are not in Vert.x's MIME table.
    if (ctx.request().path().endsWith(".mjs")) {
      ctx.addHeadersEndHandler(v -> ctx.response().putHeader("Content-Type", "text/javascript; charset=utf-8"));
    } else if (ctx.request().path().endsWith(".webmanifest")) {
      // nosniff above: a manifest with no type of its own is read by luck, not by rule.
      ctx.addHeadersEndHandler(v -> ctx.response().putHeader("Content-Type", "application/manifest+json"));
    }
    ctx.next();
  }

  /** Refuses a request whose Host is not one of this server's names (a DNS-rebinding page uses its own). */
  private void checkHost(RoutingContext ctx) {
    var authority = ctx.request().authority();
    String host = authority == null ? null : authority.host();
    if (host == null || !allowedHosts.contains(HostCheck.normal(host))) {
      log.warn("refused a request for host {} from {}", host, ctx.request().remoteAddress());
      ctx.response().setStatusCode(421).putHeader("Content-Type", "text/plain; charset=utf-8")
          .end("this server does not answer to the host \"" + host + "\"; add it to http.allowedHosts\n");
      return;
    }
    ctx.next();
  }

  /** Checks the Origin (403) of a logged-in caller before the upgrade; no frame is read before. */
  private void upgrade(RoutingContext ctx) {
    HttpServerRequest request = ctx.request();
    String origin = request.getHeader("Origin");
    if (origin != null && !originAllowed(request, origin)) {
      log.warn("refused a chat socket from origin {}", origin);
      ctx.response().setStatusCode(403).end("origin " + origin + " is not allowed");
      return;
    }
    JsonObject login = ctx.user().principal(); // its "session" is null for the token itself (a script)
    HttpConnection connection = request.connection();
    request.toWebSocket().onSuccess(ws -> {
          deadlines.upgraded(connection);
          new ChatSocket(room, hub, vertx, ws, login).start();
        })
        .onFailure(err -> log.warn("chat socket upgrade failed: {}", err.getMessage()));
  }

  private boolean originAllowed(HttpServerRequest request, String origin) {
    String host = request.getHeader("Host");
    String scheme = behindHttpsProxy(request) ? "https" : "http";
    return origin.equals(scheme + "://" + host) || settings.http().allowedOrigins().contains(origin);
  }

  /**
   * Whether the request came through an HTTPS reverse proxy on this machine: X-Forwarded-Proto is
   * believed only from a loopback peer (a client elsewhere could send anything).
   */
  static boolean behindHttpsProxy(HttpServerRequest request) {
    var peer = request.remoteAddress();
    boolean local = peer != null && peer.hostAddress() != null && (peer.hostAddress().startsWith("127.")
        || peer.hostAddress().equals("0:0:0:0:0:0:0:1") || peer.hostAddress().equals("::1"));
    return local && "https".equals(request.getHeader("X-Forwarded-Proto"));
  }

  static void json(RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json")
        .putHeader("Cache-Control", "no-store").end(body.encode());
  }
}
