package io.switchboard.permission;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.errorOf;
import static io.switchboard.testkit.PermissionHarness.request;
import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.config.Settings;
import io.switchboard.people.Principal;
import io.switchboard.people.Roles;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The permission room judges the named person of every answer (issue 44): their roles' permissions
 * against the call's kind, "always" against {@code rules}, a question against {@code answer}, the
 * agent's four-eyes rule against the person who prompted the turn; a chat account nobody linked is
 * refused. Every refusal changes nothing and is an event of the request naming the person; the
 * ledger row names who answered and how they signed in. The hostile rows come first.
 */
@ExtendWith(VertxExtension.class)
class PeopleJudgeTest {
  @TempDir
  Path dir;
  PermissionHarness rooms;

  static final Principal ALICE = new Principal("p_alice", "Alice", "passkey", "passkey-uv",
      Roles.permissions(List.of("operator")));
  static final Principal BOB = new Principal("p_bob", "Bob", "chat", "linked-chat",
      Roles.permissions(List.of("approver")));
  static final Principal VERA = new Principal("p_vera", "Vera", "token", "token",
      Roles.permissions(List.of("viewer")));
  static final Principal READER = new Principal("p_reader", "Reader", "token", "token", Set.of("approve:read", "view"));

  @BeforeEach
  void start(Vertx vertx) {
    rooms = new PermissionHarness(vertx, dir.resolve("switchboard.db")).start();
    rooms.crashPermissionRoom();
    rooms.startPermissionRoom(new PermissionRoom(100)
        .people(new Settings.People(Map.of("demo", Set.of("execute")))));
  }

  @AfterEach
  void stop() {
    if (rooms != null) {
      rooms.close();
    }
  }

  private String ask(String toolCallId, String kind, String promptedBy) {
    JsonObject r = request("t1", "s1", toolCallId, "web", "tg:5");
    JsonObject toolCall = r.getJsonObject("toolCall");
    if (kind == null) {
      toolCall.remove("kind");
    } else {
      toolCall.put("kind", kind);
    }
    if (promptedBy != null) {
      r.put("promptedBy", promptedBy);
    }
    rooms.register(r);
    waitFor(() -> rooms.idsByToolCall.containsKey(toolCallId) && rooms.shown.stream()
        .anyMatch(c -> c.getString("requestId").equals(rooms.idOf(toolCallId))), "the card of " + toolCallId);
    return rooms.idOf(toolCallId);
  }

