package io.switchboard.project;

import static io.switchboard.project.ProjectRepoTest.newRepo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.Gateway;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.ProjectSpec;
import io.switchboard.config.Settings;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A session begun elsewhere (in a terminal, in the project's folder) is listed from the agent
 * (ACP session/list), opened as a thread with its history shown, and takes the next prompt.
 */
@ExtendWith(VertxExtension.class)
class ContinueSessionTest {
  static final Path SCRIPT = Path.of("src", "test", "badpeers", "bad-agent.js").toAbsolutePath();

  @TempDir Path dir;
  Path repo;
  GatewayHarness gateway;
  Vertx vertx;
  ChatClient c;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    this.vertx = vertx;
    repo = newRepo(dir.resolve("repo"));
    AgentSpec lister = new AgentSpec("lister", "Lister", null, List.of("node", SCRIPT.toString(), "sessions"),
        Map.of(), null, null);
    Settings base = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("data"), "lister",
        List.of(lister, AgentHarness.demo()), List.of(), Settings.LogFormat.TEXT);
    gateway = new GatewayHarness(vertx, GatewayHarness.withProjects(base, List.of(new ProjectSpec("app", "App", repo,
        List.of(), ProjectSpec.Worktrees.PER_THREAD, null, null, null, null))), Gateway.Tuning.DEFAULT);
    c = ChatClient.open(vertx, gateway.port, gateway.token);
    c.next("welcome");
  }

  @AfterEach
  void stop() {
    c.close();
    gateway.close();
  }

  private JsonObject ask(JsonObject frame, String ref) {
    c.send(frame.put("clientRef", ref));
    return c.next(f -> ref.equals(f.getValue("clientRef")), "the reply to " + ref, 60);
  }

  private static Predicate<JsonObject> text(String threadId, String contains) {
    return f -> "event".equals(f.getString("type")) && threadId.equals(f.getString("threadId"))
        && f.getJsonObject("event").encode().contains(contains);
  }

  @Test
  void aSessionListedByTheAgentOpensAsAThreadWithItsHistoryAndGoesOn() throws Exception {
    JsonObject listed = ask(new JsonObject().put("type", "sessions").put("agent", "lister").put("project", "app"), "l");
    assertEquals("sessions", listed.getString("type"), listed.encode());
    assertTrue(listed.getBoolean("supported"));
    assertEquals(List.of("term-login", "term-docs"), listed.getJsonArray("sessions").stream()
        .map(s -> ((JsonObject) s).getString("sessionId")).toList(), "another folder's and an id-less one dropped");
    assertEquals("Fix the login bug", listed.getJsonArray("sessions").getJsonObject(0).getString("title"));
    JsonObject demo = ask(new JsonObject().put("type", "sessions").put("agent", "demo").put("project", "app"), "d");
    assertFalse(demo.getBoolean("supported"), demo.encode());

    JsonObject thread = ask(new JsonObject().put("type", "new_thread").put("agent", "lister").put("project", "app")
        .put("session", "term-login").put("title", "Fix the login bug"), "t");
    assertEquals("thread", thread.getString("type"), thread.encode());
    assertNull(thread.getString("branch"), "it continues in the project's folder, where it was begun");
    String t = thread.getString("threadId");
    c.send(new JsonObject().put("type", "attach").put("threadId", t));
    c.next(text(t, "Please fix the login bug (term-login)"), "the replayed question", 30);
    c.next(text(t, "I fixed it in login.js, in " + repo.toRealPath()), "the replayed answer, in the repo", 30);
    c.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "and add a test"));
    c.next(text(t, "continuing term-login: and add a test"), "the next turn in that session", 30);

    JsonObject again = ask(new JsonObject().put("type", "new_thread").put("agent", "lister").put("project", "app")
        .put("session", "term-login"), "t2");
    assertEquals(t, again.getString("threadId"), "a session continued twice is the same thread: " + again.encode());

    ChatClient later = ChatClient.open(vertx, gateway.port, gateway.token);
    try {
      later.next("welcome");
      later.send(new JsonObject().put("type", "attach").put("threadId", t));
      later.next(text(t, "Please fix the login bug"), "the history after a reload", 30);
    } finally {
      later.close();
    }
  }

  @Test
  void aSessionWithoutItsProjectIsRefused() {
    JsonObject refused = ask(new JsonObject().put("type", "new_thread").put("agent", "lister").put("project", "")
        .put("session", "term-login"), "x");
    assertEquals("bad_frame", refused.getString("code"), refused.encode());
    assertTrue(refused.getString("message").contains("needs the project it was begun in"));
  }
}
