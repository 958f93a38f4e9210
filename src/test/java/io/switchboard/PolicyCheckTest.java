package io.switchboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code policy check}: the deciding rule of one tool call, from the config's rules. */
class PolicyCheckTest {
  @TempDir
  Path dir;

  private record Run(int code, String out, String err) {}

  private Run run(String... args) throws Exception {
    Path config = dir.resolve("switchboard.json");
    Files.writeString(config, new JsonObject().put("dataDir", dir.resolve("data").toString())
        .put("projects", new JsonArray().add(new JsonObject().put("id", "app").put("path", Files.createDirectories(
            dir.resolve("app")).toString())))
        .put("rules", new JsonArray().add(new JsonObject().put("preset", "safeCommands")
            .put("projectTests", new JsonObject().put("app", new JsonArray().add("npm").add("test"))))
            .add(new JsonObject().put("id", "no-push").put("effect", "deny").put("command", "git push")))
        .encode());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    List<String> argv = new ArrayList<>(List.of("policy", "check", "--config", config.toString()));
    argv.addAll(List.of(args));
    int code = new Main(Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8)).run(argv.toArray(String[]::new));
    return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void printsTheDecidingRuleOrThatAPersonIsAsked() throws Exception {
    Run push = run("--kind", "execute", "--command", "git push origin main");
    assertEquals(0, push.code(), push.err());
    assertTrue(push.out().startsWith("deny: rule no-push@1 (config)"), push.out());
    assertTrue(push.out().contains("matched: kind=execute; command=git push origin main")
        || push.out().contains("matched: command=git push origin main"), push.out());
    Run status = run("--kind", "execute", "--command", "git status");
    assertTrue(status.out().startsWith("allow: rule preset.safeCommands.git-status@1 (preset)"), status.out());
    Run chained = run("--kind", "execute", "--command", "git status && rm -rf ~");
    assertTrue(chained.out().contains("not one plain command") && chained.out().contains("ask: no rule matches"),
        chained.out());
    // The room's reading, on the same cases: a compound push and a kindless one are denied (issue 43).
    Run compound = run("--kind", "execute", "--command", "git status && git push origin main");
    assertTrue(compound.out().contains("deny: rule no-push@1"), compound.out());
    Run kindless = run("--command", "git push origin main");
    assertEquals(0, kindless.code(), kindless.err());
    assertTrue(kindless.out().startsWith("deny: rule no-push@1"), kindless.out());
    Run tests = run("--kind", "execute", "--command", "npm test");
    assertTrue(tests.out().startsWith("ask: no rule matches"), "a project's tests outside it: " + tests.out());
    Run inApp = run("--kind", "execute", "--command", "npm test", "--project", "app");
    assertTrue(inApp.out().startsWith("allow: rule preset.safeCommands.app.npm-test@1"), inApp.out());
  }

  /** A person's grant kept in the database decides too (read from the file, beside a gateway or not). */
  @Test
  void aGrantKeptInTheDatabaseDecides() throws Exception {
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    try (io.switchboard.testkit.PermissionHarness rooms = new io.switchboard.testkit.PermissionHarness(vertx,
        Files.createDirectories(dir.resolve("data")).resolve("switchboard.db")).start()) {
      io.switchboard.rules.Rule grant = new io.switchboard.rules.Rule("g_make", 1, io.switchboard.rules.Rule.Effect.ALLOW,
          new io.switchboard.rules.Rule.Match(null, null, List.of("execute"), null, List.of("make"), null, null, null),
          new io.switchboard.rules.Rule.Scope("thread", "t1"), "grant", "me", 1, null, null, null, null);
      io.switchboard.testkit.PermissionHarness.await(vertx.eventBus().request(
          io.switchboard.bus.Addresses.STORE_RULES_APPEND, new JsonObject().put("rule", grant.toJson())));
    } finally {
      vertx.close().await();
    }
    assertTrue(run("--kind", "execute", "--command", "make all", "--thread", "t1").out()
        .startsWith("allow: rule g_make@1 (grant)"));
    assertTrue(run("--kind", "execute", "--command", "make all", "--thread", "t2").out().startsWith("ask:"),
        "a thread's grant is that thread's only");
  }

  /** A call whose agent gave no kind is one the room sees too: no allow covers it, a deny still does. */
  @Test
  void aCheckWithoutAKindAnswersAsTheRoomDoes() throws Exception {
    Run ls = run("--command", "ls");
    assertEquals(0, ls.code(), ls.err());
    assertTrue(ls.out().startsWith("ask: no rule matches"), "an allow needs the kind: " + ls.out());
    Run push = run("--command", "git push");
    assertTrue(push.out().startsWith("deny: rule no-push@1"), push.out());
  }
}
