package io.switchboard.agent;

import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.store.LedgerReader;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Agents that misbehave at the process boundary, from a plain Node script (no JVM, no SDK): they
 * ask and exit in the same breath, ask under a foreign session id, leave children behind, die at
 * start, explain failures only in {@code error.data}.
 */
@ExtendWith(VertxExtension.class)
class BadAgentTest {
  static final Path SCRIPT = Path.of("src", "test", "badpeers", "bad-agent.js").toAbsolutePath();

  @TempDir
  Path dir;
  AgentHarness gateway;

  private String thread(Vertx vertx, String mode) {
    gateway = start(vertx, dir, mode);
    return gateway.thread("bad", "web");
  }

  /** A gateway in {@code dir} whose agent "bad" is the scripted Node agent in {@code mode}. */
  static AgentHarness start(Vertx vertx, Path dir, String mode) {
    return new AgentHarness(vertx, dir, new AgentRoom.Timings(30_000, 1_500),
        AgentHarness.command("bad", List.of("node", SCRIPT.toString(), mode))).start();
  }

  /** The agent "bad" in lifecycle mode, unconfined: it writes the methods it is sent to {@code log}, outside its workspace. */
  private static io.switchboard.config.AgentSpec lifecycle(Path log) {
    return new io.switchboard.config.AgentSpec("bad", "bad", null, List.of("node", SCRIPT.toString(), "lifecycle"),
        java.util.Map.of("BAD_AGENT_LOG", log.toString()), null, null, io.switchboard.process.Sandbox.Mode.NONE);
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
  }

  /**
   * A thread whose bad agent writes the pids it starts (its own, or its children's) to a file.
   * Unconfined: these tests check the process marks that find an unsandboxed agent's leftovers (a
   * sandboxed one's die with its PID namespace, and its pids are not the host's).
   */
  private String threadWithPids(Vertx vertx, String mode) {
    gateway = new AgentHarness(vertx, dir, new AgentRoom.Timings(30_000, 1_500),
        new io.switchboard.config.AgentSpec("bad", "bad", null, List.of("node", SCRIPT.toString(), mode),
            java.util.Map.of("BAD_AGENT_PIDS", dir.resolve("pids").toString()), null, null,
            io.switchboard.process.Sandbox.Mode.NONE)).start();
    return gateway.thread("bad", "web");
  }

  private List<Long> pids() throws java.io.IOException {
    return Files.readAllLines(dir.resolve("pids")).stream().filter(s -> !s.isBlank()).map(s -> Long.parseLong(s.trim()))
        .toList();
  }

  private static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  /** Prompts a thread whose turn must fail; returns the error the thread shows. */
  private String failedTurn(String t) {
    gateway.prompt(t, "go");
    assertEquals("error", gateway.awaitTurnEnd(t, 1));
    return gateway.eventsOfKind(t, "system").get(0).getString("text");
  }

