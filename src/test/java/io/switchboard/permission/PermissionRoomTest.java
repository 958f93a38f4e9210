package io.switchboard.permission;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.errorOf;
import static io.switchboard.testkit.PermissionHarness.request;
import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Each rule of the permission ledger, exercised over the event bus against a real SQLite file. */
@ExtendWith(VertxExtension.class)
class PermissionRoomTest {
  @TempDir
  Path dir;
  PermissionHarness rooms;

  @BeforeEach
  void start(Vertx vertx) {
    rooms = new PermissionHarness(vertx, dir.resolve("switchboard.db")).start();
  }

  @AfterEach
  void stop() {
    rooms.close();
  }

  @Test
  void aRequestTheLedgerCannotRecordIsNeverShownAndItsAgentHearsCancelled() {
    // A store whose disk fails every append (a room of its own on a bus of its own).
    Vertx other = Vertx.vertx();
    try {
      List<JsonObject> shown = new java.util.concurrent.CopyOnWriteArrayList<>();
      List<JsonObject> ends = new java.util.concurrent.CopyOnWriteArrayList<>();
      other.eventBus().<JsonObject>consumer(Addresses.STORE_LEDGER_VOID_PENDING,
          m -> m.reply(new JsonObject().put("voided", new io.vertx.core.json.JsonArray())));
      other.eventBus().<JsonObject>consumer(Addresses.STORE_LEDGER_APPEND, m -> m.fail(500, "disk I/O error"));
      other.eventBus().<JsonObject>consumer(Addresses.STORE_LEDGER_END, m -> {
        ends.add(m.body());
        m.fail(500, "disk I/O error");
      });
      other.eventBus().<JsonObject>consumer(Addresses.PERMISSION_SHOWN, m -> shown.add(m.body()));
      await(other.deployVerticle(new PermissionRoom(100)));
      JsonObject outcome = await(other.eventBus().<JsonObject>request(Addresses.PERMISSION_REGISTER,
          request("t1", "s1", "tc1", "web"), io.switchboard.bus.Bus.untilEnded())).body().getJsonObject("outcome");
      assertEquals("cancelled", outcome.getString("outcome"));
      assertEquals("not-recorded", outcome.getString("reason"));
      assertTrue(shown.isEmpty(), "a request with no ledger row is never shown: " + shown);
      assertTrue(ends.isEmpty(), "nothing to end in a ledger that has no row: " + ends);
    } finally {
      await(other.close());
    }
  }

