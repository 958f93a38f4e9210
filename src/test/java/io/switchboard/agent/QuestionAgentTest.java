package io.switchboard.agent;

import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Questions an agent asks (ACP {@code elicitation/create}), from the scripted Node agent: each ends
 * exactly once like a permission request — answered with a form checked against its schema, a
 * choice, consent to a URL, declined, or cancelled by the agent's own withdrawal, its completion,
 * its exit or the turn's stop — and the ledger keeps the answer without the fields marked secret.
 */
@ExtendWith(VertxExtension.class)
class QuestionAgentTest {
  @TempDir
  Path dir;
  AgentHarness gateway;

  private String thread(Vertx vertx, String mode) {
    gateway = BadAgentTest.start(vertx, dir, mode);
    return gateway.thread("bad", "web");
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
  }

  private ErrorCode refused(Vertx vertx, JsonObject answer) {
    return PermissionHarness.errorOf(vertx.eventBus().request(Addresses.PERMISSION_ANSWER, answer.put("surface", "web")));
  }

  private JsonObject row(String requestId) throws Exception {
    return LedgerReader.requests(dir.resolve("switchboard.db"), false, 100).stream().map(o -> (JsonObject) o)
        .filter(r -> requestId.equals(r.getString("requestId"))).findFirst().orElseThrow();
  }

  private JsonObject endOf(String requestId) {
    waitFor(() -> gateway.ended.stream().anyMatch(f -> requestId.equals(f.getString("requestId"))), "the end of "
        + requestId);
    List<JsonObject> ends = gateway.ended.stream().filter(f -> requestId.equals(f.getString("requestId"))).toList();
    assertEquals(1, ends.size(), "one end: " + ends);
    return ends.get(0).getJsonObject("outcome");
  }