  private JsonArray ledger() {
    try {
      return LedgerReader.requests(dir.resolve("switchboard.db"), false, 1_000);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** An agent that takes its question back ($/cancel_request): the request ends "withdrawn", once, and it is answered. */
  @Test
  void aQuestionTheAgentWithdrawsEndsWithdrawnOnceAndTheAgentIsAnswered(Vertx vertx) {
    String t = thread(vertx, "withdraw");
    gateway.prompt(t, "ask, then take it back");
    JsonObject card = gateway.awaitCard(t, 1);
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    waitFor(() -> gateway.ended.stream().anyMatch(f -> card.getString("requestId").equals(f.getString("requestId"))),
        "the card's end");
    List<JsonObject> ends = gateway.ended.stream()
        .filter(f -> card.getString("requestId").equals(f.getString("requestId"))).toList();
    assertEquals(1, ends.size(), "one end: " + ends);
    assertEquals("withdrawn", ends.get(0).getJsonObject("outcome").getString("reason"));
    JsonObject row = ledger().stream().map(o -> (JsonObject) o)
        .filter(r -> card.getString("requestId").equals(r.getString("requestId"))).findFirst().orElseThrow();
    assertEquals("cancelled", row.getString("state"));
    assertEquals("withdrawn", row.getJsonObject("outcome").getString("reason"));
    String report = gateway.events(t).stream().map(JsonObject::encode).filter(e -> e.contains("REPORT:"))
        .findFirst().orElseThrow();
    assertTrue(report.contains("\\\"outcome\\\":\\\"cancelled\\\""), "the agent was answered cancelled: " + report);
    assertTrue(report.contains("\\\"unknown\\\":-32601"), "a method it does not offer is answered -32601: " + report);
  }

  /**
   * An agent that can close and delete sessions is told when one is done: a deleted thread's session
   * is deleted (session/delete), and a stop closes the others (session/close) before the process ends.
   */
  @Test
  void aDeletedThreadDeletesTheAgentsSessionAndAStopClosesTheOthers(Vertx vertx) throws Exception {
    Path log = dir.resolve("methods.log");
    gateway = new AgentHarness(vertx, dir, new AgentRoom.Timings(30_000, 1_500),
        lifecycle(log)).start();
    String deleted = gateway.thread("bad", "web");
    gateway.prompt(deleted, "hello");
    assertEquals("end_turn", gateway.awaitTurnEnd(deleted, 1));
    PermissionHarness.await(vertx.eventBus().request(Addresses.THREAD_ARCHIVE, new JsonObject()
        .put("threadId", deleted)));
    PermissionHarness.await(vertx.eventBus().request(Addresses.THREAD_DELETE, new JsonObject()
        .put("threadId", deleted)));
    List<String> first = Files.readAllLines(log);
    assertTrue(first.contains("session/delete bad-session"), "the session deleted: " + first);
    assertTrue(first.stream().noneMatch(l -> l.startsWith("session/close")), "deleted, not only closed: " + first);

    String kept = gateway.thread("bad", "web");
    gateway.prompt(kept, "hello");
    assertEquals("end_turn", gateway.awaitTurnEnd(kept, 1));
    gateway.close();
    gateway = null;
    List<String> all = Files.readAllLines(log);
    assertEquals("session/close bad-session", all.get(all.size() - 1), "closed as the gateway stopped: " + all);
  }

  /** "Log out of this agent": an agent that offers logout is started for it alone and asked; one that does not says so. */
  @Test
  void anAgentIsLoggedOutWhereItOffersTo(Vertx vertx) throws Exception {
    Path log = dir.resolve("methods.log");
    gateway = new AgentHarness(vertx, dir, new AgentRoom.Timings(30_000, 1_500),
        lifecycle(log), AgentHarness.command("plain", List.of("node", SCRIPT.toString(), "cost"))).start();
    JsonObject out = PermissionHarness.await(vertx.eventBus().<JsonObject>request(Addresses.AGENT_LOGOUT,
        new JsonObject().put("agentId", "bad"))).body();
    assertEquals(new JsonObject().put("supported", true).put("loggedOut", true), out);
    assertTrue(Files.readAllLines(log).contains("logout "), Files.readAllLines(log).toString());
    assertEquals(new JsonObject().put("supported", false).put("loggedOut", false), PermissionHarness.await(
        vertx.eventBus().<JsonObject>request(Addresses.AGENT_LOGOUT, new JsonObject().put("agentId", "plain"))).body());
    assertEquals(ErrorCode.BAD_REQUEST, PermissionHarness.errorOf(vertx.eventBus().request(Addresses.AGENT_LOGOUT,
        new JsonObject().put("agentId", "nobody"))));
  }

  /** An agent that demands a login: the thread says how, as the exact command line for a terminal login. */
  @Test
  void anAgentThatDemandsALoginIsExplainedWithTheCommandToRun(Vertx vertx) {
    String t = thread(vertx, "auth");
    String text = failedTurn(t);
    assertTrue(text.contains("needs you to log in"), text);
    assertTrue(text.contains("Log in: BAD_AUTH_MODE='device code' node " + SCRIPT + " auth --login"), text);
    assertTrue(text.contains("agents[].authMethod to oauth (Browser sign-in)"), text);
    // A method that needs a variable says so (Codex's API key login failed with the id alone).
    assertTrue(text.contains("api-key (API key: Requires BAD_AGENT_KEY), with BAD_AGENT_KEY set in agents[].env"),
        text);
    assertTrue(!text.contains("Internal error"), text);
    JsonArray login = gateway.eventsOfKind(t, "system").get(0).getJsonArray("login");
    assertEquals(new JsonArray().add(new JsonObject().put("name", "Log in")
        .put("command", "BAD_AUTH_MODE='device code' node " + SCRIPT + " auth --login")), login, "for the page's copy button");
  }

  /**
   * What an agent says it cost (usage_update.cost, a session's running total) adds up per day and
   * agent: each report adds what is new, and a lower total (a new session) counts in full.
   */
  @Test
  void anAgentsReportedCostIsSummedPerDayAndAgent(Vertx vertx) {
    List<Double> added = new java.util.concurrent.CopyOnWriteArrayList<>();
    vertx.eventBus().<JsonObject>consumer(Addresses.USAGE_COST, m -> added.add(m.body().getDouble("added")));
    String t = thread(vertx, "cost");
    for (int i = 1; i <= 3; i++) {
      gateway.prompt(t, "turn " + i);
      gateway.awaitTurnEnd(t, i);
    }
    waitFor(() -> added.size() == 3, "three cost reports kept: " + added);
    assertEquals(List.of(0.5, 0.5, 0.2), added);
    JsonArray days = PermissionHarness.await(vertx.eventBus().<JsonObject>request(Addresses.STORE_USAGE_DAYS,
        new JsonObject())).body().getJsonArray("days");
    assertEquals(1, days.size(), days.encode());
    JsonObject today = days.getJsonObject(0);
    assertEquals("bad", today.getString("agentId"));
    assertEquals("USD", today.getString("currency"));
    assertEquals(1.2, today.getDouble("amount"), 1e-9);
  }

  @Test
  void aRequestAskedInTheSameBreathAsTheExitEndsAgentExitedEveryTime(Vertx vertx) {
    String t = thread(vertx, "ask-exit");
    int runs = 12;
    for (int i = 1; i <= runs; i++) {
      gateway.prompt(t, "ask and die " + i);
      int n = i;
      waitFor(() -> gateway.eventsOfKind(t, "agent_exited").size() >= n, "exit " + n);
    }
    // Whatever order the exit and the register took, no request is left waiting on a dead process.
    waitFor(() -> ledger().size() == runs && ledger().stream().noneMatch(r -> "pending".equals(
        ((JsonObject) r).getString("state"))), runs + " requests, all ended; ledger: " + ledger());
    for (Object o : ledger()) {
      JsonObject r = (JsonObject) o;
      assertEquals("agent-exited", r.getJsonObject("outcome").getString("reason"), r.encode());
      // An answer now is refused: nobody may "allow" a tool call whose process is gone.
      ErrorCode code = PermissionHarness.errorOf(vertx.eventBus().request(Addresses.PERMISSION_ANSWER,
          new JsonObject().put("requestId", r.getString("requestId")).put("optionId", "allow").put("surface", "web")));
      assertEquals(ErrorCode.ALREADY_ANSWERED, code);
    }
    waitFor(() -> gateway.roomStatus().getInteger("permissionsAsked") == 0, "the question count to return to 0");
  }

  @Test
  void aRequestUnderAForeignSessionIdEndsWithTheThreadsStop(Vertx vertx) {
    String t = thread(vertx, "foreign-session");
    gateway.prompt(t, "go");
    JsonObject card = gateway.awaitCard(t, 1);
    assertEquals("bad-session", card.getString("sessionId"), "the session is the gateway's, not the agent's claim");
    gateway.cancel(t);
    PermissionHarnessBridge.waitForEnd(gateway, card.getString("requestId"), "session-cancelled");
  }

  @Test
  void childrenOfAnAgentThatDiesOnItsOwnAreKilled(Vertx vertx) throws Exception {
    String t = threadWithPids(vertx, "fork-exit");
    gateway.prompt(t, "fork and die");
    gateway.awaitEvent(t, e -> "agent_exited".equals(e.getString("kind")), "agent_exited");
    List<Long> children = pids();
    assertEquals(2, children.size(), "one child in the agent's session, one in a session of its own");
    waitFor(() -> children.stream().noneMatch(BadAgentTest::alive),
        "the dead agent's children (" + children + ") to be killed", 15_000);
  }

  @Test
  void waitForExitAnswersWhenTheCommandExitsAndItsBackgroundedChildrenDieWithTheSession(Vertx vertx)
      throws Exception {
    String t = threadWithPids(vertx, "background");
    gateway.prompt(t, "go");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    JsonObject report = gateway.report(t);
    assertEquals(0, report.getJsonObject("exit").getInteger("exitCode"));
    // The shell exits after 0.3 s; its children hold the output open for 30 s but did not hold up the
    // answer: they are still running after the turn that waited for it ended.
    List<Long> children = pids();
    assertEquals(2, children.size());
    assertTrue(children.stream().allMatch(BadAgentTest::alive),
        "wait_for_exit answered before the backgrounded children ended, and they run while their session lives");
    gateway.stop();
    waitFor(() -> children.stream().noneMatch(BadAgentTest::alive),
        "the terminal's backgrounded children (one in a session of its own) to be killed with the session", 15_000);
  }

  @Test
  void anAgentWhoseStartFailedIsStillStoppedByTheShutdown(Vertx vertx) throws Exception {
    String error = failedTurn(threadWithPids(vertx, "bad-version"));
    assertTrue(error.contains("protocol version 99"), error);
    long pid = pids().get(0);
    // It ignores SIGTERM and the end of its stdin: the shutdown must not return while it runs.
    gateway.stop();
    assertTrue(!alive(pid), "the agent of a failed start outlived the agent room's stop");
  }

  @Test
  void terminalsSpawnedAtOnceStillRespectTheCap(Vertx vertx) {
    String t = thread(vertx, "many-terminals");
    gateway.prompt(t, "go");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    JsonObject report = gateway.report(t);
    assertEquals(Terminals.MAX_TERMINALS, report.getInteger("created"), report.encode());
    assertEquals(40 - Terminals.MAX_TERMINALS, report.getInteger("refused"), report.encode());
  }

  @Test
  void anAgentThatExitsAtStartIsReportedWithItsLastStderrLines(Vertx vertx) {
    String error = failedTurn(thread(vertx, "stderr-exit"));
    assertTrue(error.contains("failed to start"), error);
    assertTrue(error.contains("BAD_AGENT_KEY is not set"), error);
  }

  @Test
  void aCancelledTurnMarksItsUnfinishedToolCallsCancelled(Vertx vertx) {
    String t = thread(vertx, "tool-cancel");
    gateway.prompt(t, "go");
    gateway.awaitEvent(t, e -> "acp".equals(e.getString("kind"))
        && "tool_call".equals(e.getJsonObject("update").getString("sessionUpdate")), "the tool call");
    gateway.cancel(t);
    assertEquals("cancelled", gateway.awaitTurnEnd(t, 1));
    JsonObject last = gateway.eventsOfKind(t, "acp").stream().map(e -> e.getJsonObject("update"))
        .filter(u -> "slow-tool".equals(u.getString("toolCallId"))).reduce((a, b) -> b).orElseThrow();
    assertEquals("cancelled", last.getString("status"), "the tool call's last status");
  }

  @Test
  void aReplayThatOutlastsTheLoadAnswerIsNotShownAsTheNextTurn(Vertx vertx) {
    String t = thread(vertx, "late-replay");
    gateway.prompt(t, "one");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    ProcessHandle.of(gateway.agentStatus(t).getLong("pid")).orElseThrow().destroyForcibly();
    gateway.awaitEvent(t, e -> "agent_exited".equals(e.getString("kind")), "agent_exited");
    gateway.prompt(t, "two");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 2));
    String text = gateway.text(t);
    assertTrue(text.contains("answer to two"), text);
    assertTrue(!text.contains("REPLAYED"), "the replay's tail was stored as new events: " + text);
  }

