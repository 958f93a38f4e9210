package io.switchboard.permission;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.errorOf;
import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.rules.Presets;
import io.switchboard.rules.Rule;
import io.switchboard.rules.RuleSpecs;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rules in the permission room, against a real SQLite ledger: an allow rule answers with the
 * once-kind option and no card, the ledger naming the rule; "always" on a card makes a thread grant
 * the next same request meets; revoking it brings the card back at once; a deny answers no.
 */
@ExtendWith(VertxExtension.class)
class PermissionRulesTest {
  @TempDir
  Path dir;
  PermissionHarness rooms;
  Path worktree;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    worktree = Files.createDirectories(dir.resolve("wt"));
    Files.writeString(worktree.resolve("README.md"), "hi");
    rooms = new PermissionHarness(vertx, dir.resolve("switchboard.db")).start();
    rooms.crashPermissionRoom();
    List<Rule> rules = new ArrayList<>(Presets.of("safeCommands", List.of()));
    rules.addAll(Presets.of("readWorktree", List.of()));
    rules.add(RuleSpecs.fromConfig(new JsonObject().put("id", "no-push").put("effect", "deny")
        .put("command", "git push")));
    rooms.startPermissionRoom(new PermissionRoom(100).rules(rules));
  }

  @AfterEach
  void stop() {
    rooms.close();
  }

  private JsonObject ask(String thread, String toolCallId, String command) {
    return ask(thread, toolCallId, new JsonObject().put("command", command), "execute");
  }

  private JsonObject ask(String thread, String toolCallId, JsonObject rawInput, String kind) {
    return PermissionHarness.request(thread, "s1", toolCallId, "web", "chat:c1").put("cwd", worktree.toString())
        .put("toolCall", new JsonObject().put("toolCallId", toolCallId).put("title", "Run " + toolCallId)
            .put("kind", kind).put("rawInput", rawInput));
  }

  @Test
  void anAllowRuleAnswersOnceWithNoCardAndTheLedgerNamesIt() {
    JsonObject outcome = await(rooms.register(ask("t1", "tc1", "git status -s"))).getJsonObject("outcome");
    assertEquals("allow", outcome.getString("optionId"), "the once-kind option, never the always");
    assertEquals("allow_once", outcome.getString("kind"));
    assertTrue(rooms.shown.isEmpty(), "no card anywhere");
    JsonObject row = rooms.ledgerRow(rooms.idOf("tc1"));
    JsonObject by = row.getJsonObject("outcome").getJsonObject("answeredBy");
    assertEquals("rule", by.getString("surface"));
    assertEquals("preset.safeCommands.git-status@1", by.getString("user"));
    assertEquals("kind=execute; command=git status -s", row.getJsonObject("outcome").getJsonObject("rule")
        .getString("matched"));
    JsonArray chat = outputs("chat");
    assertEquals(1, chat.size(), "the chat gets one line instead of a card: " + chat);
    assertEquals("system", chat.getJsonObject(0).getString("kind"));
    assertTrue(chat.getJsonObject(0).getJsonObject("body").getString("text").startsWith("\u2705 Allowed by rule"));

    JsonObject read = await(rooms.register(ask("t1", "tc2", new JsonObject().put("file_path", "README.md"), "read")))
        .getJsonObject("outcome");
    assertEquals("allow", read.getString("optionId"), "a read inside the thread's directory");
    Future<JsonObject> secret = rooms.register(ask("t1", "tc3", new JsonObject().put("file_path", ".env"), "read"));
    waitFor(() -> rooms.shown.size() == 1, "a read of .env asks a person");
    assertFalse(secret.isComplete());
    JsonObject no = await(rooms.register(ask("t1", "tc4", "git push origin main"))).getJsonObject("outcome");
    assertEquals("reject", no.getString("optionId"), "deny answers with the reject option");
    Future<JsonObject> chained = rooms.register(ask("t1", "tc5", "git status && curl x | sh"));
    waitFor(() -> rooms.shown.size() == 2, "a chained command asks");
    assertFalse(chained.isComplete());
  }

  /**
   * A path on a hung mount (its facts' reader blocks) holds no other request: the room reads paths
   * on a worker, and a command without one is decided meanwhile; released, the read is decided too.
   */
  @Test
  void aPathThatHangsHoldsNoOtherRequest(Vertx vertx) throws Exception {
    java.util.concurrent.CountDownLatch mountAnswers = new java.util.concurrent.CountDownLatch(1);
    rooms.crashPermissionRoom();
    List<Rule> rules = new ArrayList<>(Presets.of("safeCommands", List.of()));
    rules.addAll(Presets.of("readWorktree", List.of()));
    rooms.startPermissionRoom(new PermissionRoom(100).rules(rules).factsReader(reg -> {
      try {
        mountAnswers.await(); // a stat on a mount that stopped answering
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return RuleDecisions.facts(reg);
    }));
    Future<JsonObject> hung = rooms.register(ask("t1", "slow", new JsonObject().put("file_path", "README.md"), "read"));
    JsonObject status = await(rooms.register(ask("t1", "quick", "git status"))).getJsonObject("outcome");
    assertEquals("allow", status.getString("optionId"), "decided while the other request's path hangs");
    assertFalse(hung.isComplete(), "its path is still being read");
    mountAnswers.countDown();
    assertEquals("allow", await(hung).getJsonObject("outcome").getString("optionId"), "then decided as usual");
  }

  @Test
  void alwaysOnACardMakesAThreadGrantThatRevokingTakesBackAtOnce() {
    Future<JsonObject> first = rooms.register(ask("t1", "m1", "make build"));
    waitFor(() -> rooms.shown.size() == 1, "no rule: a card");
    String id = rooms.idOf("m1");
    assertEquals(ErrorCode.BAD_REQUEST, errorOf(answer(id, "always", new JsonObject().put("reach", "thread")
        .put("life", "thread").put("command", new JsonArray().add("make").add("test")))),
        "a grant may be narrowed, never widened or changed");
    JsonObject reply = await(answer(id, "always", new JsonObject().put("reach", "thread").put("life", "thread")
        .put("command", new JsonArray().add("make"))));
    JsonObject outcome = await(first).getJsonObject("outcome");
    assertEquals("allow", outcome.getString("optionId"), "the agent is answered once: the gateway keeps the always");
    String grant = reply.getJsonObject("outcome").getJsonObject("grant").getString("ruleId");

    JsonObject again = await(rooms.register(ask("t1", "m2", "make install"))).getJsonObject("outcome");
    assertEquals("rule", again.getJsonObject("answeredBy").getString("surface"), "the grant answers the next one");
    assertEquals(grant + "@1", again.getJsonObject("answeredBy").getString("user"));
    Future<JsonObject> elsewhere = rooms.register(ask("t2", "m3", "make build"));
    waitFor(() -> rooms.shown.size() == 2, "another thread is not covered by a thread grant");
    assertFalse(elsewhere.isComplete());

    JsonObject listed = rules().stream().filter(r -> r.getString("ruleId").equals(grant)).findFirst().orElseThrow();
    assertEquals(1L, listed.getLong("uses"), "its use is counted from the ledger");
    assertEquals("grant", listed.getString("source"));

    JsonObject revoked = await(rooms.vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_RULES_REVOKE,
        new JsonObject().put("ruleId", grant).put("by", "me"))).body();
    assertEquals(2, revoked.getInteger("version"));
    Future<JsonObject> after = rooms.register(ask("t1", "m4", "make build"));
    waitFor(() -> rooms.shown.size() == 3, "revoked: the very next request shows a card");
    assertFalse(after.isComplete());
    assertEquals(ErrorCode.BAD_REQUEST, errorOf(rooms.vertx.eventBus().request(Addresses.PERMISSION_RULES_REVOKE,
        new JsonObject().put("ruleId", "no-push").put("by", "me"))), "a config rule changes in the config");
  }

  @Test
  void aThreadsGrantsEndWhenTheThreadIsDeleted() {
    rooms.register(ask("t9", "d1", "make docs"));
    waitFor(() -> rooms.shown.size() == 1, "a card");
    String grant = await(answer(rooms.idOf("d1"), "always", new JsonObject().put("reach", "thread")
        .put("life", "thread"))).getJsonObject("outcome").getJsonObject("grant").getString("ruleId");
    rooms.publish(Addresses.THREAD_CHANGED, new JsonObject().put("threadId", "t9").put("deleted", true));
    waitFor(() -> rules().stream().anyMatch(r -> r.getString("ruleId").equals(grant)
        && "thread deleted".equals(r.getString("revokedBy"))), "the grant ended with its thread");
  }

  @Test
  void alwaysTappedInAChatIsAGrantForThatThread() {
    rooms.register(ask("t1", "c1", "npm run lint"));
    waitFor(() -> rooms.shown.size() == 1, "a card");
    JsonObject reply = await(rooms.vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_ANSWER, new JsonObject()
        .put("requestId", rooms.idOf("c1")).put("optionId", "always").put("surface", "chat:c1").put("user", "42")
        .put("chat", new ChatApproval(List.of("42"), false, false).toJson()))).body();
    assertEquals("allow_once", reply.getJsonObject("outcome").getString("kind"));
    JsonObject next = await(rooms.register(ask("t1", "c2", "npm run lint"))).getJsonObject("outcome");
    assertEquals("rule", next.getJsonObject("answeredBy").getString("surface"));
  }

  @Test
  void grantsAndRevocationsOutliveARestart() {
    rooms.register(ask("t1", "r1", "cargo check"));
    waitFor(() -> rooms.shown.size() == 1, "a card");
    await(answer(rooms.idOf("r1"), "always", new JsonObject().put("reach", "thread").put("life", "forever")));
    rooms.restartPermissionRoom(); // no rules of the config now: the preset rules are revoked, the grant stays
    JsonObject outcome = await(rooms.register(ask("t1", "r2", "cargo check"))).getJsonObject("outcome");
    assertEquals("rule", outcome.getJsonObject("answeredBy").getString("surface"));
    assertTrue(rules().stream().filter(r -> r.getString("ruleId").startsWith("preset."))
        .allMatch(r -> "config".equals(r.getString("revokedBy"))), "config rules left out of the config are revoked");
  }

  private Future<JsonObject> answer(String id, String option, JsonObject grant) {
    return rooms.vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", id)
        .put("optionId", option).put("surface", "web").put("grant", grant)).map(m -> m.body());
  }

  private List<JsonObject> rules() {
    return await(rooms.vertx.eventBus().<JsonObject>request(Addresses.STORE_RULES_LIST, new JsonObject())).body()
        .getJsonArray("rules").stream().map(o -> (JsonObject) o).toList();
  }

  private JsonArray outputs(String plugin) {
    return await(rooms.vertx.eventBus().<JsonObject>request(Addresses.STORE_OUTBOX_PENDING, new JsonObject()
        .put("pluginId", plugin).put("limit", 100))).body().getJsonArray("outputs");
  }
}
