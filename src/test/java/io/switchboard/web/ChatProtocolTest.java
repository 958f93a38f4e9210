package io.switchboard.web;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import io.vertx.core.http.UpgradeRejectedException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** /ws/chat and the HTTP API as CONTRACT.md fixes them, over real sockets. */
@ExtendWith(VertxExtension.class)
class ChatProtocolTest {
  @TempDir
  Path dir;
  GatewayHarness gateway;
  Vertx vertx;
  final List<ChatClient> clients = new ArrayList<>();
  final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    this.vertx = vertx;
    gateway = new GatewayHarness(vertx, dir, List.of("https://allowed.example"), AgentHarness.demo());
  }

  @AfterEach
  void stop() {
    clients.forEach(ChatClient::close);
    gateway.close();
  }

  private ChatClient client() {
    ChatClient c = ChatClient.open(vertx, gateway.port, gateway.token);
    clients.add(c);
    c.next("welcome");
    return c;
  }

  private int upgradeStatus(String bearer, String origin) {
    try {
      clients.add(await(ChatClient.connect(vertx, gateway.port, bearer, origin)));
      return 101;
    } catch (AssertionError e) {
      if (e.getCause() instanceof UpgradeRejectedException rejected) {
        return rejected.getStatus();
      }
      throw e;
    }
  }

  private String newThread(ChatClient c) {
    // Our own answer carries the clientRef (every page also hears of the thread, without one).
    JsonObject t = c.send(new JsonObject().put("type", "new_thread").put("agent", "demo").put("clientRef", "r1"))
        .next(f -> "thread".equals(f.getString("type")) && "r1".equals(f.getValue("clientRef")), "our thread");
    assertEquals("r1", t.getString("clientRef"));
    assertEquals("demo", t.getString("agent"));
    return t.getString("threadId");
  }

  /** A new thread, attached to by {@code c} (its attach ended). */
  private String attachedThread(ChatClient c) {
    String t = newThread(c);
    c.send(new JsonObject().put("type", "attach").put("threadId", t));
    c.next("turn");
    return t;
  }

  private JsonObject error(ChatClient c) {
    return c.next("error");
  }

  @Test
  void theUpgradeChecksTheTokenThenTheOrigin() {
    assertEquals(401, upgradeStatus(null, null));
    assertEquals(401, upgradeStatus("not-the-token", "http://127.0.0.1:" + gateway.port));
    assertEquals(403, upgradeStatus(gateway.token, "https://evil.example"));
    assertEquals(101, upgradeStatus(gateway.token, "https://allowed.example"));
    assertEquals(101, upgradeStatus(gateway.token, "http://127.0.0.1:" + gateway.port));
    assertEquals(101, upgradeStatus(gateway.token, null)); // scripts send no Origin
  }

  @Test
  void loginGivesAStrictHttpOnlyCookieThatOpensTheApi() throws Exception {
    HttpResponse<String> bad = http.send(HttpRequest.newBuilder(URI.create(gateway.url("/api/login")))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"token\":\"wrong\"}")).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(401, bad.statusCode());
    HttpResponse<String> good = http.send(HttpRequest.newBuilder(URI.create(gateway.url("/api/login")))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(new JsonObject().put("token", gateway.token).encode())).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(204, good.statusCode());
    String cookie = good.headers().firstValue("Set-Cookie").orElseThrow();
    assertTrue(cookie.toLowerCase().contains("httponly"), cookie);
    assertTrue(cookie.contains("SameSite=Strict"), cookie);
    String session = cookie.substring(0, cookie.indexOf(';'));
    assertEquals(401, http.send(HttpRequest.newBuilder(URI.create(gateway.url("/api/permissions"))).build(),
        HttpResponse.BodyHandlers.ofString()).statusCode());
    HttpResponse<String> ledger = http.send(HttpRequest.newBuilder(URI.create(gateway.url("/api/permissions?state=all")))
        .header("Cookie", session).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, ledger.statusCode());
    assertNotNull(new JsonObject(ledger.body()).getJsonArray("requests"));
    assertEquals(200, http.send(HttpRequest.newBuilder(URI.create(gateway.url("/api/permissions")))
        .header("Authorization", "Bearer " + gateway.token).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
    assertEquals(400, http.send(HttpRequest.newBuilder(URI.create(gateway.url("/api/permissions?limit=x")))
        .header("Authorization", "Bearer " + gateway.token).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
  }

  @Test
  void thePageIsServedWithAStrictPolicyAndNoInlineScript() throws Exception {
    HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create(gateway.url("/"))).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, page.statusCode());
    String csp = page.headers().firstValue("Content-Security-Policy").orElseThrow();
    assertTrue(csp.contains("script-src 'self' 'sha256-") && !csp.contains("unsafe-inline"), csp);
    assertTrue(csp.contains("frame-ancestors 'none'"), csp);
    assertEquals("nosniff", page.headers().firstValue("X-Content-Type-Options").orElseThrow());
    // One inline script, the import map the build wrote (versions filled in), allowed by its hash only.
    java.util.regex.Matcher inline = java.util.regex.Pattern.compile("(?s)<script(?![^>]*\\bsrc=)([^>]*)>(.*?)</script>")
        .matcher(page.body());
    assertTrue(inline.find(), "the import map");
    assertEquals(" type=\"importmap\"", inline.group(1));
    String importMap = inline.group(2);
    String hash = java.util.Base64.getEncoder().encodeToString(java.security.MessageDigest.getInstance("SHA-256")
        .digest(importMap.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    assertTrue(csp.contains("'sha256-" + hash + "'"), csp);
    assertFalse(inline.find(), "no other inline script in index.html");
    assertFalse(page.body().contains("${"), "every version filled in by the build");
    JsonObject imports = new JsonObject(importMap).getJsonObject("imports");
    HttpResponse<String> purify = http.send(HttpRequest.newBuilder(URI.create(
        gateway.url(imports.getString("dompurify")))).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, purify.statusCode());
    assertTrue(purify.headers().firstValue("Content-Type").orElseThrow().startsWith("text/javascript"));
    assertEquals(200, http.send(HttpRequest.newBuilder(URI.create(gateway.url(imports.getString("marked"))))
        .build(), HttpResponse.BodyHandlers.ofString()).statusCode());
  }

  @Test
  void theReasonsAQuestionEndsForAreServedInWordsToThoseLoggedIn() throws Exception {
    URI reasons = URI.create(gateway.url("/api/reasons"));
    assertEquals(401, http.send(HttpRequest.newBuilder(reasons).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
    HttpResponse<String> words = http.send(HttpRequest.newBuilder(reasons)
        .header("Authorization", "Bearer " + gateway.token).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, words.statusCode());
    JsonObject all = new JsonObject(words.body()).getJsonObject("reasons");
    assertEquals("the turn was stopped", all.getString(io.switchboard.permission.PermissionRoom.SESSION_CANCELLED));
    assertEquals(io.switchboard.permission.CancelReason.values().length, all.size());
  }

  @Test
  void aWholeTurnWithACardAnsweredOverTheSocket() throws Exception {
    ChatClient c = client();
    String t = newThread(c);
    c.send(new JsonObject().put("type", "attach").put("threadId", t));
    assertFalse(c.next("turn").getBoolean("busy"));
    c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "hello there"));
    JsonObject first = c.next("event");
    assertEquals("user_message", first.getJsonObject("event").getString("kind"));
    assertEquals(1, first.getLong("seq"));
    assertTrue(c.next("turn").getBoolean("busy"));
    JsonObject card = c.next("permission_request");
    assertEquals(t, card.getString("threadId"));
    assertNotNull(card.getString("createdAt"));
    c.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
        .put("optionId", "allow-once"));
    JsonObject resolved = c.next("permission_resolved");
    assertEquals("selected", resolved.getJsonObject("outcome").getString("outcome"));
    assertEquals("web", resolved.getJsonObject("outcome").getJsonObject("answeredBy").getString("surface"));
    JsonObject end = c.next(f -> "event".equals(f.getString("type"))
        && "turn_ended".equals(f.getJsonObject("event").getString("kind")), "turn_ended");
    assertEquals("end_turn", end.getJsonObject("event").getString("stopReason"));
    assertFalse(c.next("turn").getBoolean("busy"));
    assertTrue(Files.exists(gateway.workspace(t).resolve("demo-notes.md")));
    // The audit view's rows carry each request's ledger events (its attention steps among them).
    JsonObject audited = new JsonObject(http.send(HttpRequest.newBuilder(URI.create(gateway.url(
        "/api/permissions?state=all"))).header("Authorization", "Bearer " + gateway.token).build(),
        HttpResponse.BodyHandlers.ofString()).body()).getJsonArray("requests").getJsonObject(0);
    assertEquals(List.of("registered", "selected"), audited.getJsonArray("events").stream()
        .map(e -> ((JsonObject) e).getString("event")).toList(), audited.encode());
    // seq increases by one with no gaps
    long expected = 1;
    for (JsonObject f : c.seen) {
      if ("event".equals(f.getString("type"))) {
        assertEquals(expected++, f.getLong("seq"));
      }
    }
    c.send(new JsonObject().put("type", "ping"));
    c.next("pong");
    // The welcome of a new socket lists the thread.
    ChatClient other = ChatClient.open(vertx, gateway.port, gateway.token);
    clients.add(other);
    assertEquals(t, other.next("welcome").getJsonArray("threads").getJsonObject(0).getString("threadId"));
  }

  @Test
  void anImageReachesTheAgentAndTheTranscriptKeepsOnlyAPreview() throws Exception {
    ChatClient c = client();
    String t = attachedThread(c);
    String data = io.switchboard.testkit.TestImages.pngBase64(300, 200);
    c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "")
        .put("images", new JsonArray().add(new JsonObject().put("mimeType", "image/png").put("data", data))));
    JsonObject asked = c.next("event").getJsonObject("event");
    assertEquals("user_message", asked.getString("kind"));
    JsonObject kept = asked.getJsonArray("images").getJsonObject(0);
    assertEquals("image/png", kept.getString("mimeType"));
    assertEquals("data:image/png;base64," + data, kept.getString("preview"), "a small image is its own preview");
    JsonObject told = c.next(f -> "event".equals(f.getString("type"))
        && "agent_message_chunk".equals(f.getJsonObject("event").getJsonObject("update", new JsonObject())
            .getString("sessionUpdate"))
        && "image".equals(f.getJsonObject("event").getJsonObject("update").getJsonObject("content").getString("type")),
        "the image back");
    assertEquals(data, told.getJsonObject("event").getJsonObject("update").getJsonObject("content").getString("data"));
    String said = c.seen.stream().filter(f -> "event".equals(f.getString("type")))
        .map(f -> f.getJsonObject("event").getJsonObject("update"))
        .filter(u -> u != null && u.getJsonObject("content") != null)
        .map(u -> u.getJsonObject("content").getString("text", "")).reduce("", String::concat);
    assertTrue(said.contains("image/png") && said.contains("300\u00d7200 pixels"), said);
    assertTrue(c.seen.stream().anyMatch(f -> "event".equals(f.getString("type"))
        && "prompt_capabilities".equals(f.getJsonObject("event").getString("kind"))
        && f.getJsonObject("event").getBoolean("image")), "the page is told the agent takes images");

    c.next(f -> "event".equals(f.getString("type"))
        && "turn_ended".equals(f.getJsonObject("event").getString("kind")), "turn_ended");
    // A large image from an agent is shown whole live; the transcript keeps a note of it.
    String big = io.switchboard.testkit.TestImages.pngBase64(10, 10) + "A".repeat(100_000);
    await(vertx.eventBus().request(Addresses.THREAD_RECORD, new JsonObject().put("threadId", t).put("event",
        new JsonObject().put("kind", "acp").put("update", new JsonObject().put("sessionUpdate", "agent_message_chunk")
            .put("content", new JsonObject().put("type", "image").put("mimeType", "image/png").put("data", big))))));
    JsonObject live = c.next(f -> "event".equals(f.getString("type")) && big.equals(f.getJsonObject("event")
        .getJsonObject("update", new JsonObject()).getJsonObject("content", new JsonObject()).getString("data")),
        "the big image live");
    JsonObject note = await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_HISTORY, new JsonObject()
        .put("threadId", t).put("afterSeq", live.getLong("seq") - 1).put("limit", 1))).body().getJsonArray("events")
        .getJsonObject(0).getJsonObject("event").getJsonObject("update").getJsonObject("content");
    assertFalse(note.containsKey("data"), "not kept whole");
    assertEquals(big.length() / 4 * 3, note.getInteger("omittedBytes"));
    // What is wrong is named, and nothing is recorded.
    JsonObject png = new JsonObject().put("mimeType", "image/png").put("data", data);
    String[][] bad = {
        {new JsonArray().add(png).add(png).add(png).add(png).add(png).encode(), "at most 4"},
        {new JsonArray().add(new JsonObject().put("mimeType", "image/svg+xml").put("data", data)).encode(), "svg"},
        {new JsonArray().add(new JsonObject().put("mimeType", "image/jpeg").put("data", data)).encode(), "do not start"},
        {new JsonArray().add(new JsonObject().put("mimeType", "image/png").put("data", "%%%")).encode(), "base64"},
        {new JsonArray().add(png.copy().put("preview", "javascript:alert(1)")).encode(), "preview"},
        {"\"a picture\"", "list"},
        // An attacker's probe: a video dressed as a WebP, and a PNG of a few KB declaring 60000x60000 pixels.
        {new JsonArray().add(new JsonObject().put("mimeType", "image/webp").put("data", java.util.Base64.getEncoder()
            .encodeToString(("RIFF\u00c8\0\0\0AVI LIST" + "\0".repeat(188)).getBytes(java.nio.charset.StandardCharsets.ISO_8859_1))))
            .encode(), "its RIFF container holds \"AVI \", not \"WEBP\""},
        {new JsonArray().add(new JsonObject().put("mimeType", "image/png").put("data", java.util.Base64.getEncoder()
            .encodeToString(io.switchboard.testkit.TestImages.declaring(io.switchboard.testkit.TestImages.noisePng(35, 35, 1),
                60_000, 60_000)))).encode(), "60000\u00d760000 pixels"},
    };
    JsonObject before = await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_GET,
        new JsonObject().put("threadId", t))).body();
    for (String[] b : bad) {
      c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "look")
          .put("images", new JsonArray("[" + b[0] + "]").getValue(0)));
      String message = error(c).getString("message");
      assertTrue(message.contains(b[1]), b[1] + " in: " + message);
    }
    JsonObject after = await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_GET,
        new JsonObject().put("threadId", t))).body();
    assertEquals(before.getValue("lastSeq"), after.getValue("lastSeq"), "no refused prompt was recorded");
  }

  private void record(String threadId, JsonObject update) {
    await(vertx.eventBus().request(Addresses.THREAD_RECORD, new JsonObject().put("threadId", threadId)
        .put("event", new JsonObject().put("kind", "acp").put("update", update))));
  }

  @Test
  void theAgentNamesTheThreadUntilAPersonDoesAndArchivingHidesItUntilRestored() throws Exception {
    ChatClient c = client();
    String t = newThread(c);
    record(t, new JsonObject().put("sessionUpdate", "session_info_update").put("title", "Fix the login bug"));
    JsonObject named = c.next(f -> "thread".equals(f.getString("type")) && t.equals(f.getString("threadId"))
        && "Fix the login bug".equals(f.getString("title")), "the agent's title");
    assertFalse(named.getBoolean("archived"));
    c.send(new JsonObject().put("type", "rename_thread").put("threadId", t).put("title", "Mine"));
    c.next(f -> "thread".equals(f.getString("type")) && "Mine".equals(f.getString("title")), "the person's title");
    record(t, new JsonObject().put("sessionUpdate", "session_info_update").put("title", "The agent's again"));
    assertEquals("Mine", await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_GET,
        new JsonObject().put("threadId", t))).body().getString("title"), "a person's title is never overridden");

    c.send(new JsonObject().put("type", "archive_thread").put("threadId", t));
    c.next(f -> "thread".equals(f.getString("type")) && t.equals(f.getString("threadId"))
        && f.getBoolean("archived"), "archived");
    ChatClient later = client(); // a page opened now (and after a restart: the row keeps it) lists it as archived
    assertTrue(later.seen.get(0).getJsonArray("threads").stream().map(JsonObject.class::cast)
        .anyMatch(x -> t.equals(x.getString("threadId")) && x.getBoolean("archived")), later.seen.get(0).encode());
    c.send(new JsonObject().put("type", "archive_thread").put("threadId", t).put("archived", "yes"));
    assertTrue(error(c).getString("message").contains("archived"));
    // A message to it (from an IM chat that still has it, say) brings it back.
    c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "still there?"));
    c.next(f -> "thread".equals(f.getString("type")) && t.equals(f.getString("threadId"))
        && !f.getBoolean("archived"), "restored by a message");
    // At work, it is not archived: its question would wait where nobody looks.
    c.send(new JsonObject().put("type", "attach").put("threadId", t));
    c.next("permission_request");
    c.send(new JsonObject().put("type", "archive_thread").put("threadId", t));
    JsonObject busy = error(c);
    assertEquals("busy", busy.getString("code"));
    assertTrue(busy.getString("message").contains("at work"), busy.getString("message"));
  }

  @Test
  void onlyAnArchivedIdleThreadNoChatFollowsIsDeletedAndTheLedgerKeepsItsRequests() throws Exception {
    ChatClient c = client();
    String t = attachedThread(c);
    c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "note this"));
    String requestId = c.next("permission_request").getString("requestId");
    c.send(new JsonObject().put("type", "permission_answer").put("requestId", requestId).put("optionId", "allow-once"));
    c.next(f -> "turn".equals(f.getString("type")) && !f.getBoolean("busy") && c.seen.stream().anyMatch(
        e -> "permission_resolved".equals(e.getString("type"))), "the turn's end");
    assertTrue(Files.exists(gateway.workspace(t).resolve("demo-notes.md")));
    c.send(new JsonObject().put("type", "delete_thread").put("threadId", t));
    assertTrue(error(c).getString("message").contains("archive it before deleting it"));
    // A thread an IM chat follows is not deleted: the chat would be left pointing at nothing.
    String im = await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_CREATE,
        new JsonObject().put("agent", "demo").put("surface", "telegram:42"))).body().getString("threadId");
    c.send(new JsonObject().put("type", "archive_thread").put("threadId", im));
    c.next(f -> "thread".equals(f.getString("type")) && im.equals(f.getString("threadId")) && f.getBoolean("archived"),
        "the IM thread archived");
    c.send(new JsonObject().put("type", "delete_thread").put("threadId", im));
    assertTrue(error(c).getString("message").contains("telegram:42"));

    c.send(new JsonObject().put("type", "archive_thread").put("threadId", t));
    c.send(new JsonObject().put("type", "delete_thread").put("threadId", t));
    JsonObject gone = c.next(f -> "thread".equals(f.getString("type")) && t.equals(f.getString("threadId"))
        && f.getBoolean("deleted", false), "the deletion");
    assertEquals(t, gone.getString("threadId"));
    assertEquals(ErrorCode.UNKNOWN_THREAD, io.switchboard.testkit.PermissionHarness.errorOf(
        vertx.eventBus().request(Addresses.THREAD_GET, new JsonObject().put("threadId", t))));
    assertFalse(Files.exists(gateway.workspace(t)), "the workspace is gone");
    try (java.sql.Connection db = java.sql.DriverManager.getConnection("jdbc:sqlite:" + gateway.settings.databaseFile());
         java.sql.ResultSet rows = db.createStatement().executeQuery(
             "SELECT (SELECT COUNT(*) FROM transcript WHERE thread_id = '" + t + "'), "
                 + "(SELECT COUNT(*) FROM thread WHERE thread_id = '" + t + "')")) {
      assertEquals(0, rows.getInt(1), "no transcript left");
      assertEquals(0, rows.getInt(2), "no thread row left");
    }
    JsonObject row = await(vertx.eventBus().<JsonObject>request(Addresses.STORE_LEDGER_GET,
        new JsonObject().put("requestId", requestId))).body().getJsonObject("request");
    assertEquals("allow-once", row.getJsonObject("outcome").getString("optionId"), "the audit outlives the thread");
    ChatClient later = client();
    assertTrue(later.seen.get(0).getJsonArray("threads").stream().map(JsonObject.class::cast)
        .noneMatch(x -> t.equals(x.getString("threadId"))));
  }

  @Test
  void everyErrorCode() throws Exception {
    ChatClient c = client();
    String t = newThread(c);
    c.send("not json");
    assertEquals("bad_frame", error(c).getString("code"));
    c.send("[1,2]");
    assertEquals("bad_frame", error(c).getString("code"));
    c.send("{}");
    assertTrue(error(c).getString("message").contains("type"));
    c.send(new JsonObject().put("type", "dance"));
    assertTrue(error(c).getString("message").contains("dance"));
    c.send(new JsonObject().put("type", "prompt").put("threadId", t));
    assertTrue(error(c).getString("message").contains("text"));
    c.send(new JsonObject().put("type", "attach").put("threadId", "t_nope"));
    assertEquals("unknown_thread", error(c).getString("code"));
    c.send(new JsonObject().put("type", "prompt").put("threadId", "t_nope").put("text", "x").put("clientRef", 7));
    JsonObject unknownThread = error(c);
    assertEquals("unknown_thread", unknownThread.getString("code"));
    assertEquals(7, unknownThread.getInteger("clientRef"));
    c.send(new JsonObject().put("type", "new_thread").put("agent", "nobody"));
    assertTrue(error(c).getString("message").contains("nobody"));
    c.send(new JsonObject().put("type", "permission_answer").put("requestId", "pr_nope").put("optionId", "x"));
    JsonObject unknown = error(c);
    assertEquals("unknown_request", unknown.getString("code"));
    assertEquals("pr_nope", unknown.getString("requestId"));

    c.send(new JsonObject().put("type", "attach").put("threadId", t));
    c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "edit please"));
    String requestId = c.next("permission_request").getString("requestId");
    c.send(new JsonObject().put("type", "permission_answer").put("requestId", requestId).put("optionId", "maybe"));
    assertEquals("invalid_option", error(c).getString("code"));
    c.send(new JsonObject().put("type", "permission_answer").put("requestId", requestId).put("optionId", "reject"));
    c.next("permission_resolved");
    c.send(new JsonObject().put("type", "permission_answer").put("requestId", requestId).put("optionId", "reject"));
    assertEquals("already_answered", error(c).getString("code"));

    // A card raised while only an IM chat was attached: the web (the operator's console) may answer it.
    JsonObject im = await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_CREATE,
        new JsonObject().put("agent", "demo").put("surface", "telegram:42"))).body();
    String imThread = im.getString("threadId");
    List<JsonObject> shown = new java.util.concurrent.CopyOnWriteArrayList<>();
    vertx.eventBus().<JsonObject>consumer(Addresses.PERMISSION_SHOWN, m -> shown.add(m.body()));
    await(vertx.eventBus().request(Addresses.THREAD_PROMPT, new JsonObject().put("threadId", imThread)
        .put("text", "from telegram").put("surface", "telegram:42")));
    io.switchboard.testkit.PermissionHarness.waitFor(() -> shown.stream()
        .anyMatch(card -> card.getString("threadId").equals(imThread)), "the IM card");
    c.send(new JsonObject().put("type", "attach").put("threadId", imThread));
    String imRequest = c.next("permission_request").getString("requestId");
    c.send(new JsonObject().put("type", "permission_answer").put("requestId", imRequest).put("optionId", "allow-once"));
    assertEquals("web", c.next(f -> "permission_resolved".equals(f.getString("type"))
        && imRequest.equals(f.getString("requestId")), "the IM card answered from the web")
        .getJsonObject("outcome").getJsonObject("answeredBy").getString("surface"));
    // Another chat still may not.
    c.send(new JsonObject().put("type", "prompt").put("threadId", imThread).put("text", "again")
        .put("surface", "telegram:42"));
    String second = c.next(f -> "permission_request".equals(f.getString("type"))
        && !imRequest.equals(f.getString("requestId")), "the second IM card").getString("requestId");
    assertEquals(ErrorCode.NOT_ELIGIBLE, io.switchboard.testkit.PermissionHarness.errorOf(vertx.eventBus().request(
        Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", second).put("optionId", "allow-once")
            .put("surface", "slack:C1"))));
    c.send(new JsonObject().put("type", "permission_answer").put("requestId", second).put("optionId", "reject"));
    c.next(f -> "permission_resolved".equals(f.getString("type")) && second.equals(f.getString("requestId")),
        "the second card answered from the web");

    // A full lane: 16 prompts wait at most.
    String busyThread = newThread(c);
    for (int i = 0; i < 20; i++) {
      c.send(new JsonObject().put("type", "prompt").put("threadId", busyThread).put("text", "p" + i));
      // The thread room answers in order: a barrier that lets each prompt be taken before the next.
      await(vertx.eventBus().request(Addresses.THREAD_GET, new JsonObject().put("threadId", busyThread)));
    }
    String code = c.next(f -> "error".equals(f.getString("type")) && "busy".equals(f.getString("code")), "busy")
        .getString("code");
    assertEquals("busy", code);
  }

  @Test
  void everyFrameThatCanAnswerUnknownThreadEchoesItsClientRef() {
    ChatClient c = client();
    JsonObject[] frames = {
        new JsonObject().put("type", "attach"),
        new JsonObject().put("type", "prompt").put("text", "hello"),
        new JsonObject().put("type", "cancel"),
        new JsonObject().put("type", "set_mode").put("modeId", "plan"),
        new JsonObject().put("type", "set_config").put("configId", "model").put("value", "fast"),
        new JsonObject().put("type", "rename_thread").put("title", "new name"),
        new JsonObject().put("type", "archive_thread"),
        new JsonObject().put("type", "archive_thread").put("archived", false),
        new JsonObject().put("type", "delete_thread"),
        new JsonObject().put("type", "changes"),
        new JsonObject().put("type", "commit").put("message", "work"),
        new JsonObject().put("type", "merge"),
        new JsonObject().put("type", "discard"),
        new JsonObject().put("type", "keep"),
    };
    int n = 0;
    for (JsonObject f : frames) {
      // Numbers and strings both: a clientRef comes back as it was sent.
      Object ref = n++ % 2 == 0 ? (Object) ("ref-" + f.getString("type")) : (Object) n;
      c.send(f.copy().put("threadId", "t_nope").put("clientRef", ref));
      JsonObject error = error(c);
      assertEquals("unknown_thread", error.getString("code"), f + " -> " + error);
      assertEquals(ref, error.getValue("clientRef"), f + " -> " + error);
    }
  }

  @Test
  void aFloodOfQuestionsReachesEveryPageAsAFewBatchedCountsNotAFrameEach() {
    ChatClient c = client();
    ChatClient bystander = client(); // an open page attached to nothing still hears every count
    String t = newThread(c);
    bystander.next(f -> "thread".equals(f.getString("type")) && t.equals(f.getString("threadId")), "the new thread");
    // An agent that asks 50 questions in one breath, then has its session cancelled.
    int asked = 50;
    for (int i = 0; i < asked; i++) {
      vertx.eventBus().request(Addresses.PERMISSION_REGISTER,
          io.switchboard.testkit.PermissionHarness.request(t, "flood", "flood-" + i, "web"),
          io.switchboard.bus.Bus.untilEnded());
    }
    List<JsonObject> counts = new ArrayList<>();
    java.util.function.Supplier<Integer> last = () -> counts.isEmpty() ? -1
        : counts.get(counts.size() - 1).getJsonObject("counts").getInteger(t);
    while (last.get() != asked) {
      counts.add(bystander.next("pending"));
    }
    vertx.eventBus().publish(Addresses.SESSION_CANCELLED, new JsonObject().put("threadId", t).put("sessionId", "flood"));
    while (last.get() != 0) {
      counts.add(bystander.next("pending"));
    }
    assertTrue(counts.size() < asked, "a frame per question reached the page: " + counts.size());
    for (JsonObject f : counts) {
      assertEquals(List.of(t), List.copyOf(f.getJsonObject("counts").fieldNames()), "only the changed thread: " + f);
    }
    // A page opened now is told the same count as every other page.
    ChatClient late = ChatClient.open(vertx, gateway.port, gateway.token);
    clients.add(late);
    JsonObject listed = late.next("welcome").getJsonArray("threads").stream().map(JsonObject.class::cast)
        .filter(x -> t.equals(x.getString("threadId"))).findFirst().orElseThrow();
    assertEquals(0, listed.getInteger("pending"));
  }

  @Test
  void anOversizedFrameAndGarbageChangeNothingAndTheSocketStaysOpen() throws Exception {
    ChatClient c = client();
    String big = new JsonObject().put("type", "prompt").put("threadId", "x").put("text", "y".repeat(1_500_000)).encode();
    c.send(big);
    JsonObject e = error(c);
    assertEquals("bad_frame", e.getString("code"));
    assertTrue(e.getString("message").contains("1 MiB"), e.getString("message"));
    await(c.ws.writeBinaryMessage(io.vertx.core.buffer.Buffer.buffer(new byte[] {1, 2, 3})));
    assertEquals("bad_frame", error(c).getString("code"));
    c.send(new JsonObject().put("type", "ping"));
    c.next("pong");
    JsonObject threads = await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_LIST, new JsonObject())).body();
    assertEquals(0, threads.getJsonArray("threads").size(), "nothing was created");
  }

  @Test
  void resumeAfterADisconnectWithACardPending() {
    ChatClient first = client();
    String t = newThread(first);
    first.send(new JsonObject().put("type", "attach").put("threadId", t));
    first.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "resume me"));
    String requestId = first.next("permission_request").getString("requestId");
    long lastSeq = first.seen.stream().filter(f -> "event".equals(f.getString("type")))
        .mapToLong(f -> f.getLong("seq")).max().orElseThrow();
    first.close();

    ChatClient second = client();
    second.send(new JsonObject().put("type", "attach").put("threadId", t).put("afterSeq", lastSeq));
    JsonObject card = second.next("permission_request");
    assertEquals(requestId, card.getString("requestId"));
    assertTrue(second.next("turn").getBoolean("busy"));
    assertTrue(second.seen.stream().filter(f -> "event".equals(f.getString("type")))
        .allMatch(f -> f.getLong("seq") > lastSeq), "only events after afterSeq are replayed");
    second.send(new JsonObject().put("type", "permission_answer").put("requestId", requestId).put("optionId", "allow-once"));
    assertEquals("selected", second.next("permission_resolved").getJsonObject("outcome").getString("outcome"));
  }

  @Test
  void twoSocketsAnswerTheSameCardAtOnceAndExactlyOneWins() {
    ChatClient a = client();
    ChatClient b = client();
    String t = newThread(a);
    a.send(new JsonObject().put("type", "attach").put("threadId", t));
    b.send(new JsonObject().put("type", "attach").put("threadId", t));
    a.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "race"));
    String requestId = a.next("permission_request").getString("requestId");
    assertEquals(requestId, b.next("permission_request").getString("requestId"));
    JsonObject answer = new JsonObject().put("type", "permission_answer").put("requestId", requestId);
    a.ws.writeTextMessage(answer.copy().put("optionId", "allow-once").encode());
    b.ws.writeTextMessage(answer.copy().put("optionId", "reject").encode());
    JsonObject resolvedA = a.next("permission_resolved");
    JsonObject resolvedB = b.next("permission_resolved");
    assertEquals(resolvedA.getJsonObject("outcome"), resolvedB.getJsonObject("outcome"), "every tab sees the same end");
    a.next(f -> "event".equals(f.getString("type")) && "turn_ended".equals(f.getJsonObject("event").getString("kind")),
        "turn_ended");
    long refusals = 0;
    for (ChatClient c : List.of(a, b)) {
      c.drain();
      refusals += c.seen.stream().filter(f -> "error".equals(f.getString("type"))
          && "already_answered".equals(f.getString("code"))).count();
    }
    assertEquals(1, refusals, "the loser is told already_answered");
  }

  @Test
  void liveEventsThatNeverArrivedAreFetchedFromTheTranscriptInOrder() throws Exception {
    ChatClient c = client();
    String t = attachedThread(c);
    long last = vertx.eventBus().<JsonObject>request(Addresses.THREAD_GET, new JsonObject().put("threadId", t))
        .toCompletionStage().toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS).body()
        .getLong("lastSeq");
    // Two events written and published, their publication lost on the way (a cut between nodes)...
    for (long seq = last + 1; seq <= last + 2; seq++) {
      vertx.eventBus().request(Addresses.STORE_TRANSCRIPT_APPEND, new JsonObject().put("threadId", t).put("seq", seq)
              .put("at", 1L).put("event", new JsonObject().put("kind", "system").put("text", "missed " + seq)))
          .toCompletionStage().toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
    }
    // ...and the next one arrives: the page gets all three, in order, each once.
    vertx.eventBus().publish(Addresses.threadEvents(t), new JsonObject().put("threadId", t).put("seq", last + 3)
        .put("at", 1L).put("event", new JsonObject().put("kind", "system").put("text", "live")));
    List<Long> seqs = new java.util.ArrayList<>();
    while (seqs.size() < 3) {
      seqs.add(c.next(f -> "event".equals(f.getString("type")) && t.equals(f.getString("threadId")), "an event")
          .getLong("seq"));
    }
    assertEquals(List.of(last + 1, last + 2, last + 3), seqs);
    c.send(new JsonObject().put("type", "ping"));
    c.next("pong");
    assertEquals(3, c.seen.stream().filter(f -> "event".equals(f.getString("type"))
        && f.getLong("seq") > last).count(), "each event once");
  }

  /** The open /ws/chat sockets, as /metrics counts them. */
  private int openSockets() {
    try {
      String text = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(gateway.url("/metrics")))
          .header("Authorization", "Bearer " + gateway.token).build(),
          java.net.http.HttpResponse.BodyHandlers.ofString()).body();
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^switchboard_websocket_connections\\S* (\\S+)$")
          .matcher(text);
      if (!m.find()) {
        throw new AssertionError("no switchboard_websocket_connections in /metrics:\n" + text);
      }
      return (int) Double.parseDouble(m.group(1));
    } catch (java.io.IOException | InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aBrowserThatStopsReadingIsDisconnectedWithAReason() throws Exception {
    ChatClient slow = client();
    String t = attachedThread(slow);
    slow.ws.pause();
    String chunk = "z".repeat(500_000);
    for (int i = 0; i < 100; i++) {
      vertx.eventBus().publish(Addresses.threadEvents(t), new JsonObject().put("threadId", t).put("seq", 1000 + i)
          .put("at", 0L).put("event", new JsonObject().put("kind", "system").put("text", chunk)));
    }
    // The server gives up on it (its socket no longer counted open); reading again shows why.
    io.switchboard.testkit.PermissionHarness.waitFor(() -> openSockets() == 0, "the slow socket closed by the server");
    slow.ws.resume();
    io.switchboard.testkit.PermissionHarness.waitFor(() -> slow.closeCode != null, "the close frame");
    assertEquals((short) 1008, slow.closeCode);
    assertTrue(slow.closeReason.contains("stopped reading"), slow.closeReason);
    // Others are unaffected.
    ChatClient fine = client();
    fine.send(new JsonObject().put("type", "ping"));
    fine.next("pong");
  }


  @Test
  void aClientFarBehindGetsEveryEventTheTranscriptHasNotOnlyTheLastPage() {
    ChatClient c = client();
    String t = newThread(c);
    int events = ChatSocket.REPLAY_LIMIT * 2 + 500;
    for (int i = 1; i <= events; i++) {
      vertx.eventBus().request(io.switchboard.bus.Addresses.THREAD_RECORD, new JsonObject().put("threadId", t)
          .put("event", new JsonObject().put("kind", "system").put("text", "event " + i)));
    }
    waitFor(() -> await(vertx.eventBus().<JsonObject>request(io.switchboard.bus.Addresses.THREAD_GET,
        new JsonObject().put("threadId", t))).body().getLong("lastSeq") == events, events + " events recorded");
    ChatClient late = client();
    late.send(new JsonObject().put("type", "attach").put("threadId", t).put("afterSeq", 0));
    late.next("turn"); // sent after the replay
    List<Long> seqs = late.seen.stream().filter(f -> "event".equals(f.getString("type")))
        .map(f -> f.getLong("seq")).toList();
    assertEquals(events, seqs.size(), "every event from 1 to " + events);
    assertEquals(1L, seqs.get(0));
    assertEquals((long) events, seqs.get(seqs.size() - 1));
  }
}