  @Test
  void aPromptTheAgentRoomRefusesIsMarkedNotSentInTheTranscript(Vertx vertx) {
    String t = thread(vertx, "foreign-session"); // its turn waits on a card nobody answers
    gateway.prompt(t, "first");
    gateway.awaitCard(t, 1);
    for (int i = 0; i < TurnQueue.MAX_QUEUED; i++) {
      gateway.prompt(t, "queued " + i);
    }
    ErrorCode refused = PermissionHarness.errorOf(vertx.eventBus().request(Addresses.THREAD_PROMPT,
        new JsonObject().put("threadId", t).put("text", "one too many").put("surface", "web")));
    assertEquals(ErrorCode.BUSY, refused);
    JsonObject note = gateway.awaitEvent(t, e -> e.containsKey("refusedSeq"), "the refusal note");
    assertTrue(note.getString("text").startsWith("That message was not sent to the agent"), note.encode());
    JsonArray history = gateway.history(t, 0);
    JsonObject refusedMessage = history.stream().map(o -> (JsonObject) o)
        .filter(e -> e.getLong("seq").equals(note.getLong("refusedSeq"))).findFirst().orElseThrow();
    assertEquals("one too many", refusedMessage.getJsonObject("event").getString("text"));
  }

  @Test
  void agentRoomCommandsWithoutAThreadIdAreRefusedAtOnce(Vertx vertx) {
    thread(vertx, "foreign-session");
    for (String address : List.of(Addresses.AGENT_CANCEL, Addresses.AGENT_STOP, Addresses.AGENT_PROMPT)) {
      assertEquals(ErrorCode.BAD_REQUEST, PermissionHarness.errorOf(vertx.eventBus().request(address,
          new JsonObject().put("threadId", 42))), address);
    }
  }

  @Test
  void toolCallsKeptToShowWithARequestAreBoundedByBytes(Vertx vertx) {
    String t = thread(vertx, "big-tool-calls");
    gateway.prompt(t, "go");
    // 20 announced tool calls of 300 KB each: more than a session keeps, so the oldest is forgotten.
    JsonObject first = gateway.awaitCard(t, 1);
    assertTrue(20L * 300 * 1024 > io.switchboard.config.Limits.ofThisJvm().toolCallBytes(), "the test must go over the budget");
    assertEquals(null, first.getJsonObject("toolCall").getString("title"), "the oldest was forgotten");
    gateway.answer(first.getString("requestId"), "allow");
    JsonObject last = gateway.awaitCard(t, 2);
    assertEquals("Big edit 19", last.getJsonObject("toolCall").getString("title"), "the newest is shown whole");
    gateway.answer(last.getString("requestId"), "allow");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
  }

  @Test
  void anErrorsDataReachesTheThread(Vertx vertx) {
    String error = failedTurn(thread(vertx, "error-data"));
    assertTrue(error.contains("BAD_AGENT_KEY is not set; export it and try again"), error);
  }
}
