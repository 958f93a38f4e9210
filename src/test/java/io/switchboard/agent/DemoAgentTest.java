package io.switchboard.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.AgentHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The built-in demo agent, as a real child process, end to end through the rooms. */
@ExtendWith(VertxExtension.class)
class DemoAgentTest {
  @TempDir
  Path dir;
  AgentHarness gateway;

  @BeforeEach
  void start(Vertx vertx) {
    gateway = new AgentHarness(vertx, dir, new AgentRoom.Timings(30_000, 3_000), AgentHarness.demo()).start();
  }

  @AfterEach
  void stop() {
    gateway.close();
  }

  private Path notes(String threadId) {
    return dir.resolve("workspaces").resolve(threadId).resolve("demo-notes.md");
  }

  @Test
  void aFullTurnWithAnAllowedEditWritesTheFile() throws Exception {
    String t = gateway.thread("demo", "web");
    gateway.prompt(t, "remember the milk");
    JsonObject card = gateway.awaitCard(t, 1);
    assertEquals("edit", card.getJsonObject("toolCall").getString("kind"));
    // The card shows the whole tool call, diff included, merged from the earlier tool_call update.
    assertEquals("diff", card.getJsonObject("toolCall").getJsonArray("content").getJsonObject(0).getString("type"));
    assertEquals(3, card.getJsonArray("options").size());
    assertFalse(Files.exists(notes(t)), "nothing is written before the answer");
    gateway.answer(card.getString("requestId"), "allow-once");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    assertTrue(Files.readString(notes(t)).contains("- remember the milk"));
    String text = gateway.text(t);
    assertTrue(text.contains("remember the milk"), text);
    assertTrue(text.contains("Done"), text);
    assertTrue(gateway.eventsOfKind(t, "acp").stream()
        .anyMatch(e -> "plan".equals(e.getJsonObject("update").getString("sessionUpdate"))));
    // Events are numbered 1, 2, 3, ... and the transcript holds the same ones.
    var seqs = gateway.events(t).stream().map(e -> e.getLong("seq")).toList();
    for (int i = 0; i < seqs.size(); i++) {
      assertEquals(i + 1, seqs.get(i));
    }
    PermissionHarnessBridge.waitForHistory(gateway, t, seqs.size());
  }

  @Test
  void aRejectedEditLeavesTheFileAlone() {
    String t = gateway.thread("demo", "web");
    gateway.prompt(t, "do not write this");
    gateway.answer(gateway.awaitCard(t, 1).getString("requestId"), "reject");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    assertFalse(Files.exists(notes(t)));
    assertTrue(gateway.text(t).contains("left demo-notes.md as it was"));
  }

  @Test
  void aCommandRunsThroughTheTerminalMethodsOnceAllowed() {
    String t = gateway.thread("demo", "web");
    gateway.prompt(t, "run: echo hello-from-the-terminal");
    JsonObject card = gateway.awaitCard(t, 1);
    assertEquals("execute", card.getJsonObject("toolCall").getString("kind"));
    gateway.answer(card.getString("requestId"), "allow-once");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    String output = gateway.eventsOfKind(t, "acp").stream().map(e -> e.getJsonObject("update"))
        .filter(u -> "tool_call_update".equals(u.getString("sessionUpdate")) && u.containsKey("rawOutput"))
        .findFirst().orElseThrow().encode();
    assertTrue(output.contains("hello-from-the-terminal"), output);
    assertTrue(gateway.text(t).contains("exited with code 0"), gateway.text(t));
    // The gateway, which ran the terminal, tells the thread what it printed and how it exited.
    JsonObject shown = gateway.eventsOfKind(t, "terminal_output").get(0);
    assertTrue(shown.getString("output").contains("hello-from-the-terminal"), shown.encode());
    assertEquals(0, shown.getJsonObject("exitStatus").getInteger("exitCode"));
  }

  @Test
  void cancellingAtThePermissionPromptEndsTheCardAndTheTurn() {
    String t = gateway.thread("demo", "web");
    gateway.prompt(t, "something");
    JsonObject card = gateway.awaitCard(t, 1);
    gateway.cancel(t);
    assertEquals("cancelled", gateway.awaitTurnEnd(t, 1));
    PermissionHarnessBridge.waitForEnd(gateway, card.getString("requestId"), "session-cancelled");
    assertFalse(Files.exists(notes(t)));
  }

  @Test
  void promptsQueueAndRunOneAtATime() {
    String t = gateway.thread("demo", "web");
    assertEquals(0, gateway.prompt(t, "first").getInteger("ahead"));
    assertEquals(1, gateway.prompt(t, "second").getInteger("ahead"));
    gateway.answer(gateway.awaitCard(t, 1).getString("requestId"), "allow-always");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    // "Always allow" is remembered by the agent: the second turn asks nothing.
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 2));
    assertEquals(1, gateway.cards.size());
    assertEquals(2, gateway.eventsOfKind(t, "turn_started").size());
  }

  @Test
  void aStoppedAgentIsRespawnedAndResumesItsSession() {
    String t = gateway.thread("demo", "web");
    gateway.prompt(t, "one");
    gateway.answer(gateway.awaitCard(t, 1).getString("requestId"), "allow-once");
    gateway.awaitTurnEnd(t, 1);
    String session = gateway.agentStatus(t).getString("acpSessionId");
    long pid = gateway.agentStatus(t).getLong("pid");
    ProcessHandle.of(pid).orElseThrow().destroyForcibly();
    gateway.awaitEvent(t, e -> "agent_exited".equals(e.getString("kind")), "agent_exited");
    gateway.prompt(t, "two");
    gateway.answer(gateway.awaitCard(t, 2).getString("requestId"), "allow-once");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 2));
    assertEquals(session, gateway.agentStatus(t).getString("acpSessionId"), "session/resume kept the session");
    assertTrue(pid != gateway.agentStatus(t).getLong("pid"));
  }
}