  private Future<JsonObject> answer(String id, String optionId, String surface, Object by) {
    JsonObject body = new JsonObject().put("requestId", id).put("optionId", optionId).put("surface", surface);
    if (by != null) {
      body.put("by", by instanceof Principal p ? p.toJson() : by);
    }
    return rooms.vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_ANSWER, body).map(m -> m.body());
  }

  private List<String> rejections(String id) {
    return rooms.ledgerRow(id).getJsonArray("events").stream().map(e -> (JsonObject) e)
        .filter(e -> "rejected".equals(e.getString("event")))
        .map(e -> e.getString("user") + "/" + e.getString("detail")).toList();
  }

  @Test
  void aPersonOfWrongShapeIsABadRequestNamingTheFieldAndChangesNothing() {
    String id = ask("tc1", "execute", null);
    JsonObject good = ALICE.toJson();
    JsonObject noId = good.copy();
    noId.remove("personId");
    List<Object> hostile = List.of("alice", 42, new JsonObject(), noId, good.copy().put("personId", 7),
        good.copy().put("identity", "magic"), good.copy().put("permissions", "*"),
        good.copy().put("permissions", new JsonArray().add("approve:everything")),
        good.copy().put("permissions", new JsonArray().add(3)), good.copy().put("name", ""),
        good.copy().put("name", "x".repeat(201)));
    for (Object by : hostile) {
      Future<JsonObject> refused = answer(id, "allow", "web", by);
      assertEquals(ErrorCode.BAD_REQUEST, errorOf(refused), String.valueOf(by));
      assertTrue(refused.cause().getMessage().contains("by"), refused.cause().getMessage());
    }
    assertTrue(rooms.ended.isEmpty(), "nothing ended");
    assertEquals("allow", await(answer(id, "allow", "web", ALICE)).getJsonObject("outcome").getString("optionId"));
  }

  @Test
  void permissionsDecideWhoMayAnswerWhatAndTheLedgerNamesThePerson() throws Exception {
    String run = ask("tc1", "execute", null);
    // A viewer, and an approver of reads only, may not answer an execute call; neither ends it.
    assertEquals(ErrorCode.NOT_APPROVER, errorOf(answer(run, "allow", "web", VERA)));
    Future<JsonObject> reader = answer(run, "allow", "web", READER);
    assertEquals(ErrorCode.NOT_APPROVER, errorOf(reader));
    assertTrue(reader.cause().getMessage().contains("approve:execute"), reader.cause().getMessage());
    // A call without a kind needs approve:* (a missing fact never widens a permission).
    String kindless = ask("tc2", null, null);
    assertEquals(ErrorCode.NOT_APPROVER, errorOf(answer(kindless, "allow", "web", READER)));
    // An approver answers once, but may not make a rule of it.
    Future<JsonObject> always = rooms.vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_ANSWER,
        new JsonObject().put("requestId", run).put("optionId", "allow").put("surface", "web")
            .put("grant", new JsonObject()).put("by", BOB.toJson())).map(m -> m.body());
    assertEquals(ErrorCode.NOT_APPROVER, errorOf(always));
    assertTrue(always.cause().getMessage().contains("rules"), always.cause().getMessage());
    assertTrue(rooms.ended.isEmpty(), "no refusal ended anything");
    JsonObject taken = await(answer(run, "allow", "web", BOB)).getJsonObject("outcome");
    assertEquals("allow", taken.getString("optionId"));

    JsonObject row = rooms.ledgerRow(run);
    JsonObject person = row.getJsonObject("outcome").getJsonObject("answeredBy").getJsonObject("person");
    assertEquals(new JsonObject().put("personId", "p_bob").put("name", "Bob").put("identity", "chat")
        .put("strength", "linked-chat"), person, "who answered and how they signed in, never their permissions");
    // The chain vouches for who answered: intact as written, broken when the person is rewritten.
    Path db = dir.resolve("switchboard.db");
    List<String> refused = rejections(run);
    rooms.close(); // the store keeps its file locked while it runs
    rooms = null;
    assertTrue(io.switchboard.store.LedgerReader.verify(db).intact());
    try (var c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + db);
         var st = c.prepareStatement("UPDATE permission_request SET answered_person = ? WHERE request_id = ?")) {
      st.setString(1, person.copy().put("name", "Alice").encode());
      st.setString(2, run);
      assertEquals(1, st.executeUpdate());
    }
    var broken = io.switchboard.store.LedgerReader.verify(db);
    assertFalse(broken.intact(), "a rewritten name is caught");
    assertEquals(run, broken.brokenRequestId());
    assertEquals(List.of("p_vera/not_permitted: it needs the permission approve:execute",
        "p_reader/not_permitted: it needs the permission approve:execute",
        "p_bob/not_permitted: an \"always\" makes a rule, which needs the permission rules"), refused);
  }

  @Test
  void underFourEyesThePrompterMayNotApproveTheirOwnTurnsExecuteCalls() {
    String run = ask("tc1", "execute", "p_alice");
    Future<JsonObject> own = answer(run, "allow", "web", ALICE);
    assertEquals(ErrorCode.NOT_APPROVER, errorOf(own));
    assertTrue(own.cause().getMessage().contains("four-eyes"), own.cause().getMessage());
    assertFalse(rooms.ended.stream().anyMatch(e -> run.equals(e.getString("requestId"))));
    // Another approver's is taken.
    assertEquals("allow", await(answer(run, "allow", "web", BOB)).getJsonObject("outcome").getString("optionId"));
    // A call without a kind counts as any kind the rule names; the prompter may still say no.
    String kindless = ask("tc2", null, "p_alice");
    assertEquals(ErrorCode.NOT_APPROVER, errorOf(answer(kindless, "allow", "web", ALICE)));
    assertEquals("reject", await(answer(kindless, "reject", "web", ALICE)).getJsonObject("outcome")
        .getString("optionId"));
    // A read is not under this agent's rule: the prompter approves it.
    String read = ask("tc3", "read", "p_alice");
    assertEquals("allow", await(answer(read, "allow", "web", ALICE)).getJsonObject("outcome").getString("optionId"));
    assertEquals(List.of("p_alice/not_permitted: the person who prompted this turn may not approve its execute calls"
        + " (four-eyes rule of agent demo)"), rejections(run));
  }

  @Test
  void aChatAccountNobodyLinkedIsRefusedAndTheRefusalNamesIt() {
    String id = ask("tc1", "edit", null);
    JsonObject chat = new ChatApproval(List.of("5"), false, false, true).toJson(); // the plugin requires linked accounts
    Future<JsonObject> unlinked = rooms.vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_ANSWER,
        new JsonObject().put("requestId", id).put("optionId", "allow").put("surface", "tg:5").put("user", "5")
            .put("chat", chat)).map(m -> m.body());
    assertEquals(ErrorCode.NOT_APPROVER, errorOf(unlinked));
    assertTrue(unlinked.cause().getMessage().contains("/link"), unlinked.cause().getMessage());
    assertEquals(List.of("5/not_linked: no person has linked this chat account"), rejections(id));
    // The same account, linked to Bob: taken, and the row names both the account and the person.
    JsonObject taken = await(rooms.vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_ANSWER,
        new JsonObject().put("requestId", id).put("optionId", "allow").put("surface", "tg:5").put("user", "5")
            .put("chat", chat).put("by", BOB.toJson()))).body();
    JsonObject by = taken.getJsonObject("outcome").getJsonObject("answeredBy");
    assertEquals("5", by.getString("user"));
    assertEquals("p_bob", by.getJsonObject("person").getString("personId"));
  }
}
