package io.switchboard.plugin;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.config.PluginSpec;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.switchboard.testkit.PluginControl;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Scripted IM plugins of both dialects against the whole gateway and the demo agent. */
@ExtendWith(VertxExtension.class)
class PluginRoomTest {
  static final PluginRoom.Timings FAST = new PluginRoom.Timings(300, 2_000, 4, 30_000, 90_000);

  @TempDir
  Path dir;
  GatewayHarness gateway;
  Vertx vertx;

  private PluginControl start(Vertx vertx, String dialect, List<String> approvers, String... flags) throws Exception {
    return start(vertx, dialect, approvers, List.of(io.switchboard.config.PluginSpec.ANYONE), flags);
  }

  private PluginControl start(Vertx vertx, String dialect, List<String> approvers, List<String> users,
                              String... flags) throws Exception {
    this.vertx = vertx;
    PluginControl plugin = new PluginControl(dir.resolve("fake"));
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(),
        List.of(plugin.spec("fake", dialect, approvers, users, flags)), FAST, AgentHarness.demo());
    plugin.awaitType("initialized", 1);
    return plugin;
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
  }

  private JsonObject ledger(String requestId) {
    return await(vertx.eventBus().<JsonObject>request(Addresses.STORE_LEDGER_GET,
        new JsonObject().put("requestId", requestId))).body().getJsonObject("request");
  }

  private String threadOf(String surface) {
    JsonArray threads = await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_LIST, new JsonObject())).body()
        .getJsonArray("threads");
    return threads.stream().map(t -> (JsonObject) t).filter(t -> t.getJsonArray("routes").contains(surface))
        .map(t -> t.getString("threadId")).reduce((a, b) -> b).orElseThrow();
  }

  private String requestIdOf(JsonObject card) {
    JsonObject p = card.getJsonObject("params");
    return p.containsKey("_meta") ? p.getJsonObject("_meta").getJsonObject("switchboard").getString("requestId")
        : null;
  }

  @Test
  void acpAWholeTurnWithACardTappedOnThePlugin(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of());
    String stateDir = plugin.awaitType("started", 1).getString("stateDir");
    assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(
        Files.getPosixFilePermissions(Path.of(stateDir))));
    plugin.prompt("42", "42", "note this from telegram");
    JsonObject card = plugin.awaitType("card", 1);
    assertEquals("session/request_permission", card.getString("method"));
    plugin.tap(card.getString("key"), "allow-once", "42");
    JsonObject result = plugin.await(r -> "prompt_result".equals(r.getString("type")), 1, "the prompt's answer");
    assertEquals("end_turn", result.getJsonObject("response").getJsonObject("result").getString("stopReason"));
    String thread = threadOf("fake:42");
    assertTrue(Files.readString(gateway.workspace(thread).resolve("demo-notes.md")).contains("note this"));
    assertFalse(plugin.received(PluginControl.method("session/update")).isEmpty(), "the text streamed");
    // Every output of the turn was written before the prompt's answer (the output barrier).
    List<JsonObject> all = plugin.received();
    int answer = all.indexOf(result);
    int finalReply = all.indexOf(plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && "final".equals(r.getJsonObject("params").getString("kind")), 1, "the final reply"));
    assertTrue(finalReply < answer, "final reply before the prompt's answer");
    JsonObject row = ledger(requestIdOf(card));
    assertEquals("fake:42", row.getJsonObject("outcome").getJsonObject("answeredBy").getString("surface"));
    assertEquals("42", row.getJsonObject("outcome").getJsonObject("answeredBy").getString("user"));
  }

  /**
   * Rules end to end in a chat, with the demo agent: an allow rule answers with no card (one line
   * instead, the ledger naming the rule); "Always" tapped on a card makes a thread grant the same
   * call meets next time; /rules lists it with its use; /revoke takes it back and the card returns.
   */
  @Test
  void rulesAnswerInAChatAndAGrantTakenBackWithRevokeAsksAgain(Vertx vertx) throws Exception {
    this.vertx = vertx;
    PluginControl plugin = new PluginControl(dir.resolve("fake"));
    io.switchboard.config.Settings settings = new io.switchboard.config.Settings(
        new io.switchboard.config.Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("data"), "demo",
        List.of(AgentHarness.demo()), List.of(plugin.spec("fake", "acp", List.of("42"))),
        io.switchboard.config.Settings.LogFormat.TEXT).withRules(List.of(io.switchboard.rules.RuleSpecs.fromConfig(
            new JsonObject().put("id", "notes").put("effect", "allow").put("kinds", new JsonArray().add("edit"))
                .put("paths", new JsonArray().add("demo-notes.md")))));
    gateway = new GatewayHarness(vertx, settings, new io.switchboard.Gateway.Tuning(FAST,
        io.switchboard.Gateway.Tuning.DEFAULT.outboxStuckMs()));
    plugin.awaitType("initialized", 1);

    plugin.prompt("42", "42", "note this from telegram");
    JsonObject line = plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").startsWith("\u2705 Allowed by rule notes"), 1, "the rule's line");
    plugin.await(r -> "prompt_result".equals(r.getString("type")), 1, "the turn's end");
    assertTrue(plugin.received(r -> "card".equals(r.getString("type"))).isEmpty(), "no card: " + line.encode());
    String thread = threadOf("fake:42");
    assertTrue(Files.readString(gateway.workspace(thread).resolve("demo-notes.md")).contains("note this"));

    plugin.prompt("42", "42", "run ls -la");
    JsonObject card = plugin.awaitType("card", 1);
    plugin.tap(card.getString("key"), "allow-always", "42");
    plugin.await(r -> "prompt_result".equals(r.getString("type")), 2, "the second turn's end");
    JsonObject answered = ledger(requestIdOf(card));
    assertEquals("allow-once", answered.getJsonObject("outcome").getString("optionId"),
        "the agent is answered once: the gateway keeps the always");
    String grant = answered.getJsonObject("outcome").getJsonObject("grant").getString("ruleId");

    plugin.prompt("42", "42", "run ls -la");
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("by rule " + grant), 1, "the grant's line");
    plugin.await(r -> "prompt_result".equals(r.getString("type")), 3, "the third turn's end");
    assertEquals(1, plugin.received(r -> "card".equals(r.getString("type"))).size(), "no second card");

    plugin.prompt("42", "42", "/rules");
    JsonObject rules = plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").startsWith("Rules in force"), 1, "/rules");
    String listed = rules.getJsonObject("params").getString("text");
    assertTrue(listed.contains(grant + ": allow execute `ls -la \u2026`, this thread") && listed.contains("used 1 time")
        && listed.contains("notes: allow edit of demo-notes.md") && listed.contains("(config)"), listed);
    assertTrue(listed.matches("(?s).*" + grant + ": [^\n]* \u2014 used 1 time, last [^(;]+ ago \\(/revoke " + grant
        + "\\).*"), "each rule's last use: " + listed);
    assertTrue(listed.matches("(?s).*notes: [^\n]* \u2014 used 1 time, last [^(;]+ ago \\(config\\).*"), listed);
    plugin.prompt("42", "42", "/revoke " + grant);
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").startsWith("Revoked " + grant), 1, "/revoke");
    // Taken back, it is listed after the rules in force, briefly, with its uses kept.
    plugin.prompt("42", "42", "/rules");
    String after = plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").startsWith("Rules in force"), 2, "/rules again")
        .getJsonObject("params").getString("text");
    String[] sections = after.split("\nEnded lately:\n");
    assertEquals(2, sections.length, after);
    assertFalse(sections[0].contains(grant), "no longer in force: " + after);
    assertTrue(sections[1].matches("\u2022 " + grant + ": allow execute `ls -la \u2026`, this thread \\([^)]*\\) \u2014 "
        + "revoked [^(;]+ ago by 42 on fake:42; used 1 time, last [^(;]+ ago"), after);
    plugin.prompt("42", "42", "run ls -la");
    JsonObject again = plugin.awaitType("card", 2);
    assertEquals("session/request_permission", again.getString("method"), "revoked: the card is back");
  }

  /**
   * A card with a reminder and a deadline, waiting in a chat: the reminder arrives as a new
   * message (an edit would not notify), the expiry as the card's end (the plugin edits its card),
   * and a tap that comes later is told it expired. The ledger holds one end.
   */
  @Test
  void aWaitingCardIsRemindedOfAsANewMessageExpiresInItsOwnStateAndALateTapIsToldSo(Vertx vertx) throws Exception {
    this.vertx = vertx;
    PluginControl plugin = new PluginControl(dir.resolve("fake"));
    io.switchboard.config.Attention attention = new io.switchboard.config.Attention(
        new io.switchboard.config.Attention.Spec(1_000L, 0L, null, 2_500L, null, null), java.util.Map.of(),
        java.util.Map.of());
    io.switchboard.config.Settings settings = new io.switchboard.config.Settings(
        new io.switchboard.config.Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("data"), "demo",
        List.of(AgentHarness.demo()), List.of(plugin.spec("fake", "acp", List.of())),
        io.switchboard.config.Settings.LogFormat.TEXT).withAttention(attention);
    gateway = new GatewayHarness(vertx, settings, new io.switchboard.Gateway.Tuning(FAST,
        io.switchboard.Gateway.Tuning.DEFAULT.outboxStuckMs()));
    plugin.awaitType("initialized", 1);
    plugin.prompt("42", "42", "note this from telegram");
    JsonObject card = plugin.awaitType("card", 1);
    String title = card.getJsonObject("params").getJsonObject("toolCall").getString("title");
    assertTrue(title.contains("expires at") && title.contains("unless answered"), "the card says its deadline: " + title);
    JsonObject reminder = plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && "reminder".equals(r.getJsonObject("params").getString("kind")), 1, "the reminder");
    assertTrue(reminder.getJsonObject("params").getString("text").contains("Still waiting"), reminder.encode());
    JsonObject end = plugin.await(PluginControl.method("_switchboard/permission_resolved"), 1, "the card's end");
    JsonObject outcome = end.getJsonObject("params").getJsonObject("outcome");
    assertEquals("expired", outcome.getString("outcome"), "an expiry, never shown as a refusal: " + end.encode());
    assertTrue(outcome.getString("rule").startsWith("deadline 2500ms"), outcome.encode());
    plugin.tap(card.getString("key"), "allow-once", "42");
    JsonObject told = plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("already expired"), 1, "the late tap's answer");
    assertTrue(told.getJsonObject("params").getString("text").contains("deadline 2500ms"), told.encode());
    JsonObject row = ledger(requestIdOf(card));
    assertEquals("expired", row.getString("state"));
    assertEquals(1, row.getJsonArray("events").stream().map(e -> ((JsonObject) e).getString("event"))
        .filter(e -> List.of("selected", "cancelled", "expired").contains(e)).count(), "one end: " + row.encode());
    assertEquals(1, plugin.received(r -> "_switchboard/text".equals(r.getString("method"))
        && "reminder".equals(r.getJsonObject("params").getString("kind"))).size(), "one reminder");
    // The agent's thread says it too, and that nobody refused: the agent was told no by the rule.
    waitFor(() -> await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_HISTORY, new JsonObject()
        .put("threadId", threadOf("fake:42")).put("afterSeq", 0).put("limit", 500))).body().getJsonArray("events")
        .encode().contains("expired unanswered (deadline 2500ms"), "the thread's note of the expiry");
  }

  @Test
  void vibearoundAWholeTurnWithACardTappedOnThePlugin(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "vibearound", List.of());
    JsonObject init = plugin.awaitType("initialized", 1).getJsonObject("response").getJsonObject("result");
    assertEquals("test", init.getJsonObject("_meta").getJsonObject("config").getString("bot_token"));
    assertFalse(init.getJsonObject("_meta").containsKey("promptDone"), "no barrier the SDK may not know");
    plugin.prompt("77", "77", "hello from va");
    JsonObject card = plugin.awaitType("card", 1);
    assertEquals("_va/request_permission", card.getString("method"));
    assertEquals("77", card.getJsonObject("params").getJsonObject("target").getString("chatId"));
    plugin.tap(card.getString("key"), "allow-once", null);
    JsonObject result = plugin.awaitType("prompt_result", 1);
    assertEquals("end_turn", result.getJsonObject("response").getJsonObject("result").getString("stopReason"));
    assertFalse(plugin.received(PluginControl.method("_va/thread_reply")).isEmpty());
    String thread = threadOf("fake:77");
    assertTrue(Files.exists(gateway.workspace(thread).resolve("demo-notes.md")));
    // The SDK keeps the chat's workspace (it sends files the agent names only from there).
    JsonObject info = plugin.await(PluginControl.method("_va/session_info"), 1, "the session info")
        .getJsonObject("params");
    assertEquals("77", info.getJsonObject("target").getString("chatId"));
    assertEquals(gateway.workspace(thread).toString(), info.getJsonObject("info").getString("workspacePath"));
    assertEquals("demo", info.getJsonObject("info").getJsonObject("agent").getString("id"));
    assertEquals("new", info.getJsonObject("info").getString("start"));
    // Only methods the SDK handles, and no second message repeating what the tapped card shows.
    java.util.Set<String> known = java.util.Set.of("_va/thread_reply", "_va/request_permission", "_va/system_text",
        "_va/session_info", "terminal/release");
    List<String> unknown = plugin.received().stream().map(r -> r.getString("method")).filter(java.util.Objects::nonNull)
        .filter(m -> !known.contains(m)).distinct().toList();
    assertEquals(List.of(), unknown, "methods VibeAround's SDK does not handle");
    assertTrue(plugin.received(PluginControl.method("_va/system_text")).stream()
        .noneMatch(t -> t.getJsonObject("params").getString("text").contains("was answered")), plugin.summary());
  }

  /** The agent's text in the thread's transcript (its message chunks, in order). */
  private String agentText(String thread) {
    StringBuilder text = new StringBuilder();
    await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_HISTORY, new JsonObject().put("threadId", thread)))
        .body().getJsonArray("events").stream().map(e -> ((JsonObject) e).getJsonObject("event"))
        .filter(e -> "acp".equals(e.getString("kind"))).map(e -> e.getJsonObject("update"))
        .filter(u -> "agent_message_chunk".equals(u.getString("sessionUpdate")))
        .forEach(u -> {
          if (u.getJsonObject("content", new JsonObject()).getValue("text") instanceof String t) {
            text.append(t);
          }
        });
    return text.toString();
  }

  @Test
  void vibearoundSessionInfoIsWhatTheSdkTakesAndAFileTheAgentLinksArrivesAsADocument(Vertx vertx) throws Exception {
    this.vertx = vertx;
    PluginControl plugin = new PluginControl(dir.resolve("fake"));
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(),
        List.of(plugin.spec("fake", "vibearound", List.of())), FAST, AgentHarness.javaMain("linker", LinkingAgent.class));
    plugin.awaitType("initialized", 1);
    // A new thread: the chat is told once its agent's session exists, before the turn's output.
    plugin.prompt("77", "77", "first");
    JsonObject first = sessionInfo(plugin, 1);
    String t1 = threadOf("fake:77");
    assertEquals("new", first.getString("start"));
    assertEquals(t1, first.getString("threadId"));
    assertEquals(sessionOf(t1), first.getString("sessionId"));
    assertEquals(gateway.workspace(t1).toAbsolutePath().toString(), first.getString("workspacePath"));
    assertEquals(new JsonObject().put("id", "linker").put("name", "linker"), first.getJsonObject("agent"));
    // The report the agent wrote and linked arrives as a document, not "active workspace is unavailable".
    assertEquals(gateway.workspace(t1).resolve("report.txt").toRealPath().toString(),
        plugin.awaitType("document", 1).getString("path"));
    List<JsonObject> all = plugin.received();
    assertTrue(all.indexOf(plugin.await(PluginControl.method("_va/session_info"), 1, "")) < all.indexOf(
        plugin.await(PluginControl.method("_va/thread_reply"), 1, "")), "the info before the turn's output");
    plugin.awaitType("prompt_result", 1);
    // Its agent crashes; the next prompt resumes the same session, and the chat is told so.
    plugin.prompt("77", "77", "crash");
    plugin.awaitType("prompt_result", 2);
    plugin.prompt("77", "77", "second");
    JsonObject second = sessionInfo(plugin, 2);
    assertEquals("resumed", second.getString("start"));
    assertEquals(first.getString("sessionId"), second.getString("sessionId"));
    plugin.awaitType("document", 2);
    plugin.awaitType("prompt_result", 3);
    // /new: a new thread, a new session, a new workspace.
    plugin.prompt("77", "77", "/new");
    plugin.awaitType("prompt_result", 4);
    plugin.prompt("77", "77", "third");
    JsonObject third = sessionInfo(plugin, 3);
    String t2 = threadOf("fake:77");
    assertNotEquals(t1, t2);
    assertEquals("new", third.getString("start"));
    assertEquals(t2, third.getString("threadId"));
    assertEquals(sessionOf(t2), third.getString("sessionId"));
    assertEquals(gateway.workspace(t2).resolve("report.txt").toRealPath().toString(),
        plugin.awaitType("document", 3).getString("path"));
    plugin.awaitType("prompt_result", 5);
    assertEquals(3, plugin.received(PluginControl.method("_va/session_info")).size(), plugin.summary());
    assertEquals(List.of(), plugin.received(r -> "invalid".equals(r.getString("type"))), "what the SDK dropped");
    assertEquals(List.of(), plugin.received(r -> "error".equals(r.getString("type"))), "errors shown in the chat");
  }

  /** The n-th {@code _va/session_info} the plugin got, held against the SDK's own rules; its info. */
  private static JsonObject sessionInfo(PluginControl plugin, int n) {
    JsonObject params = plugin.await(PluginControl.method("_va/session_info"), n, n + " x the session info")
        .getJsonObject("params");
    assertEquals(null, io.switchboard.testkit.FakePlugin.sdkDrops(params), params.encode());
    return params.getJsonObject("info");
  }

  private String sessionOf(String thread) {
    return await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_GET, new JsonObject().put("threadId", thread)))
        .body().getString("acpSessionId");
  }

  private long userMessages(String thread, String text) {
    return await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_HISTORY, new JsonObject()
        .put("threadId", thread))).body().getJsonArray("events").stream().map(e -> ((JsonObject) e).getJsonObject("event"))
        .filter(e -> "user_message".equals(e.getString("kind")) && text.equals(e.getString("text"))).count();
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"acp", "vibearound"})
  void aMessageThePlatformDeliversAgainStartsNoSecondTurnEvenAfterARestart(String dialect, Vertx vertx)
      throws Exception {
    PluginControl plugin = start(vertx, dialect, List.of());
    plugin.prompt("42", "42", "only once", "msg-1");
    JsonObject card = plugin.awaitType("card", 1);
    plugin.tap(card.getString("key"), "allow-once", dialect.equals("acp") ? "42" : null);
    plugin.awaitType("prompt_result", 1);
    String thread = threadOf("fake:42");
    // The plugin crashed before confirming the update: the platform hands the same message over again.
    plugin.prompt("42", "42", "only once", "msg-1");
    JsonObject again = plugin.awaitType("prompt_result", 2);
    assertEquals("end_turn", again.getJsonObject("response").getJsonObject("result").getString("stopReason"));
    // A new message with the same text is a new message.
    plugin.prompt("42", "42", "only once", "msg-2");
    plugin.tap(plugin.awaitType("card", 2).getString("key"), "allow-once", dialect.equals("acp") ? "42" : null);
    plugin.awaitType("prompt_result", 3);
    assertEquals(2, userMessages(thread, "only once"), "msg-1 once, msg-2 once");
    // Remembered across a gateway restart too.
    gateway.close();
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(),
        List.of(plugin.spec("fake", dialect, List.of(), List.of(io.switchboard.config.PluginSpec.ANYONE))), FAST,
        AgentHarness.demo());
    plugin.awaitType("initialized", 2);
    plugin.prompt("42", "42", "only once", "msg-1");
    plugin.awaitType("prompt_result", 4);
    assertEquals(2, userMessages(thread, "only once"), "no second turn after the restart");
    assertEquals(2, plugin.received(r -> "card".equals(r.getString("type"))).size(), "no third card");
  }

  @Test
  void aKilledPluginsCardSurvivesItsRestartAndTheTapOnTheNewProcessCounts(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of());
    plugin.prompt("42", "42", "survive");
    JsonObject card = plugin.awaitType("card", 1);
    String requestId = requestIdOf(card);
    ProcessHandle.of(plugin.awaitType("started", 1).getLong("pid")).orElseThrow().destroyForcibly();
    // A restart is not the chat leaving: the card is redelivered to the new process and stays answerable.
    plugin.awaitType("started", 2);
    JsonObject again = plugin.awaitType("card", 2);
    assertEquals(requestId, requestIdOf(again));
    assertEquals("pending", ledger(requestId).getString("state"));
    plugin.tap(again.getString("key"), "allow-once", "42");
    waitFor(() -> "selected".equals(ledger(requestId).getString("state")), "the tap on the new process to count");
    assertEquals("fake:42", ledger(requestId).getJsonObject("outcome").getJsonObject("answeredBy").getString("surface"));
  }

  @Test
  void aPluginNotBackWithinTheGraceLeavesItsCardsOnceAndLearnsHowTheyEnded(Vertx vertx) throws Exception {
    this.vertx = vertx;
    PluginControl plugin = new PluginControl(dir.resolve("fake"));
    // Back off for 3 s, longer than the 500 ms grace: its chats leave the card, which ends surface-gone.
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(), List.of(plugin.spec("fake", "acp", List.of())),
        new PluginRoom.Timings(3_000, 3_000, 4, 30_000, 90_000, 500), AgentHarness.demo());
    plugin.awaitType("initialized", 1);
    plugin.prompt("42", "42", "doomed");
    JsonObject card = plugin.awaitType("card", 1);
    ProcessHandle.of(plugin.awaitType("started", 1).getLong("pid")).orElseThrow().destroyForcibly();
    String requestId = requestIdOf(card);
    waitFor(() -> "cancelled".equals(ledger(requestId).getString("state")), "the card to be cancelled");
    assertEquals("surface-gone", ledger(requestId).getJsonObject("outcome").getString("reason"));
    assertEquals(1, ledger(requestId).getJsonArray("events").stream()
        .filter(e -> "cancelled".equals(((JsonObject) e).getString("event"))).count());
    // The respawned plugin learns how the card ended instead of seeing a question nobody can answer.
    plugin.awaitType("started", 2);
    JsonObject end = plugin.await(PluginControl.method("_switchboard/permission_resolved"), 1, "the end state");
    assertEquals("surface-gone", end.getJsonObject("params").getJsonObject("outcome").getString("reason"));
  }

  @Test
  void vibearoundOutputsReadByAPluginThatDiesBeforeItsReadReceiptGoToTheNextProcess(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "vibearound", List.of());
    plugin.set(new JsonObject().put("dieOnReceipt", true));
    plugin.prompt("42", "42", "/help");
    plugin.awaitType("started", 2);
    // The help text was read by the first process, which died before confirming it: the second gets it too.
    waitFor(() -> textsAfterStart(plugin, 2, "_va/system_text").stream().anyMatch(t -> t.contains("Commands:")),
        "the help text to reach the second process; the plugin saw " + plugin.summary());
  }

  @Test
  void acpAChatWhosePluginDiedBeforeAcknowledgingTheFinalReplyTakesNewPrompts(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of());
    plugin.prompt("42", "42", "first");
    JsonObject card = plugin.awaitType("card", 1);
    plugin.set(new JsonObject().put("acking", false));
    plugin.tap(card.getString("key"), "allow-once", "42");
    // The turn's final reply reaches the plugin, which dies before acknowledging it.
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && "final".equals(r.getJsonObject("params").getString("kind")), 1, "the final reply");
    ProcessHandle.of(plugin.awaitType("started", 1).getLong("pid")).orElseThrow().destroyForcibly();
    plugin.awaitType("initialized", 2);
    plugin.prompt("42", "42", "second");
    plugin.tap(plugin.awaitType("card", 2).getString("key"), "allow-once", "42");
    JsonObject result = plugin.await(r -> "prompt_result".equals(r.getString("type"))
        && "second".equals(r.getString("prompt")), 1, "the second prompt to run and end");
    assertEquals("end_turn", result.getJsonObject("response").getJsonObject("result").getString("stopReason"));
  }

  /** The texts of notifications of {@code method} received after the plugin's n-th start. */
  private static List<String> textsAfterStart(PluginControl plugin, int n, String method) {
    List<JsonObject> all = plugin.received();
    int starts = 0;
    List<String> texts = new java.util.ArrayList<>();
    for (JsonObject r : all) {
      if ("started".equals(r.getString("type"))) {
        starts++;
      } else if (starts >= n && method.equals(r.getString("method"))) {
        texts.add(r.getJsonObject("params").getString("text", ""));
      }
    }
    return texts;
  }

  @Test
  void aCardRaisedWhileThePluginIsDownArrivesAfterTheRespawn(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of());
    plugin.prompt("42", "42", "first");
    plugin.tap(plugin.awaitType("card", 1).getString("key"), "allow-once", "42");
    plugin.awaitType("prompt_result", 1);
    String thread = threadOf("fake:42");
    plugin.act(new JsonObject().put("exit", 3));
    waitFor(() -> "BACKING_OFF".equals(status().getString("state")), "the plugin to be down");
    // Someone prompts the thread from the web while the plugin is down; the demo agent asks again.
    await(vertx.eventBus().request(Addresses.THREAD_PROMPT, new JsonObject().put("threadId", thread)
        .put("text", "second").put("surface", "web")));
    JsonObject card = plugin.awaitType("card", 2);
    plugin.tap(card.getString("key"), "allow-once", "42");
    waitFor(() -> "selected".equals(ledger(requestIdOf(card)).getString("state")), "the tap to count");
  }

  private JsonObject status() {
    return await(vertx.eventBus().<JsonObject>request(Addresses.PLUGIN_STATUS, new JsonObject())).body()
        .getJsonArray("plugins").getJsonObject(0);
  }

  /**
   * A plugin that answers every card by itself and names no sender (refused: not an approver) is
   * asked again a bounded number of times, told who may answer once and that it is not asked again
   * once; the request still waits, and the web answers it (issue 28, point 4: 5,486 cards in 15 s).
   */
  @Test
  void aPluginThatTapsEveryCardByItselfIsAskedAgainABoundedNumberOfTimes(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of("42"), "auto-tap=allow-once");
    plugin.prompt("42", "42", "edit something");
    JsonObject card = plugin.awaitType("card", 1);
    String requestId = requestIdOf(card);
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("not asked again"), 1, "the last word on it");
    assertEquals("pending", ledger(requestId).getString("state"), "refused taps answer nothing");
    await(vertx.eventBus().request(Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", requestId)
        .put("optionId", "allow-once").put("surface", "web")));
    plugin.await(PluginControl.method("_switchboard/permission_resolved"), 1, "the end state");
    // Outputs reach the plugin in order, and a re-ask due after the end is not sent: what came is all.
    assertEquals(1 + OutboxDelivery.MAX_REASKS, plugin.received(r -> "card".equals(r.getString("type"))).size(),
        "the card and its bounded re-asks");
    assertEquals(1, plugin.received(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").startsWith("Only 42")).size(), "told once who may answer");
    assertEquals(1 + OutboxDelivery.MAX_REASKS, ledger(requestId).getJsonArray("events").stream()
        .filter(e -> "rejected".equals(((JsonObject) e).getString("event"))).count(), "each refusal audited");
    assertEquals("RUNNING", status().getString("state"));
  }

  @Test
  void onlyApproversMayTapAndTheFirstAnswerWinsAcrossSurfaces(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of());
    plugin.prompt("group-1", "42", "group message");
    JsonObject card = plugin.awaitType("card", 1);
    String requestId = requestIdOf(card);
    plugin.tap(card.getString("key"), "allow-once", "99"); // a group member, not the starter
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("Only 42"), 1, "the refusal");
    assertEquals("pending", ledger(requestId).getString("state"));
    assertTrue(ledger(requestId).getJsonArray("events").stream().map(e -> (JsonObject) e)
        .anyMatch(e -> "rejected".equals(e.getString("event")) && "99".equals(e.getString("user"))));
    // The card is asked again; now the web answers first, and the plugin's late tap changes nothing.
    JsonObject again = plugin.awaitType("card", 2);
    ChatClient web = ChatClient.open(vertx, gateway.port, gateway.token);
    try {
      web.next("welcome");
      web.send(new JsonObject().put("type", "attach").put("threadId", threadOf("fake:group-1")));
      web.next("turn");
      await(vertx.eventBus().request(Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", requestId)
          .put("optionId", "reject").put("surface", "fake:group-1").put("user", "42")));
    } finally {
      web.close();
    }
    plugin.tap(again.getString("key"), "allow-once", "42");
    plugin.await(PluginControl.method("_switchboard/permission_resolved"), 1, "the end state");
    assertEquals("reject", ledger(requestId).getJsonObject("outcome").getString("optionId"));
    // A tap claiming another plugin's surface is refused by the permission room.
    plugin.prompt("group-1", "42", "again");
    JsonObject third = plugin.awaitType("card", 3);
    String other = io.switchboard.testkit.PermissionHarness.errorOf(vertx.eventBus().request(
        Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", requestIdOf(third)).put("optionId", "allow-once")
            .put("surface", "other:group-1"))).wireName;
    assertEquals("not_eligible", other);
  }

  /**
   * An agent's question (elicitation) in a chat: a choice is a button each (no Submit, which would
   * need a form), a free text form says to answer it on the page and may be declined here; a tap
   * answers the agent with the choice's value, once.
   */
  @Test
  void aQuestionsChoicesAreButtonsInAChatAndATapAnswersItOnce(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of());
    plugin.prompt("42", "42", "note this"); // a thread for the chat (its card answered, out of the way)
    plugin.tap(plugin.awaitType("card", 1).getString("key"), "allow-once", "42");
    plugin.await(r -> "prompt_result".equals(r.getString("type")), 1, "the prompt's answer");
    String thread = threadOf("fake:42");
    JsonObject choice = io.switchboard.permission.Question.fromAgent(new JsonObject().put("mode", "form")
        .put("message", "Which colour?").put("requestedSchema", new JsonObject().put("properties", new JsonObject()
            .put("colour", new JsonObject().put("type", "string").put("enum", new JsonArray().add("red").add("green"))))
            .put("required", new JsonArray().add("colour"))));
    io.vertx.core.Future<JsonObject> asked = vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_REGISTER,
        new JsonObject().put("threadId", thread).put("sessionId", "s").put("agentId", "demo")
            .put("toolCall", io.switchboard.permission.Question.toolCall("q1", choice))
            .put("options", io.switchboard.permission.Question.options(choice))
            .put("eligible", new JsonArray().add("fake:42")).put("startedBy", "42"),
        io.switchboard.bus.Bus.untilEnded()).map(m -> m.body());
    JsonObject card = plugin.awaitType("card", 2);
    JsonObject params = card.getJsonObject("params");
    assertEquals("Which colour?", params.getJsonObject("toolCall").getString("title"));
    assertEquals(List.of("accept:red", "accept:green", "decline", "cancel"), params.getJsonArray("options").stream()
        .map(o -> ((JsonObject) o).getString("optionId")).toList());
    plugin.tap(card.getString("key"), "accept:green", "42");
    JsonObject outcome = await(asked).getJsonObject("outcome");
    assertEquals("accept", outcome.getString("kind"));
    assertEquals(new JsonObject().put("colour", "green"), outcome.getJsonObject("content"));
    assertEquals("fake:42", ledger(requestIdOf(card)).getJsonObject("outcome").getJsonObject("answeredBy")
        .getString("surface"));

    // One text field: the chat's next message is the answer, checked like any (a refusal says why).
    JsonObject name = io.switchboard.permission.Question.fromAgent(new JsonObject().put("mode", "form")
        .put("message", "Your name?").put("requestedSchema", new JsonObject().put("properties", new JsonObject()
            .put("name", new JsonObject().put("type", "string").put("minLength", 2)))));
    io.vertx.core.Future<JsonObject> typed = ask(vertx, thread, "q2", name);
    JsonObject second = plugin.awaitType("card", 3).getJsonObject("params");
    assertTrue(second.getJsonObject("toolCall").getString("title").contains("as your next message"),
        second.encode());
    assertEquals(List.of("decline", "cancel"), second.getJsonArray("options").stream()
        .map(o -> ((JsonObject) o).getString("optionId")).toList());
    plugin.prompt("42", "99", "Eve"); // someone else in the chat: not the thread's starter, not an approver
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").startsWith("Not taken: Only"), 1, "the stranger's refusal");
    plugin.prompt("42", "42", "A");
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("at least 2"), 1, "the refusal");
    assertFalse(typed.isComplete(), "a refused answer changes nothing");
    plugin.prompt("42", "42", "Ann");
    assertEquals(new JsonObject().put("name", "Ann"), await(typed).getJsonObject("outcome").getJsonObject("content"));

    // A form of several fields is answered on the page; here it may be declined.
    JsonObject form = io.switchboard.permission.Question.fromAgent(new JsonObject().put("mode", "form")
        .put("message", "Deploy?").put("requestedSchema", new JsonObject().put("properties", new JsonObject()
            .put("name", new JsonObject().put("type", "string")).put("n", new JsonObject().put("type", "integer")))));
    io.vertx.core.Future<JsonObject> declined = ask(vertx, thread, "q3", form);
    JsonObject third = plugin.awaitType("card", 4); // not the demo agent's card: "A" and "Ann" started no turn
    assertTrue(third.getJsonObject("params").getJsonObject("toolCall").getString("title")
        .contains("answer it in the web chat"));
    plugin.tap(third.getString("key"), "decline", "42");
    assertEquals("decline", await(declined).getJsonObject("outcome").getString("kind"));
  }

  private io.vertx.core.Future<JsonObject> ask(Vertx vertx, String thread, String id, JsonObject question) {
    return vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_REGISTER, new JsonObject().put("threadId", thread)
            .put("sessionId", "s").put("agentId", "demo")
            .put("toolCall", io.switchboard.permission.Question.toolCall(id, question))
            .put("options", io.switchboard.permission.Question.options(question))
            .put("eligible", new JsonArray().add("fake:42")).put("startedBy", "42"),
        io.switchboard.bus.Bus.untilEnded()).map(m -> m.body());
  }

  @Test
  void garbageAndHugeLinesFromAPluginChangeNothing(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of());
    plugin.act(new JsonObject().put("garbage", true));
    plugin.prompt("42", "42", "still there?");
    plugin.tap(plugin.awaitType("card", 1).getString("key"), "reject", "42");
    assertEquals("end_turn", plugin.awaitType("prompt_result", 1).getJsonObject("response").getJsonObject("result")
        .getString("stopReason"));
    assertEquals(1, (int) status().getInteger("generation"), "the plugin was not restarted");
  }

  @Test
  void aPluginWhoseHeartbeatStopsIsRestarted(Vertx vertx) throws Exception {
    this.vertx = vertx;
    PluginControl plugin = new PluginControl(dir.resolve("fake"));
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(),
        List.of(plugin.spec("fake", "vibearound", List.of())), new PluginRoom.Timings(300, 2_000, 4, 30_000, 700),
        AgentHarness.demo());
    plugin.awaitType("initialized", 1);
    plugin.act(new JsonObject().put("heartbeat", true)); // one beat, then silence
    plugin.awaitType("initialized", 2);
    // The second process is silent too: a slow reader may see it restarted again, or between two
    // processes (no generation then); the restart count only grows.
    JsonObject status = status();
    assertTrue(status.getInteger("restarts") >= 1, "restarted: " + status.encode());
  }

  @Test
  void vibearoundGroupsGetNoCardsUnlessOptedIn(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "vibearound", List.of());
    plugin.act(new JsonObject().put("prompt", "group work").put("chat", "g1").put("sender", "42")
        .put("scope", "group"));
    JsonObject told = plugin.await(r -> "_va/system_text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("cannot tell who taps"), 1, "the group notice");
    assertEquals("g1", told.getJsonObject("params").getJsonObject("target").getString("chatId"));
    assertTrue(plugin.received(r -> "card".equals(r.getString("type"))).isEmpty(), "no card in the group");
  }

  /** The id of the one request pending in the ledger. */
  private String onlyPendingRequest() {
    return await(vertx.eventBus().<JsonObject>request(Addresses.STORE_LEDGER_LIST,
        new JsonObject().put("state", "pending").put("limit", 10))).body()
        .getJsonArray("requests").getJsonObject(0).getString("requestId");
  }

  private List<String> vaTexts(PluginControl plugin) {
    return plugin.received(PluginControl.method("_va/system_text")).stream()
        .map(t -> t.getJsonObject("params").getString("text")).toList();
  }

  @Test
  void vibearoundEachTurnRepliesToItsOwnMessage(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "vibearound", List.of());
    plugin.prompt("77", "77", "first", "msg-A");
    JsonObject card = plugin.awaitType("card", 1);
    assertEquals("msg-A", card.getJsonObject("params").getJsonObject("target").getString("replyTo"));
    plugin.prompt("77", "77", "second", "msg-B"); // sent while the first turn waits on its card
    // The SDK rejects the card it shows when the chat's next prompt starts; not an answer: shown again.
    plugin.awaitType("auto_reject", 1);
    card = plugin.awaitType("card", 2);
    assertEquals("msg-A", card.getJsonObject("params").getJsonObject("target").getString("replyTo"));
    int before = plugin.received().size();
    plugin.tap(card.getString("key"), "allow-once", null);
    plugin.await(r -> "prompt_result".equals(r.getString("type")) && "first".equals(r.getString("prompt")), 1,
        "the first prompt's answer");
    JsonObject second = plugin.awaitType("card", 3);
    // What came after the tap: the rest of the first turn, then the second turn's start, in that order.
    List<String> replyTo = plugin.received().subList(before, plugin.received().size()).stream()
        .filter(r -> "_va/thread_reply".equals(r.getString("method")))
        .map(r -> r.getJsonObject("params").getJsonObject("target").getString("replyTo")).toList();
    assertEquals("msg-A", replyTo.get(0), "the rest of the first turn replies to the first message: " + replyTo);
    assertTrue(String.join(",", replyTo).matches("(msg-A,?)+(msg-B,?)*"), "never the first after the second: "
        + replyTo);
    assertEquals("msg-B", second.getJsonObject("params").getJsonObject("target").getString("replyTo"),
        "the second turn replies to the second message");
    plugin.tap(second.getString("key"), "allow-once", null);
    plugin.awaitType("prompt_result", 2);
  }

  /**
   * A vibearound group without cardsInGroups is told to answer in the web chat: the page that opens
   * the thread must show that card, count it in the thread's badge, and answer it (issue 28, point 2).
   */
  @Test
  void aGroupsCardThatPointsToTheWebChatShowsOnThePageAndIsAnsweredThere(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "vibearound", List.of());
    plugin.act(new JsonObject().put("prompt", "edit something").put("chat", "group-9").put("sender", "42")
        .put("scope", "group"));
    plugin.await(r -> "_va/system_text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("answer it in the web chat"), 1, "the pointer");
    String thread = threadOf("fake:group-9");
    ChatClient web = ChatClient.open(vertx, gateway.port, gateway.token);
    try {
      JsonObject welcome = web.next("welcome");
      // The badge: in the welcome, or (counts go out at most every 200 ms) in the next pending frame.
      if (welcome.getJsonArray("threads").stream().map(t -> (JsonObject) t)
          .filter(t -> thread.equals(t.getString("threadId"))).findFirst().orElseThrow().getInteger("pending") != 1) {
        web.next(f -> "pending".equals(f.getString("type"))
            && Integer.valueOf(1).equals(f.getJsonObject("counts").getInteger(thread)), "the badge of the group's card");
      }
      web.send(new JsonObject().put("type", "attach").put("threadId", thread));
      JsonObject card = web.next(f -> "permission_request".equals(f.getString("type")), "the group's card");
      web.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
          .put("optionId", "allow-once"));
      JsonObject end = web.next(f -> "permission_resolved".equals(f.getString("type")), "its end");
      assertEquals("selected", end.getJsonObject("outcome").getString("outcome"));
      assertEquals("web", end.getJsonObject("outcome").getJsonObject("answeredBy").getString("surface"));
    } finally {
      web.close();
    }
  }

  @Test
  void vibearoundOutputsWaitUntilARestartedPluginCanShowThem(Vertx vertx) throws Exception {
    // Like the SDK: the renderer exists only once the platform answered, 1.5 s after initialize.
    PluginControl plugin = start(vertx, "vibearound", List.of(), "render-delay=1500");
    plugin.prompt("77", "77", "hello");
    JsonObject card = plugin.awaitType("card", 1);
    String requestId = onlyPendingRequest();
    ProcessHandle.of(plugin.awaitType("started", 1).getLong("pid")).orElseThrow().destroyForcibly();
    // While it is down the operator answers from the web: the chat must learn how its card ended.
    await(vertx.eventBus().request(Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", requestId)
        .put("optionId", "allow-once").put("surface", "web")));
    plugin.awaitType("started", 2);
    String told = plugin.await(r -> "_va/system_text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("was answered in the web chat: allowed once"), 1,
        "the card's end").getJsonObject("params").getString("text");
    assertTrue(told.startsWith("The permission request \u201c"), told);
    List<JsonObject> all = plugin.received();
    assertTrue(all.indexOf(plugin.awaitType("rendering", 2)) < all.indexOf(plugin.await(r ->
        "_va/system_text".equals(r.getString("method")), 1, "")), "sent once the renderer existed");
    assertEquals(List.of(), plugin.received(r -> "dropped".equals(r.getString("type"))), "nothing dropped");
    // The new process is told the chat's session when the chat next writes (not at its start: the
    // SDK shows it as a card in every chat).
    assertEquals(1, plugin.received(PluginControl.method("_va/session_info")).size());
    plugin.prompt("77", "77", "again");
    JsonObject info = plugin.await(PluginControl.method("_va/session_info"), 2, "the session info again")
        .getJsonObject("params").getJsonObject("info");
    assertEquals("resumed", info.getString("start"));
    assertEquals(card.getJsonObject("params").getString("requestId"), plugin.awaitType("card", 1)
        .getJsonObject("params").getString("requestId"));
  }

  /** What the plugin recorded from {@code first} on (nothing while a read of its record finds it not there). */
  private static List<JsonObject> since(PluginControl plugin, JsonObject first) {
    List<JsonObject> all = plugin.received();
    int at = all.indexOf(first);
    return at < 0 ? List.of() : all.subList(at, all.size());
  }

  @Test
  void vibearoundAMessageRedeliveredAfterACrashStartsNoSecondTurn(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "vibearound", List.of(), "redeliver");
    plugin.prompt("77", "77", "hello once", "tg-1");
    plugin.awaitType("card", 1);
    ProcessHandle.of(plugin.awaitType("started", 1).getLong("pid")).orElseThrow().destroyForcibly();
    // The next process gets the message again from the platform (it was never confirmed): its
    // prompt takes over the running turn, and is answered when that turn ends (issue 28, point 3).
    JsonObject redelivered = plugin.awaitType("redelivered", 1);
    // The first turn's card, sent again to the new process (and again if the SDK rejected it when
    // the redelivered prompt was sent), is tapped there and the turn ends once.
    plugin.awaitType("card", 2);
    // Once the redelivered prompt is sent: if its send rejected the card just shown, that card's tap
    // would be dropped; the gateway asks again, and that card is the one tapped.
    waitFor(() -> since(plugin, redelivered).stream().anyMatch(r -> "sent_cards_rejected".equals(r.getString("type"))),
        "the redelivered prompt sent");
    boolean rejected = since(plugin, redelivered).stream().anyMatch(r -> "auto_reject".equals(r.getString("type")));
    plugin.awaitType("card", rejected ? 3 : 2);
    // The redelivered prompt waits for the turn it joined: no answer while its card waits (and the
    // turn's output after the tap comes before the answer, checked below: no fixed wait needed).
    assertEquals(List.of(), plugin.received(r -> "prompt_result".equals(r.getString("type"))),
        "the redelivered prompt waits for the turn it joined");
    List<JsonObject> cards = plugin.received(r -> "card".equals(r.getString("type")));
    plugin.tap(cards.get(cards.size() - 1).getString("key"), "allow-once", null);
    JsonObject answered = plugin.awaitType("prompt_result", 1);
    assertEquals("end_turn", answered.getJsonObject("response").getJsonObject("result").getString("stopReason"));
    waitFor(() -> userMessages(threadOf("fake:77"), "hello once") == 1
        && await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_GET, new JsonObject()
            .put("threadId", threadOf("fake:77")))).body().getBoolean("busy") == Boolean.FALSE, "the one turn to end");
    assertEquals(1, plugin.received(r -> "card".equals(r.getString("type"))).stream().map(r -> r.getString("key"))
        .distinct().count(), "only the first turn's card, never one of a second turn");
    // What the new process showed of the turn: its text so far, then the rest, all in the message
    // the prompt holds — no update after the prompt's answer, and the reply once (no final text).
    List<JsonObject> all = plugin.received();
    int started = all.indexOf(plugin.awaitType("started", 2));
    int promptAnswered = all.indexOf(answered);
    List<JsonObject> after = all.subList(started, all.size());
    List<Integer> replies = new java.util.ArrayList<>();
    StringBuilder shown = new StringBuilder();
    for (int i = started; i < all.size(); i++) {
      JsonObject r = all.get(i);
      if ("_va/thread_reply".equals(r.getString("method"))) {
        replies.add(i);
        Object text = r.getJsonObject("params").getJsonObject("reply").getJsonObject("payload")
            .getJsonObject("notification").getJsonObject("update").getValue("content");
        if (text instanceof JsonObject c && c.getValue("text") instanceof String t) {
          shown.append(t);
        }
      }
    }
    assertTrue(!replies.isEmpty() && replies.stream().allMatch(i -> i < promptAnswered),
        "every update before the prompt's answer: " + replies + " < " + promptAnswered);
    String turnText = agentText(threadOf("fake:77"));
    assertEquals(turnText, shown.toString(), "the new process showed the whole turn's text, once");
    assertTrue(after.stream().noneMatch(r -> "_va/system_text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains(turnText)), "no final text repeats the reply");
    // A chat's prompts run in order: a second turn of the redelivered message, had one been
    // queued, would come before a later prompt's.
    plugin.prompt("77", "77", "and then", "tg-2");
    waitFor(() -> userMessages(threadOf("fake:77"), "and then") == 1, "the later prompt's turn");
    assertEquals(1, userMessages(threadOf("fake:77"), "hello once"), "one turn");
  }

  @Test
  void vibearoundTapsReadOnlyAfterThePromptAndTheSdksEndOfTurnRejectChangeNothing(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "vibearound", List.of(), "taps-after-prompt");
    plugin.prompt("77", "77", "please");
    JsonObject card = plugin.awaitType("card", 1);
    String requestId = onlyPendingRequest();
    plugin.tap(card.getString("key"), "allow-once", null); // not read while the prompt runs
    // The chat cannot answer while its prompt runs; the operator's console can, and does.
    await(vertx.eventBus().request(Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", requestId)
        .put("optionId", "allow-once").put("surface", "web")));
    plugin.awaitType("prompt_result", 1);
    plugin.awaitType("auto_reject", 1); // the SDK rejects the card it still shows when the prompt ends
    plugin.awaitType("tap_dropped", 1); // and the person's tap, read now, finds it handled: nothing is sent
    JsonObject row = ledger(requestId);
    assertEquals("allow-once", row.getJsonObject("outcome").getString("optionId"));
    assertEquals("web", row.getJsonObject("outcome").getJsonObject("answeredBy").getString("surface"));
    JsonArray events = row.getJsonArray("events");
    assertEquals("selected", events.getJsonObject(events.size() - 1).getString("event"), "nothing after the end");
    assertEquals(1, plugin.received(r -> "card".equals(r.getString("type"))).size(), "the card not asked again");
    assertTrue(vaTexts(plugin).stream().noneMatch(t -> t.contains("Only") || t.contains("already")), vaTexts(plugin).toString());
  }

  @Test
  void vibearoundTheSdksRejectionOfACardStillWaitingIsNotAnAnswer(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "vibearound", List.of());
    plugin.prompt("77", "77", "first");
    plugin.tap(plugin.awaitType("card", 1).getString("key"), "allow-once", null);
    plugin.awaitType("prompt_result", 1);
    // The web asks in the same thread: the chat shows that card too, and its next message makes the
    // SDK reject every card it still shows (its onPromptSent).
    String thread = threadOf("fake:77");
    await(vertx.eventBus().request(Addresses.THREAD_PROMPT, new JsonObject().put("threadId", thread)
        .put("text", "from the web").put("surface", "web")));
    plugin.awaitType("card", 2);
    String requestId = onlyPendingRequest();
    plugin.prompt("77", "77", "/status");
    plugin.awaitType("auto_reject", 1);
    // Nobody chose it: nothing recorded, and the card is shown again for a person to answer.
    JsonObject again = plugin.awaitType("card", 3);
    assertEquals("pending", ledger(requestId).getString("state"));
    assertTrue(ledger(requestId).getJsonArray("events").stream().map(e -> (JsonObject) e)
        .noneMatch(e -> "rejected".equals(e.getString("event")) || "selected".equals(e.getString("event"))),
        ledger(requestId).encode());
    plugin.tap(again.getString("key"), "allow-once", null);
    waitFor(() -> "selected".equals(ledger(requestId).getString("state")), "the person's tap to count");
    assertEquals("allow-once", ledger(requestId).getJsonObject("outcome").getString("optionId"));
  }

  @Test
  void vibearoundChatsAreStillDirectMessagesOrGroupsAfterAGatewayRestart(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "vibearound", List.of());
    plugin.prompt("77", "77", "hello");
    plugin.tap(plugin.awaitType("card", 1).getString("key"), "allow-once", null);
    plugin.awaitType("prompt_result", 1);
    plugin.act(new JsonObject().put("prompt", "group work").put("chat", "g1").put("sender", "77").put("scope", "group"));
    plugin.await(r -> "_va/system_text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("cannot tell who taps"), 1, "the group notice");
    await(vertx.eventBus().request(Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", onlyPendingRequest())
        .put("optionId", "allow-once").put("surface", "web")));
    plugin.awaitType("prompt_result", 2);
    String dm = threadOf("fake:77");
    String group = threadOf("fake:g1");
    gateway.close();
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(),
        List.of(plugin.spec("fake", "vibearound", List.of(), List.of(io.switchboard.config.PluginSpec.ANYONE))), FAST,
        AgentHarness.demo());
    plugin.awaitType("rendering", 2);
    // Nobody in either chat has written since the restart; the web asks in both threads.
    for (String thread : List.of(dm, group)) {
      await(vertx.eventBus().request(Addresses.THREAD_PROMPT, new JsonObject().put("threadId", thread)
          .put("text", "from the web").put("surface", "web")));
    }
    plugin.await(r -> "card".equals(r.getString("type")) && "77".equals(r.getJsonObject("params")
        .getJsonObject("target").getString("chatId")), 2, "a card in the direct message, known as one");
    plugin.await(r -> "_va/system_text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("cannot tell who taps"), 2, "the group, still a group");
    assertTrue(plugin.received(r -> "card".equals(r.getString("type"))).stream().noneMatch(r -> "g1".equals(
        r.getJsonObject("params").getJsonObject("target").getString("chatId"))), "no card in the group");
  }

  @Test
  void vibearoundGroupCardsOptedInCountAnyMembersTapAndTheAuditSaysAGroupMember(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "vibearound", List.of("42"), "cards-in-groups");
    for (String[] who : new String[][] {{"g1", "42"}, {"g2", "99"}}) { // an approver's thread, then a stranger's
      plugin.act(new JsonObject().put("prompt", "group work").put("chat", who[0]).put("sender", who[1])
          .put("scope", "group"));
      JsonObject card = plugin.await(r -> "card".equals(r.getString("type")) && who[0].equals(r.getJsonObject("params")
          .getJsonObject("target").getString("chatId")), 1, "the card in " + who[0]);
      String requestId = await(vertx.eventBus().<JsonObject>request(Addresses.STORE_LEDGER_LIST,
          new JsonObject().put("state", "pending").put("limit", 10).put("threadId", threadOf("fake:" + who[0])))).body()
          .getJsonArray("requests").getJsonObject(0).getString("requestId");
      plugin.tap(card.getString("key"), "allow-once", null);
      waitFor(() -> "selected".equals(ledger(requestId).getString("state")), "the tap in " + who[0] + " to count");
      assertEquals(io.switchboard.permission.ChatApproval.GROUP_MEMBER, ledger(requestId).getJsonObject("outcome")
          .getJsonObject("answeredBy").getString("user"), "never someone else's id");
    }
  }

  @Test
  void aFullLaneIsAClearErrorToThePlugin(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of());
    plugin.prompt("42", "42", "the first waits on its card");
    plugin.awaitType("card", 1);
    for (int i = 0; i < Route.LANE_CAPACITY + 1; i++) {
      plugin.prompt("42", "42", "more " + i);
    }
    JsonObject refused = plugin.await(r -> "prompt_result".equals(r.getString("type"))
        && r.getJsonObject("response").containsKey("error"), 1, "the refusal");
    // Not -32000: ACP reserves that for "authentication required".
    assertEquals(-32603, refused.getJsonObject("response").getJsonObject("error").getInteger("code"));
    assertTrue(refused.getJsonObject("response").getJsonObject("error").getString("message").contains("busy"));
  }

  @Test
  void acpAChatThatMovedOnWithNewCannotAnswerItsOldThreadsCard(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of());
    plugin.prompt("group-1", "42", "group message");
    JsonObject first = plugin.awaitType("card", 1);
    String requestId = requestIdOf(first);
    // 99 moves the chat on: T1's question, which only this chat could answer, ends.
    plugin.prompt("group-1", "99", "/new");
    io.switchboard.testkit.PermissionHarness.waitFor(() -> "cancelled".equals(ledger(requestId).getString("state")),
        "T1's question to end");
    assertEquals("surface-gone", ledger(requestId).getJsonObject("outcome").getString("reason"));
    // 99's next message starts 99's own thread at once (the chat no longer waits on T1's turn).
    plugin.prompt("group-1", "99", "my own thread");
    plugin.awaitType("card", 2);
    // T1's card, tapped by 99 (the starter of the chat's current thread): it has ended, so the tap is
    // told so, and nothing is recorded after the end, nor the card asked again.
    plugin.tap(first.getString("key"), "allow-once", "99");
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("already answered or ended"), 1, "the answer");
    assertEquals("cancelled", ledger(requestId).getString("state"));
    JsonArray events = ledger(requestId).getJsonArray("events");
    assertEquals("cancelled", events.getJsonObject(events.size() - 1).getString("event"), "nothing after the end");
    assertEquals(2, plugin.received(r -> "card".equals(r.getString("type"))).size(), "T1's card not asked again");
  }

  @Test
  void vibearoundAChatThatMovedOnWithNewCannotAnswerItsOldThreadsCard(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "vibearound", List.of());
    plugin.prompt("77", "77", "hello from va");
    JsonObject first = plugin.awaitType("card", 1);
    String t1 = threadOf("fake:77");
    String requestId = await(vertx.eventBus().<JsonObject>request(Addresses.STORE_LEDGER_LIST,
        new JsonObject().put("state", "pending").put("limit", 10).put("threadId", t1))).body()
        .getJsonArray("requests").getJsonObject(0).getString("requestId");
    plugin.prompt("77", "77", "/new");
    io.switchboard.testkit.PermissionHarness.waitFor(() -> "cancelled".equals(ledger(requestId).getString("state")),
        "T1's question to end");
    plugin.tap(first.getString("key"), "allow-once", null); // the dialect cannot say who tapped
    plugin.prompt("77", "77", "a new conversation");
    plugin.awaitType("card", 2);
    assertEquals("surface-gone", ledger(requestId).getJsonObject("outcome").getString("reason"));
    assertFalse(threadOf("fake:77").equals(t1), "the chat is in a new thread");
  }

  @Test
  void acpOnlyListedUsersMayPromptAndAStrangerIsToldTheirIdAndSeenByTheOperator(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of("42"), (List<String>) null); // no users list: its approvers
    plugin.prompt("dm-99", "99", "let me in");
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("Your id here is 99"), 1, "the first-contact text");
    JsonObject refused = plugin.awaitType("prompt_result", 1);
    assertEquals("refusal", refused.getJsonObject("response").getJsonObject("result").getString("stopReason"));
    plugin.prompt("dm-99", "99", "/new");
    plugin.awaitType("prompt_result", 2);
    JsonArray threads = await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_LIST, new JsonObject())).body()
        .getJsonArray("threads");
    assertEquals(0, threads.size(), "a stranger starts nothing: " + threads);
    // The operator sees who knocked, in the web.
    java.net.http.HttpResponse<String> knocks = java.net.http.HttpClient.newHttpClient().send(
        java.net.http.HttpRequest.newBuilder(java.net.URI.create(gateway.url("/api/knocks")))
            .header("Authorization", "Bearer " + gateway.token).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(200, knocks.statusCode());
    JsonObject knock = new JsonObject(knocks.body()).getJsonArray("knocks").getJsonObject(0);
    assertEquals("fake", knock.getString("plugin"));
    assertEquals("99", knock.getString("userId"));
    // A listed user is let in.
    plugin.prompt("dm-42", "42", "hello");
    plugin.awaitType("card", 1);
  }

  @Test
  void vibearoundAPluginWithNoUsersAndNoApproversIsClosed(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "vibearound", List.of(), (List<String>) null);
    plugin.prompt("77", "77", "hello");
    plugin.await(r -> r.getJsonObject("params", new JsonObject()).encode().contains("Your id here is 77"), 1,
        "the first-contact text");
    assertEquals(0, await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_LIST, new JsonObject())).body()
        .getJsonArray("threads").size());
  }

  @Test
  void liveEventsThatNeverArrivedAreFetchedSoTheFinalReplyIsWhole(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of());
    plugin.prompt("42", "42", "hello");
    plugin.tap(plugin.awaitType("card", 1).getString("key"), "reject", "42");
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && "final".equals(r.getJsonObject("params").getString("kind")), 1, "the first final reply");
    String thread = threadOf("fake:42");
    long last = await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_GET, new JsonObject()
        .put("threadId", thread))).body().getLong("lastSeq");
    // A turn's start and first chunk are written and published, their publication lost (a cut
    // between nodes)...
    JsonObject started = new JsonObject().put("kind", "turn_started");
    JsonObject missed = chunk("missed, ");
    await(vertx.eventBus().request(Addresses.STORE_TRANSCRIPT_APPEND, new JsonObject().put("threadId", thread)
        .put("seq", last + 1).put("at", 1L).put("event", started)));
    await(vertx.eventBus().request(Addresses.STORE_TRANSCRIPT_APPEND, new JsonObject().put("threadId", thread)
        .put("seq", last + 2).put("at", 1L).put("event", missed)));
    // ...then the rest of the turn arrives live: the chat's final reply has every chunk, in order.
    vertx.eventBus().publish(Addresses.threadEvents(thread), new JsonObject().put("threadId", thread)
        .put("seq", last + 3).put("at", 1L).put("event", chunk("then live")));
    vertx.eventBus().publish(Addresses.threadEvents(thread), new JsonObject().put("threadId", thread)
        .put("seq", last + 4).put("at", 1L).put("event", new JsonObject().put("kind", "turn_ended")
            .put("stopReason", "end_turn")));
    JsonObject reply = plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && "final".equals(r.getJsonObject("params").getString("kind")), 2, "the second final reply");
    assertEquals("missed, then live", reply.getJsonObject("params").getString("text"));
  }

  private static JsonObject chunk(String text) {
    return new JsonObject().put("kind", "acp").put("update", new JsonObject()
        .put("sessionUpdate", "agent_message_chunk").put("content", new JsonObject().put("type", "text")
            .put("text", text)));
  }

  @Test
  void commandsAreAnsweredByTheGateway(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of());
    plugin.prompt("42", "42", "/help");
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("/new"), 1, "the help text");
    plugin.awaitType("prompt_result", 1);
    plugin.prompt("42", "42", "/status");
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("No conversation"), 1, "the status");
  }

  @Test
  void aPluginThatKeepsFailingIsGivenUpAndReadyzSaysSo(Vertx vertx) throws Exception {
    this.vertx = vertx;
    PluginSpec broken = new PluginSpec("broken", "acp", List.of("sh", "-c", "exit 1"), null, java.util.Map.of(),
        new JsonObject(), List.of(), null, false);
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(), List.of(broken), FAST, AgentHarness.demo());
    // While it backs off, the next try's time is said (at least 225 ms away with these timings).
    JsonObject[] seen = new JsonObject[1];
    waitFor(() -> (seen[0] = status()).getValue("restartAt") != null, "a restart due while it backs off");
    assertEquals("BACKING_OFF", seen[0].getString("state"), seen[0].encode());
    waitFor(() -> "GIVEN_UP".equals(status().getString("state")), "the circuit breaker");
    HttpResponse<String> ready = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create(gateway.url("/readyz"))).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(503, ready.statusCode());
    assertTrue(ready.body().contains("broken"), ready.body());
    // It stays down: no generation runs and none is due (a restart is only ever a timer set with its due time).
    JsonObject givenUp = status();
    assertEquals("GIVEN_UP", givenUp.getString("state"));
    assertNull(givenUp.getValue("pid"), givenUp.encode());
    assertNull(givenUp.getValue("restartAt"), givenUp.encode());
    assertEquals(FAST.breakerFailures() - 1, givenUp.getInteger("restarts"), givenUp.encode());
  }

  @Test
  void aPluginThatStopsReadingCannotHurtTheGateway(Vertx vertx) throws Exception {
    PluginControl plugin = start(vertx, "acp", List.of());
    plugin.prompt("42", "42", "hi");
    plugin.tap(plugin.awaitType("card", 1).getString("key"), "reject", "42");
    plugin.awaitType("prompt_result", 1);
    String thread = threadOf("fake:42");
    plugin.set(new JsonObject().put("stopReading", true));
    String big = "y".repeat(1024 * 1024);
    for (int i = 0; i < 100; i++) {
      vertx.eventBus().publish(Addresses.threadEvents(thread), new JsonObject().put("threadId", thread)
          .put("seq", 1000 + i).put("at", 0L).put("event", new JsonObject().put("kind", "acp").put("update",
              new JsonObject().put("sessionUpdate", "agent_message_chunk")
                  .put("content", new JsonObject().put("type", "text").put("text", big)))));
    }
    // The writes back up on the pipe of the plugin that stopped reading.
    waitFor(() -> status().getLong("queuedBytes") > 0, "writes to queue up");
    long queued = status().getLong("queuedBytes");
    assertTrue(queued <= io.switchboard.config.Limits.ofThisJvm().processQueueBytes(), "bounded: " + queued);
    HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create(gateway.url("/healthz"))).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, health.statusCode());
    ChatClient web = ChatClient.open(vertx, gateway.port, gateway.token);
    try {
      web.next("welcome");
      web.send(new JsonObject().put("type", "ping"));
      web.next("pong");
    } finally {
      web.close();
    }
    assertNotEquals(0L, queued, "the plugin really stopped reading");
  }
}
