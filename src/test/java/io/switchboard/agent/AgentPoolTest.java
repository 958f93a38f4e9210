package io.switchboard.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.AgentSpec;
import io.switchboard.config.Settings;
import io.switchboard.permission.PermissionRoom;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Agent processes as a bounded resource, with the real demo agent (a JVM per process): idle agents
 * stop and resume unseen, a cap stops the least recently used idle agent to make room, a prompt
 * waits visibly (and cancellably) when every agent is busy, an agent with an open question is
 * never stopped, and a shared process's death ends every question of its threads exactly once.
 */
@ExtendWith(VertxExtension.class)
class AgentPoolTest {
  @TempDir
  Path dir;
  AgentHarness gateway;

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
  }

  /** The demo agent with a process per thread (its default is one shared process). */
  private static AgentSpec ownProcess() {
    return AgentHarness.demo().withProcesses(null, false);
  }

  private AgentHarness start(AgentSpec agent, int max, long idleStopMs) {
    gateway = new AgentHarness(Vertx.vertx(), dir, new AgentRoom.Timings(30_000, 1_500), agent);
    gateway.processes = new Settings.AgentProcesses(max, idleStopMs);
    return gateway.start();
  }

  /**
   * The n-th demo turn of a thread: the prompt, its card answered, its end. Returns the agent's status
   * read while the card waited: an agent with a question open is never idle, so a short idle stop
   * cannot have forgotten it yet.
   */
  private JsonObject turn(String t, int n) {
    return turn(t, n, n);
  }

  /** The same when the thread's turns so far did not all end with a turn_ended (its agent died in one). */
  private JsonObject turn(String t, int card, int ended) {
    gateway.prompt(t, "turn " + card);
    JsonObject waiting = gateway.awaitCard(t, card);
    JsonObject status = gateway.agentStatus(t);
    gateway.answer(waiting.getString("requestId"), "allow-once");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, ended), gateway.summary(t));
    return status;
  }

  private long processes() {
    return gateway.roomStatus().getLong("processes");
  }

  private static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  private Long pidOf(String t) {
    JsonObject s = gateway.agentStatus(t);
    return s == null ? null : s.getLong("pid");
  }

  @Test
  void anIdleAgentStopsAndTheNextPromptResumesItUnseen() {
    start(ownProcess(), 4, 1_000);
    String t = gateway.thread("demo", "web");
    JsonObject first = turn(t, 1);
    long pid = first.getLong("pid");
    String session = first.getString("acpSessionId");

    PermissionHarness.waitFor(() -> processes() == 0, "the idle agent to stop");
    assertFalse(alive(pid), "its process is gone");
    assertEquals(null, gateway.agentStatus(t), "its session is forgotten");
    assertTrue(gateway.roomStatus().getLong("idleStops") >= 1);

    JsonObject second = turn(t, 2);
    assertNotEquals(pid, second.getLong("pid"), "a new process");
    assertEquals(session, second.getString("acpSessionId"), "the same ACP session, resumed");
    assertEquals(List.of(), gateway.eventsOfKind(t, "system"), "nothing said: " + gateway.summary(t));
    assertEquals(List.of(), gateway.eventsOfKind(t, "agent_exited"), gateway.summary(t));
  }

  @Test
  void atTheCapTheLeastRecentlyUsedIdleAgentMakesRoom() {
    start(ownProcess(), 2, 600_000);
    String a = gateway.thread("demo", "web");
    String b = gateway.thread("demo", "web");
    String c = gateway.thread("demo", "web");
    turn(a, 1);
    long pidA = pidOf(a);
    turn(b, 1);
    long pidB = pidOf(b);
    turn(c, 1); // a was used least recently: it made room
    assertTrue(processes() <= 2, gateway.roomStatus().encode());
    PermissionHarness.waitFor(() -> !alive(pidA),
        "a's agent to be stopped");
    assertTrue(alive(pidB), "b's agent runs on");
    assertEquals(1, gateway.roomStatus().getLong("evictions"));

    turn(a, 2); // now b is the least recently used
    PermissionHarness.waitFor(() -> !alive(pidB),
        "b's agent to be stopped");
    assertTrue(processes() <= 2);
    for (String t : List.of(a, b, c)) {
      assertEquals(List.of(), gateway.eventsOfKind(t, "agent_exited"), gateway.summary(t));
    }
  }

  @Test
  void whenEveryAgentIsBusyAPromptWaitsVisiblyAndCanBeCancelled() {
    start(ownProcess(), 1, 600_000);
    String a = gateway.thread("demo", "web");
    String b = gateway.thread("demo", "web");
    gateway.prompt(a, "busy");
    JsonObject card = gateway.awaitCard(a, 1); // a has a question open: it may not be stopped
    long pidA = pidOf(a);

    gateway.prompt(b, "wait for a slot");
    JsonObject waiting = gateway.awaitEvent(b, e -> e.containsKey("queuedForSlot"), "the wait to be shown");
    assertEquals(1, waiting.getInteger("queuedForSlot"));
    assertTrue(waiting.getString("text").contains("place 1"), waiting.encode());
    assertEquals(1, gateway.roomStatus().getInteger("queuedPrompts"));
    gateway.cancel(b);
    assertEquals("cancelled", gateway.awaitTurnEnd(b, 1), gateway.summary(b));
    assertEquals(0, gateway.roomStatus().getInteger("queuedPrompts"));
    assertTrue(alive(pidA), "a's agent was not stopped");

    // Waiting again; a's turn ends, so its agent is idle and makes room.
    gateway.prompt(b, "wait again");
    PermissionHarness.waitFor(() -> gateway.roomStatus().getInteger("queuedPrompts") == 1, "b to wait again");
    gateway.answer(card.getString("requestId"), "allow-once");
    assertEquals("end_turn", gateway.awaitTurnEnd(a, 1), gateway.summary(a));
    gateway.answer(gateway.awaitCard(b, 1).getString("requestId"), "allow-once");
    assertEquals("end_turn", gateway.awaitTurnEnd(b, 2), gateway.summary(b));
    assertEquals(1, processes());
    assertEquals(List.of(), gateway.eventsOfKind(a, "agent_exited"), gateway.summary(a));
  }

  @Test
  void aSharedProcessServesManyThreadsAndItsDeathEndsEachQuestionOnce() {
    start(AgentHarness.demo(), 4, 600_000);
    String a = gateway.thread("demo", "web");
    String b = gateway.thread("demo", "web");
    gateway.prompt(a, "one");
    gateway.prompt(b, "two");
    JsonObject cardA = gateway.awaitCard(a, 1);
    JsonObject cardB = gateway.awaitCard(b, 1);
    long pid = pidOf(a);
    assertEquals(pid, pidOf(b), "one process for both threads");
    assertEquals(1, processes());
    assertNotEquals(gateway.agentStatus(a).getString("acpSessionId"), gateway.agentStatus(b).getString("acpSessionId"));

    ProcessHandle.of(pid).orElseThrow().destroyForcibly();
    for (JsonObject card : List.of(cardA, cardB)) {
      PermissionHarness.waitFor(() -> gateway.ended.stream()
          .anyMatch(e -> e.getString("requestId").equals(card.getString("requestId"))), "the card to end");
    }
    for (String t : List.of(a, b)) {
      gateway.awaitEvent(t, e -> "agent_exited".equals(e.getString("kind")), "the exit to be shown");
    }
    for (JsonObject card : List.of(cardA, cardB)) {
      List<JsonObject> ends = gateway.ended.stream()
          .filter(e -> e.getString("requestId").equals(card.getString("requestId"))).toList();
      assertEquals(1, ends.size(), "ended once: " + ends);
      assertEquals(PermissionRoom.AGENT_EXITED, ends.get(0).getJsonObject("outcome").getString("reason"));
    }
    // Both threads go on, on one new process (their first turns ended with the exit, not a turn_ended).
    turn(a, 2, 1);
    turn(b, 2, 1);
    assertEquals(pidOf(a), pidOf(b));
    assertEquals(1, processes());
  }

  @Test
  void aPerAgentCapHoldsBesideTheOverallOne() {
    start(ownProcess().withProcesses(1, false), 4, 600_000);
    String a = gateway.thread("demo", "web");
    String b = gateway.thread("demo", "web");
    turn(a, 1);
    turn(b, 1); // the agent's own cap is 1: a's agent made room
    assertEquals(1, processes(), gateway.roomStatus().encode());
    assertEquals(1, gateway.roomStatus().getLong("evictions"));
  }

  @Test
  void aSharedProcessThatLiesAboutSessionsCannotMixThreads() {
    Path script = Path.of("src", "test", "badpeers", "bad-agent.js").toAbsolutePath();
    // It answers every session/new with the same id, and asks under a session id it was never given.
    start(AgentHarness.command("liar", List.of("node", script.toString(), "foreign-session")).withProcesses(null, true),
        4, 600_000);
    String a = gateway.thread("liar", "web");
    String b = gateway.thread("liar", "web");
    gateway.prompt(a, "ask under a foreign session");
    gateway.prompt(b, "open a second session");
    assertEquals("error", gateway.awaitTurnEnd(b, 1), gateway.summary(b));
    String error = gateway.eventsOfKind(b, "system").get(0).getString("text");
    assertTrue(error.contains("session id of another thread's session"), error);
    // a's foreign request was refused, not shown anywhere; a's turn goes on until it is stopped.
    PermissionHarness.waitFor(() -> gateway.agentStatus(a) != null && gateway.agentStatus(a).getBoolean("busy"),
        "a's turn to run");
    gateway.cancel(a);
    assertEquals("cancelled", gateway.awaitTurnEnd(a, 1), gateway.summary(a));
    // The request came before the answer to the cancel on the same pipe: it was handled, and refused.
    assertEquals(List.of(), gateway.cards, "no card for a session the agent was not given");
    assertEquals(List.of(), gateway.ended);
    assertEquals(1, processes(), "one shared process");
  }

  @Test
  void aModeChosenBeforeAnIdleStopIsSetAgainWhenTheAgentResumes() {
    start(ownProcess(), 4, 1_000);
    String t = gateway.thread("demo", "web");
    turn(t, 1);
    JsonObject modes = gateway.eventsOfKind(t, "session_modes").get(0).getJsonObject("modes");
    assertEquals("ask", modes.getString("currentModeId"));
    io.switchboard.testkit.PermissionHarness.await(gateway.vertx.eventBus().request(
        io.switchboard.bus.Addresses.THREAD_SET_MODE, new JsonObject().put("threadId", t).put("modeId", "read-only")));
    PermissionHarness.waitFor(() -> processes() == 0, "the idle agent to stop");
    gateway.prompt(t, "after the idle stop");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 2), gateway.summary(t));
    assertTrue(gateway.text(t).contains("I am in read-only mode"), gateway.text(t));
    assertEquals(1, gateway.cards.size(), "no question in read-only mode");
    String refused = io.switchboard.testkit.PermissionHarness.errorOf(gateway.vertx.eventBus().request(
        io.switchboard.bus.Addresses.THREAD_SET_MODE, new JsonObject().put("threadId", t).put("modeId", "yolo")))
        .wireName;
    assertEquals("bad_frame", refused);
  }
}
