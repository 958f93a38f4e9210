package io.switchboard.agent;

import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.FakeAgent;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Faults no real agent produces on demand, from a scripted agent process. */
@ExtendWith(VertxExtension.class)
class FakeAgentTest {
  @TempDir
  Path dir;
  AgentHarness gateway;

  private String thread(Vertx vertx, String mode) {
    gateway = new AgentHarness(vertx, dir, new AgentRoom.Timings(30_000, 1_500),
        AgentHarness.javaMain("fake", FakeAgent.class, mode)).start();
    return gateway.thread("fake", "web");
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
  }

  @Test
  void aCrashWithAPendingPermissionCancelsItExactlyOnce(Vertx vertx) {
    String t = thread(vertx, "crash-permission");
    gateway.prompt(t, "go");
    String requestId = gateway.awaitCard(t, 1).getString("requestId");
    JsonObject exited = gateway.awaitEvent(t, e -> "agent_exited".equals(e.getString("kind")), "agent_exited");
    assertEquals(3, exited.getInteger("code"));
    PermissionHarnessBridge.waitForEnd(gateway, requestId, "agent-exited");
    assertEquals(1, gateway.ended.stream().filter(e -> e.getString("requestId").equals(requestId)).count());
    // The card can no longer be answered, and the thread takes the next prompt (a new process).
    io.switchboard.bus.ErrorCode code = io.switchboard.testkit.PermissionHarness.errorOf(vertx.eventBus().request(
        io.switchboard.bus.Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", requestId)
            .put("optionId", "yes").put("surface", "web")));
    assertEquals(io.switchboard.bus.ErrorCode.ALREADY_ANSWERED, code);
    gateway.prompt(t, "again");
    gateway.awaitCard(t, 2);
  }

  @Test
  void anAgentOverTheQuestionLimitWaitsInItsPipeUntilQuestionsEnd(Vertx vertx) {
    gateway = new AgentHarness(vertx, dir, new AgentRoom.Timings(30_000, 1_500),
        AgentHarness.javaMain("fake", FakeAgent.class, "many-questions"));
    gateway.maxQuestions = 4;
    gateway.start();
    String t = gateway.thread("fake", "web");
    gateway.prompt(t, "go");
    gateway.awaitCard(t, 4);
    // The room pauses the agent at its fourth question: the other eight stay unread in its pipe.
    waitFor(() -> gateway.roomStatus().getInteger("pausedAgents") == 1,
        "the agent to be paused");
    assertEquals(4, gateway.roomStatus().getInteger("permissionsAsked"));
    assertEquals(4, gateway.cards.size(), "no more than the limit is open at once");
    int answered = 0;
    while (answered < 12) {
      int shown = gateway.cards.size();
      assertTrue(shown - answered <= 4, "open questions: " + (shown - answered));
      gateway.answer(gateway.cards.get(answered).getString("requestId"), "yes");
      answered++;
      if (answered < 12) {
        gateway.awaitCard(t, Math.min(12, answered + 1));
      }
    }
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    assertEquals(12, gateway.cards.size());
    assertTrue(gateway.ended.stream().allMatch(e -> "selected".equals(e.getJsonObject("outcome").getString("outcome"))),
        "each question was answered, none refused: " + gateway.ended);
  }