  @Test
  void aFormIsCheckedByTheGatewayAnsweredOnceAndItsSecretReachesOnlyTheAgent(Vertx vertx) throws Exception {
    String t = thread(vertx, "elicit-form");
    gateway.prompt(t, "deploy");
    JsonObject card = gateway.awaitCard(t, 1);
    String id = card.getString("requestId");
    JsonObject toolCall = card.getJsonObject("toolCall");
    assertEquals("question", toolCall.getString("kind"));
    assertEquals("How should I deploy?", toolCall.getString("title"));
    assertEquals("form", toolCall.getJsonObject("question").getString("mode"));
    assertEquals(List.of("accept", "decline", "cancel"), card.getJsonArray("options").stream()
        .map(o -> ((JsonObject) o).getString("optionId")).toList());

    // What the page checks, the gateway checks again: each bad answer is refused, naming the field, and
    // changes nothing.
    JsonObject good = new JsonObject().put("name", "v1.2").put("replicas", 3).put("region", "eu")
        .put("notify", true).put("token", "s3cret-token-42");
    assertEquals(ErrorCode.BAD_REQUEST, refused(vertx, new JsonObject().put("requestId", id).put("optionId", "accept")
        .put("content", good.copy().put("name", "x"))));
    assertEquals(ErrorCode.BAD_REQUEST, refused(vertx, new JsonObject().put("requestId", id).put("optionId", "accept")
        .put("content", good.copy().put("replicas", 9))));
    assertEquals(ErrorCode.BAD_REQUEST, refused(vertx, new JsonObject().put("requestId", id).put("optionId", "accept")
        .put("content", good.copy().put("region", "mars"))));
    assertEquals(ErrorCode.BAD_REQUEST, refused(vertx, new JsonObject().put("requestId", id).put("optionId", "accept")
        .put("content", good.copy().put("extra", 1))));
    assertEquals(ErrorCode.BAD_REQUEST, refused(vertx, new JsonObject().put("requestId", id).put("optionId", "accept")
        .put("content", new JsonObject().put("name", "v1.2"))), "a required field missing");
    assertEquals("pending", row(id).getString("state"));

    PermissionHarness.await(vertx.eventBus().request(Addresses.PERMISSION_ANSWER, new JsonObject()
        .put("requestId", id).put("optionId", "accept").put("content", good).put("surface", "web")));
    assertEquals(ErrorCode.ALREADY_ANSWERED, refused(vertx, new JsonObject().put("requestId", id)
        .put("optionId", "decline")));
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));

    JsonObject report = gateway.report(t);
    assertNotNull(report.getJsonObject("advertised").getJsonObject("form"), "form questions advertised: " + report);
    assertNotNull(report.getJsonObject("advertised").getJsonObject("url"), "URL questions advertised: " + report);
    assertEquals(new JsonObject().put("action", "accept").put("content", good.copy()
        .put("token", "received 15 characters")), report.getJsonObject("answer"), "the agent got the secret too");

    JsonObject ended = endOf(id);
    assertEquals("accept", ended.getString("kind"));
    assertEquals(4, ended.getJsonObject("answer").getJsonObject("content").size(), "all but the secret: " + ended);
    JsonObject kept = row(id).getJsonObject("outcome").getJsonObject("answer");
    assertEquals(new JsonArray().add("token"), kept.getJsonArray("hidden"));
    assertFalse(kept.getJsonObject("content").containsKey("token"));
    assertEquals("v1.2", kept.getJsonObject("content").getString("name"));
    // Nothing of the secret is on disk: not in the ledger, its events or the thread's transcript.
    gateway.close();
    gateway = null;
    for (Path f : Files.list(dir).filter(f -> f.getFileName().toString().startsWith("switchboard.db")).toList()) {
      assertFalse(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1).contains("s3cret-token-42"), f + "");
    }
    assertTrue(LedgerReader.verify(dir.resolve("switchboard.db")).intact(), "the chain vouches for the answer kept");
  }

  @Test
  void aOneChoiceQuestionOffersItsValuesAsOptionsAndADeclineSendsNoContent(Vertx vertx) {
    String t = thread(vertx, "elicit-choice");
    gateway.prompt(t, "pick");
    JsonObject card = gateway.awaitCard(t, 1);
    assertEquals(List.of("accept", "accept:red", "accept:green", "decline", "cancel"), card.getJsonArray("options")
        .stream().map(o -> ((JsonObject) o).getString("optionId")).toList());
    gateway.answer(card.getString("requestId"), "accept:green");
    gateway.awaitTurnEnd(t, 1);
    assertEquals(new JsonObject().put("action", "accept").put("content", new JsonObject().put("colour", "green")),
        gateway.report(t).getJsonObject("answer"));

    gateway.prompt(t, "pick again");
    JsonObject second = gateway.awaitCard(t, 2);
    gateway.answer(second.getString("requestId"), "decline");
    gateway.awaitTurnEnd(t, 2);
    String text = gateway.text(t);
    assertTrue(text.substring(text.lastIndexOf("REPORT:")).contains("{\"action\":\"decline\"}"), text);
  }

  @Test
  void aUrlQuestionNamesItsDomainAndAnAgentThatNeverCompletesLeavesNothingWaiting(Vertx vertx) {
    String t = thread(vertx, "elicit-url");
    gateway.prompt(t, "sign in");
    JsonObject card = gateway.awaitCard(t, 1);
    JsonObject q = card.getJsonObject("toolCall").getJsonObject("question");
    assertEquals("auth.example.com", q.getString("domain"));
    assertEquals("Open auth.example.com", card.getJsonArray("options").getJsonObject(0).getString("name"));
    assertEquals(ErrorCode.BAD_REQUEST, refused(vertx, new JsonObject().put("requestId", card.getString("requestId"))
        .put("optionId", "accept").put("content", new JsonObject().put("x", 1))), "a URL's consent carries no content");
    gateway.answer(card.getString("requestId"), "accept");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    assertEquals(new JsonObject().put("action", "accept"), gateway.report(t).getJsonObject("answer"));
    waitFor(() -> gateway.roomStatus().getInteger("permissionsAsked") == 0, "no question left counted");
  }

  @Test
  void aUrlQuestionTheAgentCompletesEndsCompletedOnce(Vertx vertx) throws Exception {
    String t = thread(vertx, "elicit-complete");
    gateway.prompt(t, "sign in");
    JsonObject card = gateway.awaitCard(t, 1);
    JsonObject outcome = endOf(card.getString("requestId"));
    assertEquals("completed", outcome.getString("reason"));
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    assertEquals(new JsonObject().put("action", "cancel"), gateway.report(t).getJsonObject("answer"));
    assertEquals("completed", row(card.getString("requestId")).getJsonObject("outcome").getString("reason"));
    assertEquals(ErrorCode.ALREADY_ANSWERED, refused(vertx, new JsonObject()
        .put("requestId", card.getString("requestId")).put("optionId", "accept")));
  }

  @Test
  void aQuestionTheAgentWithdrawsEndsWithdrawnOnce(Vertx vertx) {
    String t = thread(vertx, "elicit-withdraw");
    gateway.prompt(t, "ask and take back");
    JsonObject card = gateway.awaitCard(t, 1);
    assertEquals("withdrawn", endOf(card.getString("requestId")).getString("reason"));
    gateway.awaitTurnEnd(t, 1);
    assertEquals(new JsonObject().put("action", "cancel"), gateway.report(t).getJsonObject("answer"));
  }

  @Test
  void aQuestionEndsWithTheTurnAndWithTheAgentsExit(Vertx vertx) throws Exception {
    String t = thread(vertx, "elicit-form");
    gateway.prompt(t, "deploy");
    JsonObject card = gateway.awaitCard(t, 1);
    gateway.cancel(t);
    assertEquals("session-cancelled", endOf(card.getString("requestId")).getString("reason"));
    gateway.awaitTurnEnd(t, 1);
    assertEquals(new JsonObject().put("action", "cancel"), gateway.report(t).getJsonObject("answer"));
    gateway.close();

    gateway = null;
    String dying = thread(vertx, "elicit-exit");
    gateway.prompt(dying, "ask and die");
    waitFor(() -> gateway.eventsOfKind(dying, "agent_exited").size() == 1, "the exit");
    waitFor(() -> {
      try {
        JsonArray rows = LedgerReader.requests(dir.resolve("switchboard.db"), false, 100);
        return rows.stream().map(o -> (JsonObject) o).anyMatch(r -> "Asked while dying".equals(
            r.getJsonObject("toolCall").getString("title")) && "agent-exited".equals(
            r.getJsonObject("outcome", new JsonObject()).getString("reason")));
      } catch (Exception e) {
        return false;
      }
    }, "the question asked as the agent died, ended agent-exited");
  }

  @Test
  void aQuestionNoClientCanDrawIsRefusedToTheAgentAndSaidInTheThread(Vertx vertx) {
    String t = thread(vertx, "elicit-bad");
    gateway.prompt(t, "nested");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    JsonObject answer = gateway.report(t).getJsonObject("answer");
    assertEquals(-32602, answer.getInteger("code"), answer.encode());
    assertTrue(answer.getString("message").contains("field inner"), answer.encode());
    assertTrue(gateway.eventsOfKind(t, "system").stream().anyMatch(e -> e.getString("text", "")
        .contains("a question Switchboard cannot show")), gateway.summary(t));
    assertTrue(gateway.cards.isEmpty(), "no card for it");
  }

  /** ACP's request-scoped question names no session: it has no thread to be shown in, even from a process of one. */
  @Test
  void aQuestionOutsideAnySessionIsRefusedAndNeverShown(Vertx vertx) {
    String t = thread(vertx, "elicit-scoped");
    gateway.prompt(t, "ask outside");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    JsonObject answer = gateway.report(t).getJsonObject("answer");
    assertEquals(-32602, answer.getInteger("code"), answer.encode());
    assertTrue(gateway.cards.isEmpty(), "no card for it: " + gateway.cards);
  }
}
