package io.switchboard.project;

import static io.switchboard.project.ProjectRepoTest.newRepo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.Gateway;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.ProjectSpec;
import io.switchboard.config.Settings;
import io.switchboard.process.Sandbox;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.switchboard.testkit.Peers;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Zed's real Claude Code adapter (npm, no API key, no network) lists a session "begun in a
 * terminal" in the project's folder — a transcript where Claude Code keeps one,
 * {@code ~/.claude/projects/<folder>/<id>.jsonl} — and the page opens it with its history.
 */
@ExtendWith(VertxExtension.class)
class ClaudeSessionsTest {
  static final String SESSION = "11111111-2222-4333-8444-555555555555";

  @TempDir Path dir;

  @Test
  void aClaudeCodeSessionBegunInATerminalIsListedAndOpensWithItsHistory(Vertx vertx) throws Exception {
    Path repo = newRepo(dir.resolve("repo")).toRealPath();
    Path home = Files.createDirectories(dir.resolve("home"));
    Path sessions = Files.createDirectories(home.resolve(".claude/projects")
        .resolve(repo.toString().replaceAll("[^A-Za-z0-9]", "-")));
    String common = "\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"" + repo + "\",\"sessionId\":\""
        + SESSION + "\",\"version\":\"2.0.0\",\"gitBranch\":\"main\"";
    Files.writeString(sessions.resolve(SESSION + ".jsonl"),
        "{\"parentUuid\":null," + common + ",\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":"
            + "\"Please fix the login bug\"},\"uuid\":\"aaaaaaaa-0000-4000-8000-000000000001\","
            + "\"timestamp\":\"2026-12-01T09:00:00.000Z\"}\n"
            + "{\"parentUuid\":\"aaaaaaaa-0000-4000-8000-000000000001\"," + common + ",\"type\":\"assistant\","
            + "\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\","
            + "\"content\":[{\"type\":\"text\",\"text\":\"I fixed it in login.js.\"}],\"stop_reason\":\"end_turn\","
            + "\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":5}},\"requestId\":\"req_1\","
            + "\"uuid\":\"aaaaaaaa-0000-4000-8000-000000000002\",\"timestamp\":\"2026-12-01T09:00:05.000Z\"}\n");
    // As root the adapter only starts sessions when told it runs in a sandbox (IS_SANDBOX).
    AgentSpec claude = new AgentSpec("claude", "Claude Code", null, Peers.claudeAgentAcp(),
        Map.of("HOME", home.toString(), "IS_SANDBOX", "1", "ANTHROPIC_API_KEY", ""), null, null, Sandbox.Mode.BWRAP);
    Settings base = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("data"), "claude",
        List.of(claude), List.of(), Settings.LogFormat.TEXT);
    GatewayHarness gateway = new GatewayHarness(vertx, GatewayHarness.withProjects(base, List.of(new ProjectSpec("app",
        "App", repo, List.of(), ProjectSpec.Worktrees.PER_THREAD, null, null, null, null))), Gateway.Tuning.DEFAULT);
    ChatClient c = ChatClient.open(vertx, gateway.port, gateway.token);
    try {
      c.next("welcome");
      c.send(new JsonObject().put("type", "sessions").put("agent", "claude").put("project", "app")
          .put("clientRef", "l"));
      JsonObject listed = c.next(f -> "l".equals(f.getValue("clientRef")), "the sessions", 90);
      assertEquals("sessions", listed.getString("type"), listed.encode());
      assertTrue(listed.getBoolean("supported"), listed.encode());
      JsonObject session = listed.getJsonArray("sessions").getJsonObject(0);
      assertEquals(SESSION, session.getString("sessionId"));
      assertEquals("Please fix the login bug", session.getString("title"));

      c.send(new JsonObject().put("type", "new_thread").put("agent", "claude").put("project", "app")
          .put("session", SESSION).put("title", session.getString("title")).put("clientRef", "t"));
      String t = c.next(f -> "t".equals(f.getValue("clientRef")), "the thread", 60).getString("threadId");
      c.send(new JsonObject().put("type", "attach").put("threadId", t));
      c.next(f -> "event".equals(f.getString("type")) && t.equals(f.getString("threadId"))
          && f.getJsonObject("event").encode().contains("I fixed it in login.js."), "the session's history", 90);
    } finally {
      c.close();
      gateway.close();
    }
  }
}