  @Test
  void anImageForAnAgentThatTakesNoneIsRefusedWithTheReasonAndTheThreadGoesOn(Vertx vertx) throws Exception {
    String t = thread(vertx, "echo");
    String png = io.switchboard.testkit.TestImages.pngBase64(20, 10);
    io.switchboard.testkit.PermissionHarness.await(vertx.eventBus().request(io.switchboard.bus.Addresses.THREAD_PROMPT,
        new JsonObject().put("threadId", t).put("text", "what is this?").put("images", new io.vertx.core.json.JsonArray()
            .add(new JsonObject().put("mimeType", "image/png").put("data", png)))));
    assertEquals("error", gateway.awaitTurnEnd(t, 1));
    assertTrue(gateway.eventsOfKind(t, "system").stream().anyMatch(e -> e.getString("text", "")
        .contains("does not take images")), String.valueOf(gateway.events(t)));
    assertTrue(gateway.eventsOfKind(t, "prompt_capabilities").stream().noneMatch(e -> e.getBoolean("image")));
    gateway.prompt(t, "plain text then");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 2), "the next prompt runs");
  }

  @Test
  void garbageLinesAreSkippedAndAnsweredWhereTheyCarryAnId(Vertx vertx) {
    String t = thread(vertx, "garbage");
    gateway.prompt(t, "go");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    assertTrue(gateway.text(t).contains("after garbage"), gateway.text(t));
    JsonObject answered = gateway.report(t).getJsonObject("answeredInvalid");
    assertEquals(77, answered.getInteger("id"));
    assertEquals(-32600, answered.getJsonObject("error").getInteger("code"));
  }

  @Test
  void aTenMebibyteLineIsDroppedWithAClearErrorAndTheTurnGoesOn(Vertx vertx) {
    String t = thread(vertx, "huge");
    gateway.prompt(t, "go");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    assertTrue(gateway.text(t).contains("after huge"));
    assertFalse(gateway.text(t).contains("xxxx"));
    String error = gateway.eventsOfKind(t, "system").get(0).getString("text");
    assertTrue(error.contains("over the 8 MiB limit"), error);
  }

  @Test
  void aSilentAgentIsStoppedAfterACancelSoNothingWaitsOnIt(Vertx vertx) {
    String t = thread(vertx, "silent");
    gateway.prompt(t, "go");
    waitFor(() -> gateway.agentStatus(t) != null && "READY".equals(gateway.agentStatus(t).getString("state")),
        "the agent to start");
    long pid = gateway.agentStatus(t).getLong("pid");
    gateway.cancel(t);
    assertEquals("cancelled", gateway.awaitTurnEnd(t, 1));
    waitFor(() -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true), "the silent agent to be stopped");
    assertTrue(gateway.eventsOfKind(t, "system").stream().anyMatch(e -> e.getString("text").contains("did not stop")));
  }

  @Test
  void collidingRequestIdsAndTheFsMethods(Vertx vertx) throws Exception {
    String t = thread(vertx, "ids");
    gateway.prompt(t, "go");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    JsonObject report = gateway.report(t);
    assertEquals("written", report.getJsonObject("read").getJsonObject("result").getString("content"));
    assertEquals(-32002, report.getJsonObject("missing").getJsonObject("error").getInteger("code"));
    assertEquals("written", Files.readString(dir.resolve("workspaces").resolve(t).resolve("notes/ids.txt")));
    assertTrue(gateway.eventsOfKind(t, "acp").stream()
        .anyMatch(e -> "brand_new_kind".equals(e.getJsonObject("update").getString("sessionUpdate"))),
        "unknown update kinds are passed through");
  }

  @Test
  void terminalsRunTruncateKillAndDieWithTheirSession(Vertx vertx) {
    String t = thread(vertx, "terminal");
    gateway.prompt(t, "go");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    JsonObject report = gateway.report(t);
    assertEquals(0, report.getJsonObject("exit").getJsonObject("result").getInteger("exitCode"));
    JsonObject output = report.getJsonObject("output").getJsonObject("result");
    assertTrue(output.getBoolean("truncated"));
    // 51 bytes of two-byte characters: cut on a character boundary, 25 of them left.
    assertEquals("\u00e9".repeat(25), output.getString("output"));
    assertEquals("SIGKILL", report.getJsonObject("killed").getJsonObject("result").getString("signal"));
    assertEquals(-32602, report.getJsonObject("outside").getJsonObject("error").getInteger("code"));
    // In its sandbox the command starts a moment after terminal/create answers (bwrap sets up first).
    waitFor(() -> sleepers("32.5").size() == 1, "the terminal left running to be alive while its session lives");
    gateway.stop();
    waitFor(() -> sleepers("32.5").isEmpty(), "the session's terminals to be killed");
    assertTrue(sleepers("31.5").isEmpty());
  }

  @Test
  void fsEscapesAreRefused(Vertx vertx) {
    String t = thread(vertx, "escape");
    gateway.prompt(t, "go");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    JsonObject report = gateway.report(t);
    for (String key : report.fieldNames()) {
      JsonObject answer = report.getJsonObject(key);
      assertTrue(answer.containsKey("error"), key + " was allowed: " + answer);
      assertEquals(-32602, answer.getJsonObject("error").getInteger("code"), key + ": " + answer);
    }
    assertTrue(report.getJsonObject("read <ws>/etc-link/passwd").getJsonObject("error").getString("message")
        .contains("symbolic link"));
    assertFalse(Files.exists(Path.of("/etc/switchboard-escape")));
    assertFalse(Files.exists(dir.resolve("workspaces").resolve("x")));
  }

  @Test
  void aLoadedSessionsReplayIsNotShownTwice(Vertx vertx) {
    String t = thread(vertx, "load");
    gateway.prompt(t, "one");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    long pid = gateway.agentStatus(t).getLong("pid");
    ProcessHandle.of(pid).orElseThrow().destroyForcibly();
    gateway.awaitEvent(t, e -> "agent_exited".equals(e.getString("kind")), "agent_exited");
    gateway.prompt(t, "two");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 2));
    assertEquals("fake-session-1", gateway.agentStatus(t).getString("acpSessionId"), "session/load kept it");
    assertFalse(gateway.text(t).contains("REPLAYED"), gateway.text(t));
  }

  private static List<ProcessHandle> sleepers(String marker) {
    // The sleep itself (its one argument is the marker), not the sandbox (bwrap) that runs it.
    return ProcessHandle.allProcesses().filter(p -> p.info().arguments().map(a -> List.of(a).equals(List.of(marker)))
        .orElse(false) && p.isAlive()).toList();
  }
}
