package io.switchboard.web;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.AccessToken;
import io.switchboard.config.Settings;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The web surface's edges, over raw HTTP where a browser library would hide them: what /api/login
 * accepts, which Host names are answered, how often a wrong token may be tried, and that logging
 * out or rotating the token ends the sessions and sockets that hang on them.
 */
@ExtendWith(VertxExtension.class)
class WebSecurityTest {
  @TempDir
  Path dir;
  GatewayHarness gateway;
  /** The token the first start made (a restarted gateway finds only its hash). */
  String token;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(), AgentHarness.demo());
    token = gateway.token;
  }

  @AfterEach
  void stop() {
    gateway.close();
  }

  /** One HTTP/1.1 request as written, the whole response as read (the server closes: Connection: close). */
  private String raw(String head, String body) throws Exception {
    try (Socket s = new Socket("127.0.0.1", gateway.port)) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      out.write((head + "Content-Length: " + bytes.length + "\r\nConnection: close\r\n\r\n")
          .getBytes(StandardCharsets.UTF_8));
      out.write(bytes);
      out.flush();
      InputStream in = s.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      in.transferTo(all);
      return all.toString(StandardCharsets.UTF_8);
    }
  }

  private String login(String contentType, String body) throws Exception {
    return raw("POST /api/login HTTP/1.1\r\nHost: 127.0.0.1:" + gateway.port + "\r\nContent-Type: " + contentType
        + "\r\n", body);
  }

  private static int status(String response) {
    return Integer.parseInt(response.substring(9, 12));
  }

  @Test
  void loginTakesOnlyJsonAndNoUploadEverReachesTheDisk() throws Exception {
    Path cwd = Path.of("").toAbsolutePath();
    String multipart = "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x.bin\"\r\n"
        + "Content-Type: application/octet-stream\r\n\r\nDATA\r\n--b--\r\n";
    assertEquals(415, status(login("multipart/form-data; boundary=b", multipart)));
    assertEquals(415, status(login("text/plain", "{\"token\":\"x\"}")), "what a no-cors fetch can send");
    assertFalse(Files.exists(cwd.resolve("file-uploads")), "no upload folder in " + cwd);
    assertEquals(204, status(login("application/json", "{\"token\":\"" + gateway.token + "\"}")));
  }

  @Test
  void onlyThisServersOwnNamesAreAnswered() throws Exception {
    String rebound = raw("GET /healthz HTTP/1.1\r\nHost: attacker.example:" + gateway.port + "\r\n", "");
    assertEquals(421, status(rebound), rebound);
    assertTrue(rebound.contains("attacker.example"), rebound);
    assertEquals(421, status(raw("GET /api/session HTTP/1.1\r\nHost: 192.0.2.1\r\n", "")));
    assertEquals(200, status(raw("GET /healthz HTTP/1.1\r\nHost: localhost:" + gateway.port + "\r\n", "")));
    assertEquals(200, status(raw("GET /healthz HTTP/1.1\r\nHost: [::1]:" + gateway.port + "\r\n", "")));
  }

  /**
   * One request from {@code from} (a loopback address: all of 127/8 reaches the server), answered
   * with its status line, headers and body (read by Content-Length: an upgrade's 101 keeps the
   * connection open).
   */
  private String from(String from, String head, String body) throws Exception {
    try (Socket s = new Socket(java.net.InetAddress.getByName("127.0.0.1"), gateway.port,
        java.net.InetAddress.getByName(from), 0)) {
      s.setSoTimeout(10_000);
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      s.getOutputStream().write((head + "Host: 127.0.0.1:" + gateway.port + "\r\nContent-Length: " + bytes.length
          + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
      s.getOutputStream().write(bytes);
      InputStream in = s.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      while (!all.toString(StandardCharsets.UTF_8).contains("\r\n\r\n")) {
        int b = in.read();
        if (b < 0) {
          break;
        }
        all.write(b);
      }
      String headers = all.toString(StandardCharsets.UTF_8);
      int length = headers.lines().filter(l -> l.toLowerCase().startsWith("content-length:"))
          .mapToInt(l -> Integer.parseInt(l.substring(15).trim())).findFirst().orElse(0);
      return headers + new String(in.readNBytes(length), StandardCharsets.UTF_8);
    }
  }

  private String wrongLogin(String from, int i) throws Exception {
    return from(from, "POST /api/login HTTP/1.1\r\nContent-Type: application/json\r\n", "{\"token\":\"guess-" + i + "\"}");
  }

  private String bearer(String from, String path, String token) throws Exception {
    return from(from, "GET " + path + " HTTP/1.1\r\nAuthorization: Bearer " + token + "\r\n", "");
  }

  private String upgrade(String from, String token) throws Exception {
    return from(from, "GET /ws/chat HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        + "Authorization: Bearer " + token + "\r\n", "");
  }

  private static int retryAfter(String response) {
    return response.lines().filter(l -> l.toLowerCase().startsWith("retry-after:"))
        .mapToInt(l -> Integer.parseInt(l.substring(12).trim())).findFirst()
        .orElseThrow(() -> new AssertionError("no Retry-After in " + response));
  }

  @Test
  void wrongTokensOnEveryRouteShareOneLimitPerAddress() throws Exception {
    // A guesser spreads its tries over the three doors a token opens: they count together.
    for (int i = 0; i < WrongTokens.PER_MINUTE; i++) {
      String answer = switch (i % 3) {
        case 0 -> bearer("127.0.0.1", "/api/session", "guess-" + i);
        case 1 -> upgrade("127.0.0.1", "guess-" + i);
        default -> wrongLogin("127.0.0.1", i);
      };
      assertEquals(401, status(answer), "try " + (i + 1) + ": " + answer);
    }
    for (String over : List.of(bearer("127.0.0.1", "/api/session", "guess-x"),
        bearer("127.0.0.1", "/api/permissions", "guess-y"), upgrade("127.0.0.1", "guess-z"),
        wrongLogin("127.0.0.1", 99))) {
      assertEquals(429, status(over), over);
      int wait = retryAfter(over);
      assertTrue(wait >= 1 && wait <= 60, over);
    }
    assertTrue(wrongLogin("127.0.0.1", 100).contains("too many wrong tokens"));
    // Another address is not held back by this one's guesses.
    assertEquals(401, status(bearer("127.0.0.2", "/api/session", "guess-from-elsewhere")));
    assertEquals(401, status(upgrade("127.0.0.2", "guess-from-elsewhere")));
    // No token at all is not a guess: a page without a login is told to log in, not to wait.
    assertEquals(401, status(from("127.0.0.1", "GET /api/session HTTP/1.1\r\n", "")));
  }

  @Test
  void theRightTokenIsAlwaysTakenWhileAGuesserFromTheSameAddressIsLimited() throws Exception {
    for (int i = 0; i < WrongTokens.PER_MINUTE; i++) {
      assertEquals(401, status(wrongLogin("127.0.0.1", i)));
    }
    String limited = wrongLogin("127.0.0.1", 10);
    assertEquals(429, status(limited), limited);
    assertTrue(retryAfter(limited) >= 1, limited);
    // The owner, on the same machine, is not locked out by it.
    String owner = from("127.0.0.1", "POST /api/login HTTP/1.1\r\nContent-Type: application/json\r\n",
        "{\"token\":\"" + gateway.token + "\"}");
    assertEquals(204, status(owner), owner);
    assertTrue(owner.toLowerCase().contains("set-cookie: sb_session="), owner);
    assertEquals(200, status(bearer("127.0.0.1", "/api/session", gateway.token)));
    assertEquals(101, status(upgrade("127.0.0.1", gateway.token)));
    // ...while the guesser still waits.
    assertEquals(429, status(bearer("127.0.0.1", "/api/session", "guess-again")));
  }

  @Test
  void logoutEndsThatSessionsSocketsAndRotationEndsEveryLogin(Vertx vertx) throws Exception {
    String response = login("application/json", "{\"token\":\"" + gateway.token + "\"}");
    String cookie = response.lines().filter(l -> l.toLowerCase().startsWith("set-cookie:")).findFirst().orElseThrow()
        .substring("set-cookie:".length()).trim().split(";")[0];
    AtomicReference<Short> closed = new AtomicReference<>();
    WebSocket browser = await(vertx.createWebSocketClient().connect(new WebSocketConnectOptions()
        .setHost("127.0.0.1").setPort(gateway.port).setURI("/ws/chat").addHeader("Cookie", cookie)
        .addHeader("Origin", "http://127.0.0.1:" + gateway.port)));
    browser.closeHandler(v -> closed.set(browser.closeStatusCode()));
    ChatClient script = ChatClient.open(vertx, gateway.port, gateway.token);
    script.next("welcome");

    assertEquals(204, status(raw("POST /api/logout HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: " + cookie + "\r\n", "")));
    waitFor(() -> closed.get() != null, "the logged-out browser's socket to close");
    assertEquals((short) 4401, closed.get());
    assertEquals(401, status(raw("GET /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: " + cookie + "\r\n", "")));
    assertEquals(null, script.closeCode, "a socket on the token itself stays");

    // token --rotate while the gateway runs: the old token, and everything opened with it, ends.
    new AccessToken(gateway.settings.tokenFile()).rotate();
    waitFor(() -> script.closeCode != null, "the socket opened with the old token to close");
    assertEquals((short) 4401, script.closeCode);
    assertEquals(401, status(raw("GET /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
        + gateway.token + "\r\n", "")));
    script.close();
  }

  @Test
  void aBrowserSessionSurvivesARestartAndTheDatabaseHoldsOnlyItsHash(Vertx vertx) throws Exception {
    String response = login("application/json", "{\"token\":\"" + gateway.token + "\"}");
    String cookie = response.lines().filter(l -> l.toLowerCase().startsWith("set-cookie:")).findFirst().orElseThrow()
        .substring("set-cookie:".length()).trim().split(";")[0];
    gateway.close();
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(), AgentHarness.demo());
    assertEquals(200, status(raw("GET /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: " + cookie + "\r\n", "")),
        "still logged in after the restart");
    String value = cookie.substring(cookie.indexOf('=') + 1);
    try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + gateway.settings.databaseFile());
         java.sql.ResultSet rows = c.createStatement().executeQuery("SELECT hash FROM web_session")) {
      assertTrue(rows.next());
      assertEquals(Logins.sessionHash(value), rows.getString(1));
      assertFalse(rows.getString(1).contains(value));
    }
    assertEquals(204, status(raw("POST /api/logout HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: " + cookie + "\r\n", "")));
    gateway.close();
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(), AgentHarness.demo());
    assertEquals(401, status(raw("GET /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: " + cookie + "\r\n", "")),
        "a logout is remembered too");
  }

  private static String cookieOf(String response) {
    return response.lines().filter(l -> l.toLowerCase().startsWith("set-cookie:")).findFirst().orElseThrow()
        .substring("set-cookie:".length()).trim();
  }

  private String loginAs(String userAgent) throws Exception {
    return raw("POST /api/login HTTP/1.1\r\nHost: 127.0.0.1:" + gateway.port + "\r\nContent-Type: application/json\r\n"
        + "User-Agent: " + userAgent + "\r\n", "{\"token\":\"" + token + "\"}");
  }

  private String withCookie(String method, String path, String cookie) throws Exception {
    return raw(method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: " + cookie + "\r\n", "");
  }

  private static JsonObject body(String response) {
    return new JsonObject(response.substring(response.indexOf("\r\n\r\n") + 4));
  }

  private Short[] chatSocketClosing(Vertx vertx, String cookie) {
    Short[] closed = new Short[1];
    WebSocket ws = await(vertx.createWebSocketClient().connect(new WebSocketConnectOptions()
        .setHost("127.0.0.1").setPort(gateway.port).setURI("/ws/chat").addHeader("Cookie", cookie)
        .addHeader("Origin", "http://127.0.0.1:" + gateway.port)));
    ws.closeHandler(v -> closed[0] = ws.closeStatusCode());
    return closed;
  }

  @Test
  void aLoginStatesItsLifetimeAndEndsWithItOnTheServerToo(Vertx vertx) throws Exception {
    String lasting = cookieOf(loginAs("default"));
    assertTrue(lasting.contains("Max-Age=" + 7 * 24 * 3600), "the default 7 days: " + lasting);
    gateway.close();
    Settings shortLived = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false, List.of(), 3_000),
        dir.resolve("data"), "demo", List.of(AgentHarness.demo()), List.of(), Settings.LogFormat.TEXT);
    gateway = new GatewayHarness(vertx, shortLived, io.switchboard.Gateway.Tuning.DEFAULT);
    String set = cookieOf(loginAs("short"));
    assertTrue(set.contains("Max-Age=3"), set);
    String cookie = set.split(";")[0];
    assertEquals(200, status(withCookie("GET", "/api/session", cookie)));
    Short[] closed = chatSocketClosing(vertx, cookie);
    // Past its lifetime the server ends it, whatever the browser keeps: the socket opened with it too.
    waitFor(() -> closed[0] != null, "the socket of the expired session to close");
    assertEquals((short) 4401, closed[0]);
    assertEquals(401, status(withCookie("GET", "/api/session", cookie)));
    String hash = Logins.sessionHash(cookie.substring(cookie.indexOf('=') + 1));
    waitFor(() -> {
      try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + gateway.settings.databaseFile());
           java.sql.ResultSet rows = c.createStatement().executeQuery("SELECT count(*) FROM web_session WHERE hash = '"
               + hash + "'")) {
        return rows.getInt(1) == 0;
      } catch (java.sql.SQLException e) {
        throw new IllegalStateException(e);
      }
    }, "the expired session to be forgotten in the database too");
  }

  @Test
  void oneListsOnesSessionsWithoutTheirSecretsAndEndsOne(Vertx vertx) throws Exception {
    String phone = cookieOf(loginAs("Phone/1.0")).split(";")[0];
    String laptop = cookieOf(loginAs("Laptop/2.0")).split(";")[0];
    String listed = withCookie("GET", "/api/sessions", phone);
    assertEquals(200, status(listed), listed);
    for (String secret : List.of(phone, laptop)) {
      String value = secret.substring(secret.indexOf('=') + 1);
      assertFalse(listed.contains(value), "no cookie in " + listed);
      assertFalse(listed.contains(Logins.sessionHash(value)), "nor its hash: " + listed);
    }
    JsonArray sessions = body(listed).getJsonArray("sessions");
    assertEquals(2, sessions.size(), listed);
    JsonObject mine = sessions.stream().map(JsonObject.class::cast).filter(x -> x.getBoolean("current"))
        .findFirst().orElseThrow();
    assertEquals("Phone/1.0", mine.getString("userAgent"));
    JsonObject other = sessions.stream().map(JsonObject.class::cast).filter(x -> !x.getBoolean("current"))
        .findFirst().orElseThrow();
    assertEquals("Laptop/2.0", other.getString("userAgent"));
    assertEquals(7L * 24 * 3600 * 1000, other.getLong("expiresAt") - other.getLong("createdAt"));

    Short[] laptopSocket = chatSocketClosing(vertx, laptop);
    String unknown = withCookie("DELETE", "/api/sessions/nope", phone);
    assertEquals(404, status(unknown), unknown);
    assertTrue(unknown.contains("nope"), unknown);
    assertEquals(2, body(withCookie("GET", "/api/sessions", phone)).getJsonArray("sessions").size(), "nothing ended");

    assertEquals(204, status(withCookie("DELETE", "/api/sessions/" + other.getString("id"), phone)));
    waitFor(() -> laptopSocket[0] != null, "the ended session's socket to close");
    assertEquals((short) 4401, laptopSocket[0]);
    assertEquals(401, status(withCookie("GET", "/api/session", laptop)));
    assertEquals(200, status(withCookie("GET", "/api/session", phone)), "the other one stays");
    // Remembered across a restart.
    gateway.close();
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(), AgentHarness.demo());
    assertEquals(401, status(withCookie("GET", "/api/session", laptop)));
    // A script with the token sees them all, none its own; ending one's own session is a logout.
    JsonArray seen = body(raw("GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
        + token + "\r\n", "")).getJsonArray("sessions");
    assertEquals(1, seen.size());
    assertFalse(seen.getJsonObject(0).getBoolean("current"));
    String ended = withCookie("DELETE", "/api/sessions/" + mine.getString("id"), phone);
    assertEquals(204, status(ended), ended);
    assertTrue(cookieOf(ended).contains("Max-Age=0"), "the browser forgets the cookie: " + ended);
    assertEquals(401, status(withCookie("GET", "/api/session", phone)));
    assertEquals(401, status(withCookie("GET", "/api/sessions", phone)));
  }

  /** Reads until the server closes the connection; fails if it is still open after {@code seconds}. */
  private static String readUntilClosed(Socket s, int seconds) throws Exception {
    s.setSoTimeout(seconds * 1000);
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    try {
      s.getInputStream().transferTo(all);
    } catch (java.net.SocketTimeoutException e) {
      throw new AssertionError("the connection is still open after " + seconds + " s: " + all, e);
    } catch (java.net.SocketException reset) {
      // closed by the server while we wrote or read: what is wanted
    }
    return all.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aRequestThatTricklesInIsCutOffButAnOpenChatSocketIsNot(Vertx vertx) throws Exception {
    gateway.close();
    gateway = new GatewayHarness(vertx, dir.resolve("data-short-deadline"), List.of(), List.of(),
        io.switchboard.Gateway.Tuning.DEFAULT.withRequestReadMs(1_000), AgentHarness.demo());
    ChatClient chat = ChatClient.open(vertx, gateway.port, gateway.token);
    chat.next("welcome");
    String host = "Host: 127.0.0.1:" + gateway.port + "\r\n";
    // Headers that never end: the idle timeout (60 s) alone would keep the descriptor while a byte comes a minute.
    try (Socket headers = new Socket("127.0.0.1", gateway.port)) {
      headers.getOutputStream().write(("GET /healthz HTTP/1.1\r\n" + host).getBytes(StandardCharsets.UTF_8));
      Thread.sleep(600);
      headers.getOutputStream().write("X-Slow: 1\r\n".getBytes(StandardCharsets.UTF_8));
      assertEquals("", readUntilClosed(headers, 8), "closed unanswered");
    }
    // A body that never ends.
    try (Socket body = new Socket("127.0.0.1", gateway.port)) {
      body.getOutputStream().write(("POST /api/login HTTP/1.1\r\n" + host + "Content-Type: application/json\r\n"
          + "Content-Length: 100\r\n\r\n{\"token\":").getBytes(StandardCharsets.UTF_8));
      assertEquals("", readUntilClosed(body, 8), "closed unanswered");
    }
    // A kept-alive connection is answered, then has the same time for its next request.
    try (Socket keptAlive = new Socket("127.0.0.1", gateway.port)) {
      keptAlive.getOutputStream().write(("GET /healthz HTTP/1.1\r\n" + host + "\r\n").getBytes(StandardCharsets.UTF_8));
      String answered = readUntilClosed(keptAlive, 8);
      assertEquals(200, status(answered), answered);
      assertTrue(answered.contains("\"ok\""), answered);
    }
    // An Upgrade header on an ordinary request (or a refused upgrade) earns no exemption.
    try (Socket sly = new Socket("127.0.0.1", gateway.port)) {
      sly.getOutputStream().write(("GET /healthz HTTP/1.1\r\n" + host + "Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
          .getBytes(StandardCharsets.UTF_8));
      String answered = readUntilClosed(sly, 8);
      assertTrue(answered.startsWith("HTTP/1.1 "), answered);
    }
    // The chat socket, opened before all this, still answers.
    chat.send(new io.vertx.core.json.JsonObject().put("type", "ping"));
    chat.next("pong");
    assertEquals(null, chat.closeCode);
    chat.close();
  }
}
