package io.switchboard.project;

import static io.switchboard.project.ProjectRepoTest.newRepo;
import static io.switchboard.project.ProjectRepoTest.person;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.Gateway;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.ProjectSpec;
import io.switchboard.config.Settings;
import io.switchboard.process.Sandbox;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile agent in its thread's worktree, under bubblewrap: it works there and runs git, but
 * cannot read the person's checkout, the other threads' worktrees or the token, cannot write any
 * git file (hooks, config, the .git pointer, the admin folder) and cannot move the base branch. After
 * the person's merge and their own next {@code git status}, nothing it planted ran or stuck.
 */
@ExtendWith(VertxExtension.class)
class WorktreeSandboxTest {
  static final Path SCRIPT = Path.of("src", "test", "badpeers", "bad-agent.js").toAbsolutePath();

  @TempDir Path dir;
  GatewayHarness gateway;
  ChatClient c;

  @AfterEach
  void stop() {
    if (c != null) {
      c.close();
    }
    if (gateway != null) {
      gateway.close();
    }
  }

  private static String tree(Path p) throws Exception {
    try (Stream<Path> s = Files.walk(p)) {
      return s.map(x -> p.relativize(x).toString()).sorted().collect(Collectors.joining(","));
    }
  }

  @Test
  void whatAHostileAgentPlantsInItsWorktreeNeitherRunsNorSticks(Vertx vertx) throws Exception {
    assertEquals(null, Sandbox.probe(), "bubblewrap must run here (scripts/test.sh installs it)");
    Path repo = newRepo(dir.resolve("repo"));
    Path marker = dir.resolve("planted-program-ran");
    String configBefore = Files.readString(repo.resolve(".git/config"));
    String hooksBefore = tree(repo.resolve(".git/hooks"));
    String mainBefore = person(repo, "rev-parse", "main");
    AgentSpec planter = new AgentSpec("planter", "Planter", null, List.of("node", SCRIPT.toString(), "git-plant"),
        Map.of("BAD_AGENT_PROJECT", repo.toString(), "BAD_AGENT_MARKER", marker.toString()), null, null,
        Sandbox.Mode.BWRAP);
    Settings base = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("data"), "planter",
        List.of(planter, AgentHarness.demo()), List.of(), Settings.LogFormat.TEXT);
    gateway = new GatewayHarness(vertx, GatewayHarness.withProjects(base, List.of(new ProjectSpec("app", "App", repo,
        List.of(), ProjectSpec.Worktrees.PER_THREAD, null, null, null, null))), Gateway.Tuning.DEFAULT);
    c = ChatClient.open(vertx, gateway.port, gateway.token);
    c.next("welcome");
    c.send(new JsonObject().put("type", "new_thread").put("agent", "demo").put("clientRef", "other"));
    c.next(f -> "other".equals(f.getValue("clientRef")), "the other thread", 60);
    c.send(new JsonObject().put("type", "new_thread").put("agent", "planter").put("clientRef", "p"));
    String t = c.next(f -> "p".equals(f.getValue("clientRef")), "the planter's thread", 60).getString("threadId");
    c.send(new JsonObject().put("type", "attach").put("threadId", t));
    c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "plant"));
    JsonObject chunk = c.next(f -> "event".equals(f.getString("type")) && f.getJsonObject("event").getJsonObject(
        "update", new JsonObject()).getJsonObject("content", new JsonObject()).getString("text", "")
        .startsWith("REPORT:"), "the agent's report", 60);
    JsonObject report = new JsonObject(chunk.getJsonObject("event").getJsonObject("update").getJsonObject("content")
        .getString("text").substring("REPORT:".length()).strip());

    assertEquals("done", report.getString("write"), report.encode());
    assertTrue(report.getString("status").contains("?? work.txt"), "git status runs in its worktree: " + report);
    assertEquals("shows the change", report.getString("diff"), report.encode());
    assertTrue(report.getString("mainTree").startsWith("refused"), "the person's checkout is hidden: " + report);
    assertEquals(new JsonArray().add(t), report.getJsonArray("siblings"), "only its own worktree: " + report);
    assertTrue(report.getString("token").startsWith("refused"), report.encode());
    for (String planted : List.of("hook", "hooksPath", "fsmonitor", "filter", "pointer", "pointerUnlink", "commondir",
        "moveBase", "commit")) {
      assertTrue(report.getString(planted).startsWith("refused"), planted + " was not refused: " + report);
    }
    assertEquals(mainBefore, person(repo, "rev-parse", "main"), "the base moves only by a person's merge");

    c.next(f -> "turn".equals(f.getString("type")) && t.equals(f.getString("threadId"))
        && !f.getBoolean("busy", true), "the turn's end", 60);
    c.send(new JsonObject().put("type", "commit").put("threadId", t).put("message", "the agent's work")
        .put("clientRef", "k"));
    assertEquals("project_action", c.next(f -> "k".equals(f.getValue("clientRef")), "commit", 60).getString("type"));
    c.send(new JsonObject().put("type", "merge").put("threadId", t).put("clientRef", "m"));
    assertEquals("project_action", c.next(f -> "m".equals(f.getValue("clientRef")), "merge", 60).getString("type"));
    assertTrue(person(repo, "show", "main:work.txt").contains("agent work"));

    // The person's own git, as they would run it next, in their checkout and in the thread's worktree.
    person(repo, "status");
    person(gateway.dataDir.resolve("worktrees/app").resolve(t), "status");
    assertFalse(Files.exists(marker), "a program the agent planted ran on the host");
    assertEquals(configBefore, Files.readString(repo.resolve(".git/config")));
    assertEquals(hooksBefore, tree(repo.resolve(".git/hooks")));
  }

  /** A real agent (the ACP SDK's example, from npm) runs whole turns confined to a worktree. */
  @Test
  void aRealAgentWorksInItsWorktreeUnderBubblewrap(Vertx vertx) throws Exception {
    assertEquals(null, Sandbox.probe(), "bubblewrap must run here (scripts/test.sh installs it)");
    Path repo = newRepo(dir.resolve("repo"));
    AgentSpec example = AgentHarness.command("example", io.switchboard.testkit.Peers.sdkExampleAgent())
        .withSandbox(Sandbox.Mode.BWRAP);
    Settings base = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("data"), "example",
        List.of(example), List.of(), Settings.LogFormat.TEXT);
    gateway = new GatewayHarness(vertx, GatewayHarness.withProjects(base, List.of(new ProjectSpec("app", "App", repo,
        List.of(), ProjectSpec.Worktrees.PER_THREAD, null, null, null, null))), Gateway.Tuning.DEFAULT);
    c = ChatClient.open(vertx, gateway.port, gateway.token);
    c.next("welcome");
    c.send(new JsonObject().put("type", "new_thread").put("clientRef", "x"));
    JsonObject thread = c.next(f -> "x".equals(f.getValue("clientRef")), "the thread", 60);
    String t = thread.getString("threadId");
    assertTrue(thread.getString("branch").startsWith("switchboard/"), thread.encode());
    c.send(new JsonObject().put("type", "attach").put("threadId", t));
    c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "please change the config"));
    JsonObject card = c.next(f -> "permission_request".equals(f.getString("type")), "its card", 60);
    c.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
        .put("optionId", "allow"));
    JsonObject end = c.next(f -> "event".equals(f.getString("type")) && "turn_ended".equals(
        f.getJsonObject("event").getString("kind")), "the turn's end", 60);
    assertEquals("end_turn", end.getJsonObject("event").getString("stopReason"), "a whole turn in the worktree");
    assertTrue(c.seen.stream().anyMatch(f -> f.encode().contains("successfully updated the configuration")));
  }
}
