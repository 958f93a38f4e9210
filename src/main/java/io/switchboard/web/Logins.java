package io.switchboard.web;

import io.switchboard.bus.Addresses;
import io.switchboard.cluster.RouterClient;
import io.switchboard.common.Lru;
import io.switchboard.common.RandomIds;
import io.switchboard.config.AccessToken;
import io.switchboard.config.Settings;
import io.switchboard.people.Principal;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.auth.User;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may use the web room: the access token (re-read every {@link #TOKEN_CHECK_MS}; a rotation
 * ends every login and socket), browser sessions (kept by the SHA-256 of their cookie, in memory
 * and in the database, ended at {@code http.sessionLifetime}), {@code POST /api/login}, logout, the
 * list of sessions with a way to end one, and the per-address limit on wrong tokens
 * ({@link WrongTokens}) that every route taking the token shares.
 */
final class Logins {
  private static final Logger log = LoggerFactory.getLogger(Logins.class);
  static final String COOKIE = "sb_session";
  private static final int MAX_SESSIONS = 1_000;
  /** A User-Agent is kept this long at most: enough to tell a phone from a laptop. */
  private static final int USER_AGENT_CHARS = 200;
  /** How often the token file is looked at (a rotation ends every login and socket), and expired sessions ended. */
  static final long TOKEN_CHECK_MS = 2_000;

  private final Vertx vertx;
  private final Settings settings;
  private final SocketHub hub;
  private final RandomIds ids = new RandomIds();
  private String token;
  /** A browser login lasts this long (the cookie's Max-Age; then the server ends it too). */
  private final long lifetimeMs;
  /** Browser sessions by the SHA-256 of their cookie, oldest dropped first; saved in the database. */
  private final Map<String, Session> sessions = Lru.map(MAX_SESSIONS, true);

  /**
   * A browser session: when it began, what it logged in from (either may be null for an old one), and
   * who signed in ({@code personId}), by which identity and how strongly.
   */
  private record Session(long createdAt, String userAgent, String address, String personId, String identity,
                         String strength) {
    /** What a request or a socket of this session carries as its login (the user's principal). */
    JsonObject login(String hash) {
      return new JsonObject().put("session", hash).put("personId", personId).put("identity", identity)
          .put("strength", strength);
    }
  }
  /** Everyone, by id, as the store has them (re-read every {@link #TOKEN_CHECK_MS}: a role change applies at once). */
  private Map<String, JsonObject> people = Map.of();
  private final WrongTokens wrongTokens = new WrongTokens();

  Logins(Vertx vertx, Settings settings, SocketHub hub) {
    this.vertx = vertx;
    this.settings = settings;
    this.hub = hub;
    this.lifetimeMs = settings.http().sessionLifetimeMs();
  }

  /** The person the bootstrap token names: the first owner (made at the first start). */
  private Principal owner;

  Principal owner() {
    return owner;
  }

  /**
   * Who a login names now ({@code {personId, identity, strength}}, a request's or socket's), with
   * their roles as they are now; null when that person is gone or disabled (refuse: fail closed).
   */
  Principal principal(JsonObject login) {
    JsonObject person = login == null ? null : people.get(login.getString("personId"));
    if (person == null || person.getBoolean("disabled", false)) {
      return null;
    }
    return Principal.of(person, login.getString("identity"), login.getString("strength"));
  }

  /** Reads everyone again; the sessions of people now disabled or gone end. */
  private Future<Void> refreshPeople(RouterClient nodes) {
    return nodes.ask(Addresses.STORE_PEOPLE_LIST, new JsonObject()).map(reply -> {
      Map<String, JsonObject> byId = new java.util.HashMap<>();
      reply.getJsonArray("people").forEach(p -> byId.put(((JsonObject) p).getString("personId"), (JsonObject) p));
      people = byId;
      List<String> locked = sessions.entrySet().stream()
          .filter(e -> principal(e.getValue().login(e.getKey())) == null).map(Map.Entry::getKey).toList();
      locked.forEach(hash -> end(hash, "your account was disabled or removed"));
      return null;
    });
  }
  /** Restores the sessions saved before a restart, reads the token and starts watching its file. */
  Future<Void> start(RouterClient nodes) {
    return nodes.ask(Addresses.STORE_PEOPLE_OWNER, new JsonObject())
        .onSuccess(reply -> owner = Principal.of(reply.getJsonObject("person"), "bootstrap", "token"))
        .compose(x -> nodes.ask(Addresses.STORE_WEB_SESSION_LIST, new JsonObject()))
        .onSuccess(reply -> restoreSessions(reply.getJsonArray("sessions")))
        .compose(x -> vertx.fileSystem().readFile(settings.tokenFile().toString()))
        .map(buffer -> token = buffer.toString().trim())
        .compose(t -> refreshPeople(nodes))
        .onSuccess(t -> vertx.setPeriodic(TOKEN_CHECK_MS, id -> {
          checkToken();
          endExpired();
          refreshPeople(nodes).onFailure(err -> log.debug("people could not be read again: {}", err.getMessage()));
        }))
        .mapEmpty();
  }

  /** Sessions saved before a restart, the expired ones forgotten. */
  private void restoreSessions(JsonArray saved) {
    long now = System.currentTimeMillis();
    for (Object o : saved) {
      JsonObject row = (JsonObject) o;
      if (now - row.getLong("createdAt") >= lifetimeMs) {
        forgetSessions(new JsonObject().put("hash", row.getString("hash")));
      } else {
        // A session from before people (schema 17) was the bootstrap token's: the owner's.
        boolean old = row.getString("personId") == null;
        sessions.put(row.getString("hash"), new Session(row.getLong("createdAt"), row.getString("userAgent"),
            row.getString("address"), old ? owner.personId() : row.getString("personId"),
            old ? "bootstrap" : row.getString("identity"), old ? "token" : row.getString("strength")));
      }
    }
  }

  /** Sessions past their lifetime end on the server too (whatever the browser kept), their sockets with them. */
  private void endExpired() {
    long now = System.currentTimeMillis();
    List<String> expired = sessions.entrySet().stream()
        .filter(e -> now - e.getValue().createdAt() >= lifetimeMs).map(Map.Entry::getKey).toList();
    expired.forEach(hash -> end(hash, "your login expired; log in again"));
  }

  /** Ends one session: forgotten here and in the database, its chat sockets closed (4401) with {@code why}. */
  private boolean end(String hash, String why) {
    if (sessions.remove(hash) == null) {
      return false;
    }
    forgetSessions(new JsonObject().put("hash", hash));
    hub.closeUnauthorized(s -> hash.equals(s.session()), why);
    return true;
  }

  /**
   * A rotated token (its file changed) ends every login made with it and every socket a script opened
   * with it: the old token stops working now. Passkey, OIDC and proxy logins are not the token's.
   */
  private void checkToken() {
    vertx.fileSystem().readFile(settings.tokenFile().toString()).onSuccess(buffer -> {
      String now = buffer.toString().trim();
      if (!now.isEmpty() && !now.equals(token)) {
        log.warn("the access token was rotated: every login made with it and its chat sockets end");
        token = now;
        List<String> tokens = sessions.entrySet().stream()
            .filter(e -> "bootstrap".equals(e.getValue().identity())).map(Map.Entry::getKey).toList();
        tokens.forEach(hash -> end(hash, "the access token was rotated"));
        hub.closeUnauthorized(s -> s.session() == null, "the access token was rotated");
      }
    });
  }

  /** JSON only (415): what a no-cors fetch or a form can send is refused before the body is read. */
  void loginAllowed(RoutingContext ctx) {
    String type = ctx.request().getHeader("Content-Type");
    if (type == null || !type.toLowerCase(Locale.ROOT).startsWith("application/json")) {
      HttpEdge.json(ctx, 415, new JsonObject().put("error", "send {\"token\": \"...\"} as application/json"));
      return;
    }
    ctx.next();
  }

  /**
   * Counts a wrong token from the request's address: a 401, or once the address is over the limit
   * a 429 whose payload is the seconds to wait ({@link #refusal}).
   */
  private HttpException wrongToken(RoutingContext ctx, String where) {
    String address = clientAddress(ctx);
    long wait = wrongTokens.wrong(address, System.currentTimeMillis());
    if (wait == 0) {
      log.warn("{} refused from {}: wrong token", where, address);
      audit("login-failed", null, new JsonObject().put("identity", "bootstrap").put("where", where)
          .put("address", address));
      return new HttpException(401);
    }
    log.debug("{} refused from {}: wrong token, too many this minute", where, address); // a flood: not a warning each
    return new HttpException(429, Long.toString(wait));
  }

  /**
   * Answers a refused request: a 429 with Retry-After and words; a 401 with {@code unauthorized}'s
   * body. True when it answered (a refusal of either kind).
   */
  static boolean refusal(RoutingContext ctx, Handler<RoutingContext> unauthorized) {
    if (ctx.statusCode() == 429 && ctx.failure() instanceof HttpException limited) {
      ctx.response().putHeader("Retry-After", limited.getPayload());
      HttpEdge.json(ctx, 429, new JsonObject().put("error", "too many wrong tokens from this address; try again in "
          + limited.getPayload() + " s"));
      return true;
    }
    if (ctx.statusCode() == 401) {
      unauthorized.handle(ctx);
      return true;
    }
    return false;
  }

  private static String clientAddress(RoutingContext ctx) {
    var address = ctx.request().remoteAddress();
    return address == null ? "?" : address.hostAddress();
  }

  void login(RoutingContext ctx) {
    JsonObject body;
    try {
      body = ctx.body().asJsonObject();
    } catch (DecodeException | ClassCastException e) {
      body = null;
    }
    if (body == null || !(body.getValue("token") instanceof String given)) {
      HttpEdge.json(ctx, 400, new JsonObject().put("error", "send {\"token\": \"...\"}"));
      return;
    }
    // The right token first, in constant time, and always: only a wrong one counts or waits.
    if (!AccessToken.matches(token, given.trim())) {
      HttpException refused = wrongToken(ctx, "login");
      ctx.fail(refused.getStatusCode(), refused);
      return;
    }
    signIn(ctx, owner.personId(), "bootstrap", "token").onComplete(v -> ctx.response().setStatusCode(204).end());
  }

  /**
   * Starts a browser session for {@code personId}, signed in by {@code identity} at {@code strength}:
   * the cookie is set on the response (the caller ends it) and the login audited. Every way in ends
   * here (the bootstrap token, a passkey, OIDC, the trusted proxy).
   */
  Future<Void> signIn(RoutingContext ctx, String personId, String identity, String strength) {
    String session = ids.next("", 32);
    long now = System.currentTimeMillis();
    String hash = sessionHash(session);
    String userAgent = ctx.request().getHeader("User-Agent");
    Session made = new Session(now, userAgent == null ? null
        : userAgent.substring(0, Math.min(userAgent.length(), USER_AGENT_CHARS)), clientAddress(ctx), personId,
        identity, strength);
    sessions.put(hash, made);
    audit("login", personId, new JsonObject().put("identity", identity).put("strength", strength)
        .put("address", made.address()).put("userAgent", made.userAgent()));
    // Kept by its hash, so a restart does not log everyone out and the database never holds a cookie.
    return vertx.eventBus().request(Addresses.STORE_WEB_SESSION_SAVE, new JsonObject().put("hash", hash)
            .put("createdAt", now).put("userAgent", made.userAgent()).put("address", made.address())
            .put("personId", personId).put("identity", identity).put("strength", strength))
        .transform(saved -> {
          if (saved.failed()) {
            log.warn("a browser session could not be saved (it lasts until the next restart): {}",
                saved.cause().getMessage());
          }
          // Max-Age: the browser drops it when the server does (a cookie without one outlives nothing but says nothing).
          ctx.response().addCookie(Cookie.cookie(COOKIE, session).setHttpOnly(true).setSameSite(CookieSameSite.STRICT)
              .setPath("/").setMaxAge(Math.max(1, lifetimeMs / 1000))
              .setSecure(HttpEdge.behindHttpsProxy(ctx.request())));
          return Future.<Void>succeededFuture();
        });
  }

  /** One audit row (a login, a failed one): best effort, a store that cannot take it is logged, never fatal. */
  void audit(String event, String personId, JsonObject detail) {
    vertx.eventBus().request(Addresses.STORE_AUDIT_APPEND, new JsonObject().put("event", event)
            .put("personId", personId).put("detail", detail))
        .onFailure(err -> log.warn("an audit row ({}) could not be written: {}", event, err.getMessage()));
  }

  /** What identifies a session in memory and in the database: the SHA-256 of its cookie. */
  static String sessionHash(String cookie) {
    return io.switchboard.common.Sha256.hex(cookie);
  }

  private void forgetSessions(JsonObject which) {
    vertx.eventBus().request(Addresses.STORE_WEB_SESSION_FORGET, which)
        .onFailure(err -> log.warn("browser sessions could not be forgotten in the database: {}", err.getMessage()));
  }

  void logout(RoutingContext ctx) {
    Cookie cookie = ctx.request().getCookie(COOKIE);
    if (cookie != null) {
      end(sessionHash(cookie.getValue()), "logged out");
    }
    forgetCookie(ctx);
    ctx.response().setStatusCode(204).end();
  }

  private static void forgetCookie(RoutingContext ctx) {
    ctx.response().addCookie(Cookie.cookie(COOKIE, "").setMaxAge(0).setPath("/").setHttpOnly(true)
        .setSameSite(CookieSameSite.STRICT));
  }

  /**
   * What names a session in the list and in {@code DELETE /api/sessions/{id}}: derived from its
   * hash, so neither the cookie nor the hash the database keeps is ever shown.
   */
  static String publicId(String hash) {
    return io.switchboard.common.Sha256.hex("session-id " + hash).substring(0, 16);
  }

  /**
   * Whether the caller may see and end this session: their own, or anyone's for a person who may
   * manage people.
   */
  private boolean visible(RoutingContext ctx, Session session) {
    JsonObject login = ctx.user().principal();
    Principal me = principal(login);
    return me != null && (me.personId().equals(session.personId()) || me.may(io.switchboard.people.Roles.PEOPLE));
  }

  /** {@code GET /api/sessions}: the caller's browser logins (everyone's for a manager of people), newest first, theirs marked {@code current}. */
  void listSessions(RoutingContext ctx) {
    String mine = ctx.user().principal().getString("session");
    JsonArray list = new JsonArray();
    sessions.entrySet().stream()
        .filter(e -> visible(ctx, e.getValue()))
        .sorted((a, b) -> Long.compare(b.getValue().createdAt(), a.getValue().createdAt()))
        .forEach(e -> list.add(new JsonObject().put("id", publicId(e.getKey()))
            .put("createdAt", e.getValue().createdAt()).put("expiresAt", e.getValue().createdAt() + lifetimeMs)
            .put("userAgent", e.getValue().userAgent()).put("address", e.getValue().address())
            .put("personId", e.getValue().personId()).put("identity", e.getValue().identity())
            .put("current", e.getKey().equals(mine))));
    HttpEdge.json(ctx, 200, new JsonObject().put("sessions", list).put("lifetimeSeconds", lifetimeMs / 1000));
  }

  /** {@code DELETE /api/sessions/{id}}: ends that login and its sockets; one's own is a logout. */
  void endSession(RoutingContext ctx) {
    String id = ctx.pathParam("id");
    String hash = sessions.entrySet().stream().filter(e -> publicId(e.getKey()).equals(id) && visible(ctx, e.getValue()))
        .map(Map.Entry::getKey).findFirst().orElse(null);
    if (hash == null || !end(hash, "this login was ended (from the list of logins)")) {
      HttpEdge.json(ctx, 404, new JsonObject().put("error", "no session \"" + id + "\"; GET /api/sessions lists them"));
      return;
    }
    if (hash.equals(ctx.user().principal().getString("session"))) {
      forgetCookie(ctx);
    }
    ctx.response().setStatusCode(204).end();
  }

  /**
   * For vertx-web's {@code SimpleAuthenticationHandler}: a browser session cookie, or
   * {@code Authorization: Bearer <token>} for scripts (then the cookie is not looked at). The user's
   * principal is the login ({@code session}: its hash, absent for a bearer; {@code personId},
   * {@code identity}, {@code strength}); a refusal is a 401.
   */
  Future<User> authenticate(RoutingContext ctx) {
    HttpServerRequest request = ctx.request();
    if (bearer(request)) {
      // The right token first, in constant time, and always: only a wrong one counts or waits.
      if (AccessToken.matches(token, request.getHeader("Authorization").substring(7).trim())) {
        return Future.succeededFuture(User.create(new JsonObject().put("personId", owner.personId())
            .put("identity", "bootstrap").put("strength", "token")));
      }
      return Future.failedFuture(wrongToken(ctx, "a bearer token on " + request.path()));
    }
    Cookie cookie = request.getCookie(COOKIE);
    if (cookie == null) {
      return refused();
    }
    String hash = sessionHash(cookie.getValue());
    Session session = sessions.get(hash);
    if (session != null && System.currentTimeMillis() - session.createdAt() >= lifetimeMs) {
      end(hash, "your login expired; log in again"); // between two sweeps: not a moment longer
      return refused();
    }
    if (session == null || principal(session.login(hash)) == null) {
      return refused();
    }
    return Future.succeededFuture(User.create(session.login(hash)));
  }

  private static Future<User> refused() {
    return Future.failedFuture(new HttpException(401));
  }

  private static boolean bearer(HttpServerRequest request) {
    String auth = request.getHeader("Authorization");
    return auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7);
  }
}
