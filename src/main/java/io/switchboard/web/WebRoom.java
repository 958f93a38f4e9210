package io.switchboard.web;

import io.switchboard.bus.Addresses;
import io.switchboard.common.Lru;
import io.switchboard.common.RandomIds;
import io.switchboard.bus.Bus;
import io.switchboard.cluster.AgentNodes;
import io.switchboard.bus.ErrorCode;
import io.switchboard.config.AccessToken;
import io.switchboard.config.Limits;
import io.switchboard.config.Settings;
import io.switchboard.permission.CancelReason;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.StaticHandler;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The web room: the HTTP listener, the chat page, login, {@code /api/*} and the {@code /ws/chat}
 * sockets. It is the {@code web} surface of the permission room: a card goes to every socket
 * attached to its thread, and a browser tab that closes does not close the surface.
 */
public final class WebRoom extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(WebRoom.class);
  static final String SURFACE = "web";
  static final String COOKIE = "sb_session";
  private static final int MAX_SESSIONS = 1_000;
  /** A browser session lasts this long after its login (then the page asks for the token again). */
  static final long SESSION_MS = 7L * 24 * 3600 * 1000;
  /** Failed logins a client address may make per minute; then 429 until the minute is over. */
  static final int LOGIN_FAILURES_PER_MINUTE = 10;
  /** A connection with nothing read or written for this long is closed (half-sent requests too). */
  static final int IDLE_TIMEOUT_SECONDS = 60;
  /** How long a connection may take to send a whole request: from its opening, or its previous response's end. */
  public static final long REQUEST_READ_MS = 10_000;
  /** How often the token file is looked at: a rotation ends every login and socket. */
  static final long TOKEN_CHECK_MS = 2_000;
  /** Netty's own limit is above the protocol's 1 MiB, so an oversized frame gets an error, not a hang-up. */
  private static final int TRANSPORT_FRAME_LIMIT = 4 * 1024 * 1024;

  private final Settings settings;
  private final String version;
  /** The Content-Security-Policy, from the served index.html at start ({@link PagePolicy}). */
  private String csp;
  private HttpServer server;
  private String token;
  private final RandomIds ids = new RandomIds();
  /** Browser sessions (SHA-256 of the cookie -> created at), oldest dropped first; saved in the database. */
  private final Map<String, Long> sessions = Lru.map(MAX_SESSIONS, true);
  /** threadId -> the sockets attached to it, and the bus consumer feeding them. */
  private final Map<String, Set<ChatSocket>> attached = new HashMap<>();
  private final Map<String, MessageConsumer<JsonObject>> threadConsumers = new HashMap<>();

  private final long outboxStuckMs;
  private final long requestReadMs;
  /**
   * Connections whose next request has not arrived in full, and the timer that closes them: a client
   * that trickles its headers or body (one byte a minute stays under the idle timeout) holds a
   * descriptor for {@link #REQUEST_READ_MS} at most, as a keep-alive connection left idle does.
   */
  private final Map<HttpConnection, Long> awaitingRequest = new HashMap<>();
  /** Connections that became chat sockets: never held to the request deadline again. */
  private final Set<HttpConnection> upgraded = new HashSet<>();
  /** The open /ws/chat sockets (closed ones may still hold frames until their connection goes). */
  private final Set<ChatSocket> open = new HashSet<>();
  private String encodedKey;
  private long queuedBytes;
  /** An eighth of the heap, at most 64 MiB: what frames waiting for slow readers may take in all. */
  /** What may wait to be sent to all sockets together ({@code Limits#socketsQueueBytes}). */
  private final long queueBudget;
  private final Limits limits;
  private String encodedText;
  /** Client address -> failed logins in the current minute (and when that minute began). */
  private final Map<String, long[]> loginFailures = Lru.map(10_000, true);
  /** The names this server answers to (Host header): anything else is refused, against DNS rebinding. */
  private Set<String> allowedHosts;

  /** How this room reaches the agent side (the agent nodes, in a cluster). */
  private AgentNodes nodes;

  public WebRoom(Settings settings, Limits limits, String version, long outboxStuckMs, long requestReadMs) {
    this.requestReadMs = requestReadMs;
    this.settings = settings;
    this.limits = limits;
    this.queueBudget = limits.socketsQueueBytes();
    this.version = version;
    this.outboxStuckMs = outboxStuckMs;
  }

  @Override
  public Future<?> start() {
    nodes = new AgentNodes(vertx, settings.cluster() != null);
    Router router = Router.router(vertx);
    router.route().handler(this::awaitNextRequest);
    router.route().handler(this::securityHeaders);
    router.route().handler(this::checkHost);
    router.get("/healthz").handler(ctx -> json(ctx, 200, new JsonObject().put("status", "ok")));
    router.get("/readyz").handler(this::ready);
    // JSON only, and no file uploads: a multipart POST (any web page can send one) never reaches the disk.
    router.post("/api/login").handler(BodyHandler.create(false).setBodyLimit(4096)).handler(this::loginAllowed)
        .handler(this::login);
    router.post("/api/logout").handler(this::logout);
    router.get("/api/session").handler(ctx -> json(ctx, authenticated(ctx.request()) ? 200 : 401,
        new JsonObject().put("authenticated", authenticated(ctx.request()))));
    router.get("/api/permissions").handler(this::permissions);
    router.get("/api/agents").handler(this::agents);
    router.get("/api/knocks").handler(this::knocks);
    router.get("/api/reasons").handler(this::reasons);
    router.get("/metrics").handler(this::metrics);
    router.get("/ws/chat").handler(this::upgrade);
    router.get("/webjars/*").handler(StaticHandler.create("META-INF/resources/webjars").setCachingEnabled(true)
        .setMaxAgeSeconds(86_400));
    router.get("/*").handler(StaticHandler.create("webroot").setIndexPage("index.html").setCachingEnabled(false));

    var bus = vertx.eventBus();
    bus.<JsonObject>consumer(Addresses.PERMISSION_SHOWN, m -> shown(m.body()));
    bus.<JsonObject>consumer(Addresses.PERMISSION_RESOLVED, m -> ended(m.body()));
    bus.<JsonObject>consumer(Addresses.PERMISSION_CANCELLED, m -> ended(m.body()));
    // Every open page hears of new threads and of each thread's waiting questions, attached or not.
    bus.<JsonObject>consumer(Addresses.THREAD_CHANGED, m -> threadChanged(m.body()));
    // Cluster mode: every page hears at once that a node left, not only at its next request's timeout.
    Future<Void> nodesKnown = nodes.start(this::memberChanged, node -> resync(node, "agent node " + node, 1),
        this::relistThreads);
    nodesKnown.compose(v -> nodes.ask(Addresses.PERMISSION_PENDING, new JsonObject())).onSuccess(reply -> {
      for (Object o : reply.getJsonArray("requests")) {
        JsonObject card = (JsonObject) o;
        pending.computeIfAbsent(card.getString("threadId"), id -> new HashSet<>()).add(card.getString("requestId"));
      }
      pending.forEach((threadId, ids) -> pendingAnnounced.put(threadId, ids.size()));
    });

    HttpServerOptions options = new HttpServerOptions().setMaxWebSocketFrameSize(TRANSPORT_FRAME_LIMIT)
        .setMaxWebSocketMessageSize(TRANSPORT_FRAME_LIMIT)
        // A browser that stopped reading never answers our close: drop its connection (and the frames
        // it holds) after 2 s instead of the default 10.
        .setWebSocketClosingTimeout(2)
        .setIdleTimeout(IDLE_TIMEOUT_SECONDS).setIdleTimeoutUnit(java.util.concurrent.TimeUnit.SECONDS)
        // No browser speaks HTTP/2 without TLS; without it, a connection is handed over (and its
        // request deadline starts) as it opens, not once its first request's bytes have come in.
        .setHttp2ClearTextEnabled(false);
    server = vertx.createHttpServer(options).connectionHandler(this::awaitRequest);
    return vertx.executeBlocking(() -> HostCheck.allowed(settings.http()), false)
        .onSuccess(names -> allowedHosts = names)
        .compose(names -> nodesKnown)
        .compose(v -> nodes.ask(Addresses.STORE_WEB_SESSION_LIST, new JsonObject()))
        .onSuccess(reply -> restoreSessions(reply.getJsonArray("sessions")))
        .compose(x -> vertx.fileSystem().readFile(settings.tokenFile().toString()))
        .map(buffer -> token = buffer.toString().trim())
        .onSuccess(t -> vertx.setPeriodic(TOKEN_CHECK_MS, id -> checkToken()))
        .compose(t -> vertx.fileSystem().readFile("webroot/index.html"))
        .onSuccess(page -> csp = PagePolicy.forPage(page.toString()))
        .compose(t -> server.requestHandler(request -> {
          // Read in full (the headers, and the body if any): the connection's deadline is lifted.
          HttpConnection connection = request.connection();
          arrived(request).onComplete(x -> requestRead(connection));
          router.handle(request);
        }).listen(settings.http().port(), settings.http().host()))
        .onSuccess(s -> log.info("HTTP listening on {}:{}", settings.http().host(), s.actualPort()))
        .recover(err -> Future.failedFuture(new IllegalStateException(
            "cannot listen on " + settings.http().host() + ":" + settings.http().port() + ": " + err.getMessage(), err)));
  }

  /** Starts the deadline for a connection's next request to arrive in full. */
  private void awaitRequest(HttpConnection connection) {
    if (upgraded.contains(connection)) {
      return;
    }
    long timer = vertx.setTimer(requestReadMs, t -> {
      if (awaitingRequest.remove(connection) != null) {
        connection.close();
      }
    });
    Long earlier = awaitingRequest.put(connection, timer);
    if (earlier == null) {
      connection.closeHandler(v -> {
        requestRead(connection);
        upgraded.remove(connection);
      });
    } else {
      vertx.cancelTimer(earlier);
    }
  }

  private void requestRead(HttpConnection connection) {
    Long timer = awaitingRequest.remove(connection);
    if (timer != null) {
      vertx.cancelTimer(timer);
    }
  }

  /**
   * When a request has arrived whole: a GET or HEAD (the chat socket's upgrade among them) once its
   * headers are in; another once its body is. (A paused, then upgraded, request may never "end".)
   */
  private static Future<Void> arrived(io.vertx.core.http.HttpServerRequest request) {
    return request.method() == io.vertx.core.http.HttpMethod.GET || request.method() == io.vertx.core.http.HttpMethod.HEAD
        ? Future.succeededFuture() : request.end();
  }

  /**
   * Once answered, a kept-alive connection has the same time for its next request. Only a connection
   * that became a web socket (101) never does: an Upgrade header alone (a refused upgrade, or one
   * sent to any route) changes nothing.
   */
  private void awaitNextRequest(RoutingContext ctx) {
    HttpConnection connection = ctx.request().connection();
    // After this request's end too (it may come after the answer): that lifts its own deadline.
    ctx.addEndHandler(x -> {
      if (ctx.response().getStatusCode() != 101) {
        arrived(ctx.request()).onComplete(y -> awaitRequest(connection));
      }
    });
    ctx.next();
  }

  /** Sessions saved before a restart, the expired ones forgotten. */
  private void restoreSessions(io.vertx.core.json.JsonArray saved) {
    long now = System.currentTimeMillis();
    for (Object o : saved) {
      JsonObject row = (JsonObject) o;
      if (now - row.getLong("createdAt") > SESSION_MS) {
        forgetSessions(new JsonObject().put("hash", row.getString("hash")));
      } else {
        sessions.put(row.getString("hash"), row.getLong("createdAt"));
      }
    }
  }

  /** What may wait to be sent to one socket before it is closed as too slow ({@code Limits#socketQueueBytes}). */
  int socketQueueBytes() {
    return limits.socketQueueBytes();
  }

  /** The port actually bound (the configured one, or the free one picked for port 0). */
  public int boundPort() {
    return server.actualPort();
  }

  String version() {
    return version;
  }

  Settings settings() {
    return settings;
  }

  // ---- HTTP ----

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

  /** JSON only (415), and not while the address has failed too often (429). */
  private void loginAllowed(RoutingContext ctx) {
    String type = ctx.request().getHeader("Content-Type");
    if (type == null || !type.toLowerCase(java.util.Locale.ROOT).startsWith("application/json")) {
      json(ctx, 415, new JsonObject().put("error", "send {\"token\": \"...\"} as application/json"));
      return;
    }
    long[] failures = loginFailures.get(clientAddress(ctx));
    if (failures != null && System.currentTimeMillis() - failures[1] < 60_000
        && failures[0] >= LOGIN_FAILURES_PER_MINUTE) {
      ctx.response().putHeader("Retry-After", "60");
      json(ctx, 429, new JsonObject().put("error", "too many wrong tokens from this address; wait a minute"));
      return;
    }
    ctx.next();
  }

  private void loginFailed(RoutingContext ctx) {
    long now = System.currentTimeMillis();
    long[] failures = loginFailures.computeIfAbsent(clientAddress(ctx), a -> new long[] {0, now});
    if (now - failures[1] >= 60_000) {
      failures[0] = 0;
      failures[1] = now;
    }
    failures[0]++;
  }

  private static String clientAddress(RoutingContext ctx) {
    var address = ctx.request().remoteAddress();
    return address == null ? "?" : address.hostAddress();
  }

  /** A rotated token (its file changed) ends every login and socket: the old token stops working now. */
  private void checkToken() {
    vertx.fileSystem().readFile(settings.tokenFile().toString()).onSuccess(buffer -> {
      String now = buffer.toString().trim();
      if (!now.isEmpty() && !now.equals(token)) {
        log.warn("the access token was rotated: every browser session and chat socket ends");
        token = now;
        sessions.clear();
        forgetSessions(new JsonObject().put("all", true));
        for (ChatSocket s : new ArrayList<>(open)) {
          s.closeUnauthorized("the access token was rotated");
        }
      }
    });
  }

  private void securityHeaders(RoutingContext ctx) {
    ctx.response().putHeader("Content-Security-Policy", csp)
        .putHeader("X-Content-Type-Options", "nosniff")
        .putHeader("X-Frame-Options", "DENY")
        .putHeader("Referrer-Policy", "no-referrer");
    // ES modules must be served as JavaScript; the webjars' .mjs files are not in Vert.x's MIME table.
    if (ctx.request().path().endsWith(".mjs")) {
      ctx.addHeadersEndHandler(v -> ctx.response().putHeader("Content-Type", "text/javascript; charset=utf-8"));
    }
    ctx.next();
  }

  private void login(RoutingContext ctx) {
    JsonObject body;
    try {
      body = ctx.body().asJsonObject();
    } catch (DecodeException | ClassCastException e) {
      body = null;
    }
    if (body == null || !(body.getValue("token") instanceof String given)) {
      json(ctx, 400, new JsonObject().put("error", "send {\"token\": \"...\"}"));
      return;
    }
    if (!AccessToken.matches(token, given.trim())) {
      log.warn("login refused from {}: wrong token", ctx.request().remoteAddress());
      loginFailed(ctx);
      json(ctx, 401, new JsonObject().put("error", "wrong token"));
      return;
    }
    String session = ids.next("", 32);
    long now = System.currentTimeMillis();
    String hash = sessionHash(session);
    sessions.put(hash, now);
    // Kept by its hash, so a restart does not log everyone out and the database never holds a cookie.
    vertx.eventBus().request(Addresses.STORE_WEB_SESSION_SAVE, new JsonObject().put("hash", hash).put("createdAt", now))
        .onComplete(saved -> {
          if (saved.failed()) {
            log.warn("a browser session could not be saved (it lasts until the next restart): {}",
                saved.cause().getMessage());
          }
          ctx.response().addCookie(Cookie.cookie(COOKIE, session).setHttpOnly(true).setSameSite(CookieSameSite.STRICT)
              .setPath("/").setSecure(behindHttpsProxy(ctx.request())));
          ctx.response().setStatusCode(204).end();
        });
  }

  /** What identifies a session in memory and in the database: the SHA-256 of its cookie. */
  static String sessionHash(String cookie) {
    return io.switchboard.common.Sha256.hex(cookie);
  }

  private void forgetSessions(JsonObject which) {
    vertx.eventBus().request(Addresses.STORE_WEB_SESSION_FORGET, which)
        .onFailure(err -> log.warn("browser sessions could not be forgotten in the database: {}", err.getMessage()));
  }

  private void logout(RoutingContext ctx) {
    Cookie cookie = ctx.request().getCookie(COOKIE);
    String hash = cookie == null ? null : sessionHash(cookie.getValue());
    if (hash != null && sessions.remove(hash) != null) {
      forgetSessions(new JsonObject().put("hash", hash));
      for (ChatSocket s : new ArrayList<>(open)) {
        if (hash.equals(s.session())) {
          s.closeUnauthorized("logged out");
        }
      }
    }
    ctx.response().addCookie(Cookie.cookie(COOKIE, "").setMaxAge(0).setPath("/").setHttpOnly(true)
        .setSameSite(CookieSameSite.STRICT));
    ctx.response().setStatusCode(204).end();
  }

  /** A browser session cookie, or {@code Authorization: Bearer <token>} for scripts. */
  boolean authenticated(HttpServerRequest request) {
    if (bearer(request)) {
      return AccessToken.matches(token, request.getHeader("Authorization").substring(7).trim());
    }
    Cookie cookie = request.getCookie(COOKIE);
    if (cookie == null) {
      return false;
    }
    String hash = sessionHash(cookie.getValue());
    Long created = sessions.get(hash);
    if (created != null && System.currentTimeMillis() - created > SESSION_MS) {
      sessions.remove(hash); // expired: log in again
      forgetSessions(new JsonObject().put("hash", hash));
      return false;
    }
    return created != null;
  }

  private static boolean bearer(HttpServerRequest request) {
    String auth = request.getHeader("Authorization");
    return auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7);
  }

  private void permissions(RoutingContext ctx) {
    if (!authenticated(ctx.request())) {
      json(ctx, 401, new JsonObject().put("error", "log in or send a bearer token"));
      return;
    }
    String state = ctx.request().getParam("state", "pending");
    String limitParam = ctx.request().getParam("limit", "100");
    int limit;
    try {
      limit = Integer.parseInt(limitParam);
    } catch (NumberFormatException e) {
      limit = -1;
    }
    if (!state.equals("pending") && !state.equals("all") || limit < 1 || limit > 10_000) {
      json(ctx, 400, new JsonObject().put("error", "state must be pending or all, limit 1..10000"));
      return;
    }
    nodes.ask(Addresses.STORE_LEDGER_LIST, new JsonObject().put("state", state).put("limit", limit))
        .onSuccess(reply -> json(ctx, 200, reply))
        .onFailure(err -> json(ctx, 500, new JsonObject().put("error", err.getMessage())));
  }

  /** The agent processes: how many run of how many allowed, their memory, prompts waiting for a slot. */
  private void agents(RoutingContext ctx) {
    if (!authenticated(ctx.request())) {
      json(ctx, 401, new JsonObject().put("error", "log in or send a bearer token"));
      return;
    }
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
          json(ctx, 200, body);
        })
        .onFailure(err -> json(ctx, 503, new JsonObject().put("error", "the agent room did not answer: "
            + err.getMessage())));
  }

  /** Why a question ended without an answer, in words: the page says them as the IM chats do. */
  private void reasons(RoutingContext ctx) {
    if (!authenticated(ctx.request())) {
      json(ctx, 401, new JsonObject().put("error", "log in or send a bearer token"));
      return;
    }
    json(ctx, 200, new JsonObject().put("reasons", CancelReason.all()));
  }

  /** Who wrote to a plugin without being let in (plugins[].users), for the operator to admit. */
  private void knocks(RoutingContext ctx) {
    if (!authenticated(ctx.request())) {
      json(ctx, 401, new JsonObject().put("error", "log in or send a bearer token"));
      return;
    }
    vertx.eventBus().<JsonObject>request(Addresses.PLUGIN_STATUS, new JsonObject(), Bus.quick())
        .onSuccess(reply -> json(ctx, 200, new JsonObject().put("knocks",
            reply.body().getJsonArray("knocks", new io.vertx.core.json.JsonArray()))))
        .onFailure(err -> json(ctx, 503, new JsonObject().put("error", "the plugin room did not answer: "
            + err.getMessage())));
  }

  static final long STORE_HEALTH_TTL_MS = 5_000;
  /** When the store last took its health write (event loop only). */
  private long storeHealthyAt;

  /** Ready when the rooms answer and the database takes a write; 503 with the reasons otherwise. */
  private void ready(RoutingContext ctx) {
    var bus = vertx.eventBus();
    // The store's check is a write: an unauthenticated caller may not make one per request, so a
    // success counts for a few seconds.
    long asked = System.currentTimeMillis();
    Future<Object> store = asked - storeHealthyAt < STORE_HEALTH_TTL_MS ? Future.succeededFuture("ok")
        : nodes.ask(Addresses.STORE_HEALTH, new JsonObject(), Bus.quick()).map(m -> {
          storeHealthyAt = Math.max(storeHealthyAt, asked);
          return "ok";
        });
    Future<Object> permission = nodes.ask(Addresses.PERMISSION_STATUS, new JsonObject(), Bus.quick()).map(m -> "ok");
    Future<Object> threads = nodes.ask(Addresses.THREAD_LIST, new JsonObject(), Bus.quick()).map(m -> "ok");
    Future<Object> agents = nodes.ask(Addresses.AGENT_STATUS, new JsonObject(), Bus.quick()).map(m -> "ok");
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
      json(ctx, ok ? 200 : 503, new JsonObject().put("status", ok ? "ready" : "degraded").put("checks", checks));
    });
  }

  private static String verdict(Future<Object> check, String problem) {
    return check.succeeded() ? "ok" : problem + ": " + check.cause().getMessage();
  }

  /** Prometheus text; needs the token unless {@code http.publicMetrics}. */
  private void metrics(RoutingContext ctx) {
    if (!settings.http().publicMetrics() && !authenticated(ctx.request())) {
      json(ctx, 401, new JsonObject().put("error", "log in, send a bearer token, or set http.publicMetrics"));
      return;
    }
    vertx.eventBus().<String>request(Addresses.METRICS_SCRAPE, new JsonObject().put("websockets", open.size()))
        .onSuccess(m -> ctx.response().putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            .end(m.body()))
        .onFailure(err -> json(ctx, 503, new JsonObject().put("error", err.getMessage())));
  }

  /**
   * Cluster mode: a member left or joined. Pages hear at once that one left; when it is an agent
   * node, the cards of its requests cannot be answered (its ledger is there) and are marked stale,
   * and when it is back, the ones its ledger still has pending are answerable again (the others end
   * with the facts a restarted node announces).
   */
  private void memberChanged(JsonObject member) {
    String node = member.getString("node", member.getString("address"));
    String who = member.getString("role", "a") + " node " + node;
    boolean agentNode = "agent".equals(member.getString("role"));
    if ("left".equals(member.getString("event"))) {
      if (agentNode && nodes.isLive(node)) {
        return; // an earlier start of it, heard leaving after the new one joined (the router kept it)
      }
      String reason = who + " left the cluster: what it runs does not answer until it is back";
      toAllPages(new JsonObject().put("type", "error").put("code", ErrorCode.UNAVAILABLE.wireName)
          .put("message", reason));
      JsonArray ids = new JsonArray();
      pending.values().forEach(set -> set.stream().filter(id -> node.equals(nodes.ownerOfRequest(id))).forEach(ids::add));
      if (agentNode && !ids.isEmpty()) {
        toAllPages(new JsonObject().put("type", "permission_stale").put("stale", true).put("requestIds", ids)
            .put("reason", reason).put("node", node));
      }
    } else if (agentNode) {
      resync(node, who, 60);
    }
  }

  /** A thread as it is now, to every open page. */
  private void threadChanged(JsonObject thread) {
    JsonObject frame = new JsonObject().put("type", "thread").put("threadId", thread.getString("threadId"))
        .put("agent", thread.getString("agent")).put("title", thread.getString("title"))
        .mergeIn(nodeOf(thread))
        .put("archived", thread.getBoolean("archived", false));
    if (thread.getBoolean("deleted", false)) {
      frame.put("deleted", true);
    }
    String text = frame.encode();
    new ArrayList<>(open).forEach(s -> s.notice(text));
  }

  /** Some thread facts of an agent node were missed: every page gets its threads as they are now. */
  private void relistThreads(String node) {
    nodes.relistThreads(node).onSuccess(reply -> {
      reply.getJsonArray("threads").forEach(t -> threadChanged((JsonObject) t));
      reply.getJsonArray("vanished").forEach(id -> threadChanged(new JsonObject().put("threadId", id)
          .put("node", node).put("deleted", true)));
      log.info("agent node {}: {} threads listed again on every page, {} deleted unheard", node,
          reply.getJsonArray("threads").size(), reply.getJsonArray("vanished").size());
    }).onFailure(err -> log.warn("agent node {} did not list its threads: {}", node, err.getMessage()));
  }

  private void shown(JsonObject card) {
    toThread(card.getString("threadId"), s -> s.card(card));
    pendingChanged(card.getString("threadId"), card.getString("requestId"), true);
  }

  private void ended(JsonObject fact) {
    toThread(fact.getString("threadId"), s -> s.resolved(fact));
    pendingChanged(fact.getString("threadId"), fact.getString("requestId"), false);
  }

  /**
   * Makes the pages agree with an agent node's permission room, after it joined (again) or after
   * some of its facts were missed: its pending requests are answerable (their stale mark lifted,
   * and shown if never heard of), and the cards the pages hold of it that it no longer has end as
   * its ledger says. Asks again each second (its rooms start after it joins), {@code tries} times.
   */
  private void resync(String node, String who, int tries) {
    if (!nodes.isLive(node)) {
      return; // gone again: its next return asks anew
    }
    nodes.askNode(node, Addresses.PERMISSION_PENDING, new JsonObject(), Bus.quick())
        .onSuccess(reply -> {
          nodes.heardUpTo(reply);
          JsonArray ids = new JsonArray();
          Set<String> live = new HashSet<>();
          reply.getJsonArray("requests").forEach(o -> {
            JsonObject card = (JsonObject) o;
            ids.add(card.getString("requestId"));
            live.add(card.getString("requestId"));
            if (!pending.getOrDefault(card.getString("threadId"), Set.of()).contains(card.getString("requestId"))) {
              shown(card);
            }
          });
          List<String> missed = new ArrayList<>();
          pending.values().forEach(set -> set.stream()
              .filter(id -> node.equals(nodes.ownerOfRequest(id)) && !live.contains(id)).forEach(missed::add));
          missed.forEach(id -> nodes.askNode(node, Addresses.STORE_LEDGER_GET, new JsonObject().put("requestId", id),
                  Bus.quick())
              .onSuccess(row -> {
                JsonObject request = row.getJsonObject("request");
                if (request != null && request.getLong("endedAt") != null) {
                  nodes.ended(id); // its end fact never came: the router forgets its owner here
                  ended(request);
                }
              }));
          log.info("{}: {} pending permission requests answerable, {} that ended unheard closed", who, ids.size(),
              missed.size());
          toAllPages(new JsonObject().put("type", "permission_stale").put("stale", false).put("requestIds", ids)
              .put("node", node));
        })
        .onFailure(err -> {
          if (tries > 1) {
            vertx.setTimer(1_000, t -> resync(node, who, tries - 1));
          } else {
            log.warn("{} did not say what is pending: {}", who, err.getMessage());
          }
        });
  }

  /**
   * What the pages ask the rooms: in a cluster, of the agent node that owns the thread or request
   * (see {@link AgentNodes}); what waits on a node that leaves fails at once as unavailable.
   */
  Future<JsonObject> ask(String address, JsonObject body) {
    return nodes.ask(address, body);
  }

  /** {@code {node, incarnation}} of a thread or card in a cluster (where it runs), else nothing. */
  static JsonObject nodeOf(JsonObject thread) {
    JsonObject out = new JsonObject();
    if (thread.getString("node") != null) {
      out.put("node", thread.getString("node"));
      if (thread.getString("incarnation") != null) {
        out.put("incarnation", thread.getString("incarnation"));
      }
    }
    return out;
  }

  /** The agent nodes that are members now, by name (cluster mode). */
  java.util.List<String> agentNodes() {
    return nodes.liveNodes();
  }

  private void toAllPages(JsonObject frame) {
    String text = frame.encode();
    new ArrayList<>(open).forEach(s -> s.notice(text));
  }

  /** threadId -> its questions waiting for an answer (for the pages' badges and titles). */
  private final Map<String, Set<String>> pending = new HashMap<>();
  /**
   * How often at most the pages hear of changed counts, all changed threads in one frame: under
   * load every question's start and end went to every open socket as a frame of its own (two frames
   * per question per socket, the web room's largest cost in the load benchmark's profile,
   * docs/performance.md); now each socket gets at most five such frames a second however many
   * threads ask, and a question asked and answered within one period changes nothing on the pages.
   */
  static final long PENDING_NOTICE_MS = 200;
  /** threadId -> the count the pages were last told (welcome frames tell the same); absent: 0. */
  private final Map<String, Integer> pendingAnnounced = new HashMap<>();
  private final Set<String> pendingChangedSince = new java.util.LinkedHashSet<>();

  /** The count the pages were last told for a thread (a new page's welcome gives the same, so all agree). */
  int pendingCount(String threadId) {
    return pendingAnnounced.getOrDefault(threadId, 0);
  }

  private void pendingChanged(String threadId, String requestId, boolean waiting) {
    if (threadId == null || requestId == null) {
      return;
    }
    Set<String> ids = pending.computeIfAbsent(threadId, id -> new HashSet<>());
    boolean changed = waiting ? ids.add(requestId) : ids.remove(requestId);
    if (ids.isEmpty()) {
      pending.remove(threadId);
    }
    if (changed && pendingChangedSince.isEmpty()) {
      vertx.setTimer(PENDING_NOTICE_MS, t -> announcePending());
    }
    if (changed) {
      pendingChangedSince.add(threadId);
    }
  }

  /** Tells every open page, in one frame encoded once, the counts that changed since the last time. */
  private void announcePending() {
    JsonObject counts = new JsonObject();
    for (String threadId : pendingChangedSince) {
      Set<String> ids = pending.get(threadId);
      int count = ids == null ? 0 : ids.size();
      if (count != pendingCount(threadId)) {
        counts.put(threadId, count);
        if (count == 0) {
          pendingAnnounced.remove(threadId);
        } else {
          pendingAnnounced.put(threadId, count);
        }
      }
    }
    pendingChangedSince.clear();
    if (!counts.isEmpty()) {
      String frame = new JsonObject().put("type", "pending").put("counts", counts).encode();
      new ArrayList<>(open).forEach(s -> s.notice(frame));
    }
  }

  void socketOpened(ChatSocket socket) {
    open.add(socket);
  }

  void socketClosed(ChatSocket socket) {
    open.remove(socket);
  }

  /**
   * Frames waiting for slow readers, across sockets. Each socket may hold 4 MiB, but many slow
   * readers at once could hold more than a small heap has, so over this room-wide budget the socket
   * furthest behind is closed (it resumes from the transcript when its browser reconnects).
   */
  void queued(long delta) {
    queuedBytes += delta;
    while (delta > 0 && queuedBytes > queueBudget && !open.isEmpty()) {
      ChatSocket furthest = java.util.Collections.max(open,
          java.util.Comparator.comparingLong(ChatSocket::queuedBytes));
      if (furthest.queuedBytes() <= 0) {
        return; // what waits belongs to sockets already closed: it goes with their connections
      }
      furthest.closeSlow();
    }
  }


  static void json(RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json")
        .putHeader("Cache-Control", "no-store").end(body.encode());
  }

  // ---- /ws/chat ----

  /** Authenticates (401) and checks the Origin (403) before the upgrade; no frame is read before. */
  private void upgrade(RoutingContext ctx) {
    HttpServerRequest request = ctx.request();
    if (!authenticated(request)) {
      ctx.response().setStatusCode(401).end("log in or send a bearer token");
      return;
    }
    String origin = request.getHeader("Origin");
    if (origin != null && !originAllowed(request, origin)) {
      log.warn("refused a chat socket from origin {}", origin);
      ctx.response().setStatusCode(403).end("origin " + origin + " is not allowed");
      return;
    }
    String session = bearer(request) ? null : sessionHash(request.getCookie(COOKIE).getValue());
    HttpConnection connection = request.connection();
    request.toWebSocket().onSuccess(ws -> {
          upgraded.add(connection);
          requestRead(connection);
          new ChatSocket(this, vertx, ws, session).start();
        })
        .onFailure(err -> log.warn("chat socket upgrade failed: {}", err.getMessage()));
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

  private boolean originAllowed(HttpServerRequest request, String origin) {
    String host = request.getHeader("Host");
    String scheme = behindHttpsProxy(request) ? "https" : "http";
    return origin.equals(scheme + "://" + host) || settings.http().allowedOrigins().contains(origin);
  }

  /** Adds a socket to a thread's audience, subscribing to the thread's events for the first one. */
  void attach(String threadId, ChatSocket socket) {
    attached.computeIfAbsent(threadId, id -> new HashSet<>()).add(socket);
    threadConsumers.computeIfAbsent(threadId, id -> vertx.eventBus().<JsonObject>consumer(
        Addresses.threadEvents(id), m -> {
          JsonObject body = m.body();
          String[] encoded = {null}; // once for all the thread's sockets, and only if one sends it now
          java.util.function.Supplier<String> frame = () -> encoded[0] != null ? encoded[0]
              : (encoded[0] = ChatSocket.eventFrame(id, body.getLong("seq"), body.getLong("at"),
                  body.getJsonObject("event")).encode());
          toThread(id, s -> s.event(body, frame));
        }));
  }

  void detach(String threadId, ChatSocket socket) {
    Set<ChatSocket> sockets = attached.get(threadId);
    if (sockets != null && sockets.remove(socket) && sockets.isEmpty()) {
      attached.remove(threadId);
      MessageConsumer<JsonObject> consumer = threadConsumers.remove(threadId);
      if (consumer != null) {
        consumer.unregister();
      }
    }
  }

  private void toThread(String threadId, java.util.function.Consumer<ChatSocket> send) {
    Set<ChatSocket> sockets = attached.get(threadId);
    if (sockets != null) {
      for (ChatSocket s : Set.copyOf(sockets)) {
        send.accept(s);
      }
    }
  }

  /**
   * The frame for {@code key}, encoded once: an event or a card goes to every socket of its thread
   * one after another, so the last one encoded is kept, and the sockets share one string (also in
   * the queues of readers that fell behind).
   */
  String encodeOnce(String key, java.util.function.Supplier<JsonObject> frame) {
    if (!key.equals(encodedKey)) {
      encodedText = frame.get().encode();
      encodedKey = key;
    }
    return encodedText;
  }

  static ErrorCode code(Throwable err) {
    ErrorCode code = ErrorCode.of(err);
    if (code == null && err instanceof io.vertx.core.eventbus.ReplyException re
        && re.failureType() != io.vertx.core.eventbus.ReplyFailure.RECIPIENT_FAILURE) {
      return ErrorCode.UNAVAILABLE; // timed out, or no consumer: nothing answered
    }
    return code == null ? ErrorCode.STORE_FAILED : code;
  }

  /** What a page is told when nothing answered its request (see {@link ErrorCode#UNAVAILABLE}). */
  static final String UNAVAILABLE_TEXT = "the gateway's agent side did not answer (in a cluster: is the agent node "
      + "up?); what you asked may not have been done";
}