  /**
   * Cluster mode: the surfaces are on edge nodes. A request outlives its last edge for the grace
   * period (an edge of any incarnation that joins in time keeps it waiting); once no edge was there
   * for that long, the pending requests end no-edge and new ones end at once, until an edge joins.
   */
  @Test
  void withoutAnEdgeNodeForTheGracePeriodPendingRequestsEndNoEdge() {
    rooms.crashPermissionRoom();
    var bus = rooms.vertx.eventBus();
    JsonObject edge = new JsonObject().put("node", "edge").put("role", "edge").put("incarnation", "e1");
    bus.<JsonObject>localConsumer(io.switchboard.bus.Addresses.CLUSTER_MEMBERS, m -> m.reply(new JsonObject()
        .put("members", new io.vertx.core.json.JsonArray().add(edge.copy()).add(new JsonObject().put("node", "b")
            .put("role", "agent").put("incarnation", "a1")))));
    await(rooms.vertx.deployVerticle(new PermissionRoom(100).edgeGrace(2_000)));
    var first = rooms.register(request("t1", "s1", "g1", "web"));
    waitFor(() -> rooms.shown.size() == 1, "shown while the edge is there");
    // The edge leaves and a restarted one (another incarnation) joins within the grace: it waits on.
    rooms.publish(io.switchboard.bus.Addresses.CLUSTER_MEMBER, edge.copy().put("event", "left"));
    sleep(200);
    rooms.publish(io.switchboard.bus.Addresses.CLUSTER_MEMBER, edge.copy().put("event", "joined")
        .put("incarnation", "e2"));
    // Past the grace of the first leave; the grace is long enough that a busy machine's late
    // wake-up of this thread (not the room's) cannot let it run out before the join is sent.
    sleep(2_300);
    assertFalse(first.isComplete(), "still pending: an edge came back within the grace period");
    // Gone for longer than the grace: it ends, and so does a new one, at once.
    rooms.publish(io.switchboard.bus.Addresses.CLUSTER_MEMBER, edge.copy().put("event", "left")
        .put("incarnation", "e2"));
    assertCancelled(await(first), PermissionRoom.NO_EDGE);
    assertCancelled(await(rooms.register(request("t1", "s1", "g2", "web"))), PermissionRoom.NO_EDGE);
    assertEquals(PermissionRoom.NO_EDGE, rooms.ledgerRow(rooms.idOf("g1")).getJsonObject("outcome")
        .getString("reason"));
    // An edge joins: requests wait for an answer again.
    rooms.publish(io.switchboard.bus.Addresses.CLUSTER_MEMBER, edge.copy().put("event", "joined")
        .put("incarnation", "e3"));
    sleep(100);
    var third = rooms.register(request("t1", "s1", "g3", "web"));
    waitFor(() -> rooms.shown.size() == 2, "the third shown once an edge is back");
    assertFalse(third.isComplete());
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void largeToolCallsAreBoundedByTheirSizeNotOnlyByTheirCount() {
    rooms.crashPermissionRoom();
    await(rooms.vertx.deployVerticle(new PermissionRoom(100, 50_000)));
    String diff = "x".repeat(20_000); // a tool call holding a large diff, as real edits do
    for (String tc : List.of("big1", "big2", "big3")) {
      JsonObject r = request("t1", "s1", tc, "web");
      r.getJsonObject("toolCall").put("content", new io.vertx.core.json.JsonArray().add(new JsonObject()
          .put("type", "diff").put("path", "/w/a.txt").put("newText", diff)));
      rooms.register(r);
    }
    waitFor(() -> rooms.shown.size() == 2 && rooms.ended.size() == 1, "two shown, one refused");
    assertEquals(PermissionRoom.TOO_MANY_PENDING, rooms.ended.get(0).getJsonObject("outcome").getString("reason"));
    // Ending one frees its bytes: the next large one is shown.
    await(rooms.answer(rooms.shown.get(0).getString("requestId"), "allow", "web", null));
    JsonObject r = request("t1", "s1", "big4", "web");
    r.getJsonObject("toolCall").put("content", new io.vertx.core.json.JsonArray().add(new JsonObject()
        .put("type", "diff").put("path", "/w/a.txt").put("newText", diff)));
    rooms.register(r);
    waitFor(() -> rooms.shown.size() == 3, "the fourth shown once the first ended");
  }

  @Test
  void aRegistrationFromAnAgentGenerationThatAlreadyExitedEndsAgentExited() {
    // The exit fact overtakes the register (the agent asked and died in the same breath).
    rooms.publish(Addresses.AGENT_EXITED, new JsonObject().put("threadId", "t1").put("sessionId", "s1")
        .put("generation", "g7"));
    JsonObject outcome = await(rooms.register(request("t1", "s1", "tc1", "web").put("generation", "g7")))
        .getJsonObject("outcome");
    assertEquals("agent-exited", outcome.getString("reason"));
    assertTrue(rooms.shown.isEmpty(), "never shown: " + rooms.shown);
    // A registration of the next generation of the same thread is not touched by the old exit.
    rooms.register(request("t1", "s1", "tc2", "web").put("generation", "g8"));
    waitFor(() -> rooms.shown.size() == 1, "the next generation's card");
  }

  @Test
  void registerShowsACardWithAnUnguessableIdAndRecordsItPending() {
    rooms.register(request("t1", "s1", "tc1", "web"));
    rooms.register(request("t1", "s1", "tc2", "web"));
    String a = rooms.idOf("tc1");
    String b = rooms.idOf("tc2");
    assertNotEquals(a, b);
    assertTrue(a.matches("pr_[A-Za-z0-9_-]{22}"), a);
    JsonObject card = rooms.shown.stream().filter(c -> c.getString("requestId").equals(a)).findFirst().orElseThrow();
    assertEquals("t1", card.getString("threadId"));
    assertEquals(3, card.getJsonArray("options").size());
    assertEquals("pending", rooms.ledgerRow(a).getString("state"));
    assertEquals(2, rooms.pendingCards("t1").size());
    assertEquals(0, rooms.pendingCards("other").size());
  }

  @Test
  void aValidAnswerCompletesTheAgentsPromiseAndTheLedger() {
    Future<JsonObject> agent = rooms.register(request("t1", "s1", "tc1", "web", "telegram:42"));
    String id = rooms.idOf("tc1");
    JsonObject reply = await(rooms.answer(id, "allow", "telegram:42", "alice"));
    JsonObject outcome = await(agent).getJsonObject("outcome");
    assertEquals("selected", outcome.getString("outcome"));
    assertEquals("allow", outcome.getString("optionId"));
    assertEquals("allow_once", outcome.getString("kind"));
    assertEquals(outcome, reply.getJsonObject("outcome"));
    JsonObject row = rooms.ledgerRow(id);
    assertEquals("selected", row.getString("state"));
    assertEquals("telegram:42", row.getJsonObject("outcome").getJsonObject("answeredBy").getString("surface"));
    assertEquals("alice", row.getJsonObject("outcome").getJsonObject("answeredBy").getString("user"));
    waitFor(() -> rooms.endedFacts(id).size() == 1, "the resolved fact");
    assertEquals(0, rooms.pendingCards(null).size());
  }

  @Test
  void overTheLimitARequestIsRecordedAndCancelledWithoutACard() {
    rooms.restartPermissionRoom(2);
    Future<JsonObject> first = rooms.register(request("t1", "s1", "tc1", "web"));
    rooms.register(request("t1", "s1", "tc2", "web"));
    waitFor(() -> rooms.shown.size() == 2, "two cards");
    JsonObject third = await(rooms.register(request("t1", "s1", "tc3", "web")));
    assertEquals("cancelled", third.getJsonObject("outcome").getString("outcome"));
    assertEquals(PermissionRoom.TOO_MANY_PENDING, third.getJsonObject("outcome").getString("reason"));
    String id = third.getString("requestId");
    JsonObject row = rooms.ledgerRow(id);
    assertEquals("cancelled", row.getString("state"), "the refusal is in the ledger");
    assertTrue(rooms.shown.stream().noneMatch(c -> id.equals(c.getString("requestId"))), "no card for it");
    assertEquals(2, rooms.pendingCards("t1").size());
    // Below the limit again, a request is shown as usual.
    await(rooms.answer(rooms.idOf("tc1"), "allow", "web", null));
    await(first);
    rooms.register(request("t1", "s1", "tc4", "web"));
    waitFor(() -> rooms.shown.size() == 3, "the fourth card");
  }

  @Test
  void unknownIdIsUnknownRequest() {
    assertEquals(ErrorCode.UNKNOWN_REQUEST, errorOf(rooms.answer("pr_nope", "allow", "web", null)));
  }

  @Test
  void aSecondAnswerIsAlreadyAnsweredAndChangesNothing() {
    Future<JsonObject> agent = rooms.register(request("t1", "s1", "tc1", "web"));
    String id = rooms.idOf("tc1");
    await(rooms.answer(id, "reject", "web", null));
    assertEquals(ErrorCode.ALREADY_ANSWERED, errorOf(rooms.answer(id, "allow", "web", null)));
    assertEquals("reject", await(agent).getJsonObject("outcome").getString("optionId"));
    assertEquals("reject", rooms.ledgerRow(id).getJsonObject("outcome").getString("optionId"));
  }

  @Test
  void theWinningAnswerSentAgainWithItsKeyLearnsItWonAcrossARestart() {
    Future<JsonObject> agent = rooms.register(request("t1", "s1", "tc1", "web"));
    String id = rooms.idOf("tc1");
    assertEquals(ErrorCode.BAD_REQUEST, errorOf(rooms.answer(id, "allow", "web", null, 7)));
    assertEquals(ErrorCode.BAD_REQUEST, errorOf(rooms.answer(id, "allow", "web", null, "k".repeat(129))));
    assertTrue(rooms.pendingCards("t1").size() == 1, "a refused key changes nothing");
    JsonObject won = await(rooms.answer(id, "reject", "web", null, "ak_1"));
    assertNull(won.getValue("repeated"));
    // Its reply was lost: the same answer again is told it won, with the outcome, and changes nothing.
    JsonObject again = await(rooms.answer(id, "reject", "web", null, "ak_1"));
    assertEquals(Boolean.TRUE, again.getBoolean("repeated"));
    assertEquals(won.getJsonObject("outcome"), again.getJsonObject("outcome"));
    // Another answer (another key, or none) is refused as ever.
    assertEquals(ErrorCode.ALREADY_ANSWERED, errorOf(rooms.answer(id, "allow", "web", null, "ak_2")));
    assertEquals(ErrorCode.ALREADY_ANSWERED, errorOf(rooms.answer(id, "reject", "web", null)));
    assertEquals("reject", await(agent).getJsonObject("outcome").getString("optionId"));
    // The key is in the ledger: after a restart the same answer still learns it won.
    rooms.restartPermissionRoom();
    assertEquals("ak_1", rooms.ledgerRow(id).getString("answerKey"));
    assertEquals(Boolean.TRUE, await(rooms.answer(id, "reject", "web", null, "ak_1")).getBoolean("repeated"));
    assertEquals(ErrorCode.ALREADY_ANSWERED, errorOf(rooms.answer(id, "allow", "web", null, "ak_2")));
    assertEquals(1, rooms.endedFacts(id).size(), "one end, however often it was answered");
  }

  @Test
  void aSurfaceOutsideTheSetIsNotEligibleAndTheEntryIsUntouched() {
    Future<JsonObject> agent = rooms.register(request("t1", "s1", "tc1", "web"));
    String id = rooms.idOf("tc1");
    assertEquals(ErrorCode.NOT_ELIGIBLE, errorOf(rooms.answer(id, "allow", "telegram:7", "mallory")));
    assertFalse(agent.isComplete());
    assertEquals("pending", rooms.ledgerRow(id).getString("state"));
    assertEquals(1, rooms.pendingCards("t1").size());
    await(rooms.answer(id, "reject", "web", null));
    assertEquals("reject", await(agent).getJsonObject("outcome").getString("optionId"));
  }

  @Test
  void anOptionTheAgentDidNotOfferIsInvalidAndTheEntryIsUntouched() {
    Future<JsonObject> agent = rooms.register(request("t1", "s1", "tc1", "web"));
    String id = rooms.idOf("tc1");
    assertEquals(ErrorCode.INVALID_OPTION, errorOf(rooms.answer(id, "allow_everything", "web", null)));
    assertFalse(agent.isComplete());
    await(rooms.answer(id, "always", "web", null));
    assertEquals("allow_always", await(agent).getJsonObject("outcome").getString("kind"));
  }

  @Test
  void aCancelledSessionCancelsItsRequestsOnly() {
    Future<JsonObject> s1 = rooms.register(request("t1", "s1", "tc1", "web"));
    Future<JsonObject> s2 = rooms.register(request("t1", "s2", "tc2", "web"));
    rooms.idOf("tc1");
    rooms.idOf("tc2");
    rooms.publish(Addresses.SESSION_CANCELLED, new JsonObject().put("threadId", "t1").put("sessionId", "s1"));
    assertCancelled(await(s1), PermissionRoom.SESSION_CANCELLED);
    assertFalse(s2.isComplete());
    assertEquals("cancelled", rooms.ledgerRow(rooms.idOf("tc1")).getString("state"));
    assertEquals("pending", rooms.ledgerRow(rooms.idOf("tc2")).getString("state"));
  }

  @Test
  void anExitedAgentCancelsItsThreadsRequests() {
    Future<JsonObject> t1 = rooms.register(request("t1", "s1", "tc1", "web"));
    Future<JsonObject> t2 = rooms.register(request("t2", "s9", "tc2", "web"));
    rooms.idOf("tc1");
    rooms.idOf("tc2");
    rooms.publish(Addresses.AGENT_EXITED, new JsonObject().put("threadId", "t1").put("code", 1));
    assertCancelled(await(t1), PermissionRoom.AGENT_EXITED);
    assertFalse(t2.isComplete());
    assertEquals(PermissionRoom.AGENT_EXITED, rooms.ledgerRow(rooms.idOf("tc1")).getJsonObject("outcome").getString("reason"));
  }

  @Test
  void aClosingSurfaceLeavesTheSetAndTheLastOneCancels() {
    Future<JsonObject> both = rooms.register(request("t1", "s1", "tc1", "web", "telegram:42"));
    Future<JsonObject> tgOnly = rooms.register(request("t2", "s2", "tc2", "telegram:42"));
    String bothId = rooms.idOf("tc1");
    rooms.idOf("tc2");
    rooms.publish(Addresses.SURFACE_CLOSED, new JsonObject().put("surface", "telegram:42"));
    assertCancelled(await(tgOnly), PermissionRoom.SURFACE_GONE);
    assertFalse(both.isComplete());
    // The closed surface is out of the set now: its late tap is refused.
    assertEquals(ErrorCode.NOT_ELIGIBLE, errorOf(rooms.answer(bothId, "allow", "telegram:42", null)));
    await(rooms.answer(bothId, "allow", "web", null));
    assertEquals("selected", await(both).getJsonObject("outcome").getString("outcome"));
  }

  @Test
  void aRequestWithNoSurfaceIsCancelledAtOnce() {
    assertCancelled(await(rooms.register(request("t1", "s1", "tc1"))), PermissionRoom.NO_SURFACE);
  }

  @Test
  void shutdownCancelsTheWholeTableAndLaterRegistrations() {
    Future<JsonObject> a = rooms.register(request("t1", "s1", "tc1", "web"));
    Future<JsonObject> b = rooms.register(request("t2", "s2", "tc2", "telegram:1"));
    rooms.idOf("tc1");
    rooms.idOf("tc2");
    assertEquals(2, rooms.shutdown().getInteger("cancelled"));
    // The reply comes after the ledger has every end state.
    assertEquals(0, rooms.ledger("pending", 100).size());
    assertCancelled(await(a), PermissionRoom.SHUTDOWN);
    assertCancelled(await(b), PermissionRoom.SHUTDOWN);
    assertCancelled(await(rooms.register(request("t3", "s3", "tc3", "web"))), PermissionRoom.SHUTDOWN);
  }

  @Test
  void aRestartVoidsWhatWasPendingAndTellsTheSurfaces() {
    Future<JsonObject> agent = rooms.register(request("t1", "s1", "tc1", "web"));
    String id = rooms.idOf("tc1");
    rooms.restartPermissionRoom();
    JsonObject row = rooms.ledgerRow(id);
    assertEquals("cancelled", row.getString("state"));
    assertEquals(PermissionRoom.VOIDED_BY_RESTART, row.getJsonObject("outcome").getString("reason"));
    waitFor(() -> rooms.endedFacts(id).size() == 1, "the voided fact");
    assertFalse(agent.isComplete(), "the process that asked is gone; nobody answers it");
    // A tap on the stale card learns what happened, from the ledger.
    assertEquals(ErrorCode.ALREADY_ANSWERED, errorOf(rooms.answer(id, "allow", "web", null)));
  }

  @Test
  void malformedRequestsAreRefusedWithTheFieldNamed() {
    JsonObject noOptions = request("t1", "s1", "tc1", "web");
    noOptions.remove("options");
    assertEquals(ErrorCode.BAD_REQUEST, errorOf(rooms.register(noOptions)));
    JsonObject badKind = request("t1", "s1", "tc1", "web");
    badKind.getJsonArray("options").getJsonObject(0).put("kind", "maybe");
    assertEquals(ErrorCode.BAD_REQUEST, errorOf(rooms.register(badKind)));
    assertEquals(ErrorCode.BAD_REQUEST, errorOf(rooms.answer("x", null, "web", null)));
    assertEquals(0, rooms.ledger("all", 10).size());
  }

  @Test
  void twoAnswersAtOnceHaveExactlyOneWinner() {
    Future<JsonObject> agent = rooms.register(request("t1", "s1", "tc1", "web", "telegram:1"));
    String id = rooms.idOf("tc1");
    List<Future<JsonObject>> answers = List.of(rooms.answer(id, "allow", "web", null),
        rooms.answer(id, "reject", "telegram:1", null));
    long wins = answers.stream().filter(f -> errorOf(f) == null).count();
    assertEquals(1, wins);
    assertEquals(1, answers.stream().filter(f -> errorOf(f) == ErrorCode.ALREADY_ANSWERED).count());
    JsonObject winner = answers.stream().filter(f -> errorOf(f) == null).findFirst().orElseThrow().result();
    assertEquals(winner.getJsonObject("outcome"), await(agent).getJsonObject("outcome"));
    waitFor(() -> rooms.endedFacts(id).size() == 1, "one ended fact");
  }

  @Test
  void refusedAnswersAreInTheAuditTrail() {
    rooms.register(request("t1", "s1", "tc1", "web"));
    String id = rooms.idOf("tc1");
    assertEquals(ErrorCode.NOT_ELIGIBLE, errorOf(rooms.answer(id, "allow", "slack:C1", "eve")));
    assertNull(errorOf(rooms.answer(id, "allow", "web", null)));
    JsonObject row = rooms.ledgerRow(id);
    assertEquals("web", row.getJsonObject("outcome").getJsonObject("answeredBy").getString("surface"));
    List<String> trail = row.getJsonArray("events").stream()
        .map(e -> ((JsonObject) e).getString("event") + "/" + ((JsonObject) e).getString("surface")
            + "/" + ((JsonObject) e).getString("user") + "/" + ((JsonObject) e).getString("detail"))
        .toList();
    assertEquals(List.of("registered/null/null/null", "rejected/slack:C1/eve/not_eligible",
        "selected/web/null/allow"), trail);
  }

  /** A chat's tap is judged here, against its plugin's approvers and the thread's starter, and audited. */
  @Test
  void aChatTapFromSomeoneNotAnApproverIsRefusedHereAndAudited() {
    Future<JsonObject> agent = rooms.register(request("t1", "s1", "tc1", "web", "tg:5").put("startedBy", "5"));
    String id = rooms.idOf("tc1");
    JsonObject chat = new ChatApproval(List.of(), false, false).toJson();
    Future<JsonObject> stranger = rooms.vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_ANSWER,
        new JsonObject().put("requestId", id).put("optionId", "allow").put("surface", "tg:5").put("user", "6")
            .put("chat", chat)).map(m -> m.body());
    assertEquals(ErrorCode.NOT_APPROVER, errorOf(stranger));
    assertTrue(stranger.cause().getMessage().contains("Only 5 may answer"), stranger.cause().getMessage());
    assertFalse(agent.isComplete());
    assertEquals(ErrorCode.BAD_REQUEST, errorOf(rooms.vertx.eventBus().request(Addresses.PERMISSION_ANSWER,
        new JsonObject().put("requestId", id).put("optionId", "allow").put("surface", "tg:5")
            .put("chat", new JsonObject().put("cardsInGroups", 1)))));
    // The starter, unnamed in a direct message, answers.
    await(rooms.vertx.eventBus().request(Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", id)
        .put("optionId", "allow").put("surface", "tg:5").put("chat", chat)));
    JsonObject row = rooms.ledgerRow(id);
    assertEquals("5", row.getJsonObject("outcome").getJsonObject("answeredBy").getString("user"));
    List<String> trail = row.getJsonArray("events").stream()
        .map(e -> ((JsonObject) e).getString("event") + "/" + ((JsonObject) e).getString("user")
            + "/" + ((JsonObject) e).getString("detail")).toList();
    assertEquals(List.of("registered/null/null", "rejected/6/not_eligible: not an approver", "selected/5/allow"),
        trail);
  }

  private static void assertCancelled(JsonObject reply, String reason) {
    JsonObject outcome = reply.getJsonObject("outcome");
    assertEquals("cancelled", outcome.getString("outcome"), outcome.encode());
    assertEquals(reason, outcome.getString("reason"));
  }
}
