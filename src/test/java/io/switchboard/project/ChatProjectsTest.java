package io.switchboard.project;

import static io.switchboard.project.ProjectRepoTest.newRepo;
import static io.switchboard.project.ProjectRepoTest.person;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.Gateway;
import io.switchboard.config.PluginSpec;
import io.switchboard.config.ProjectSpec;
import io.switchboard.config.Settings;
import io.switchboard.plugin.PluginRoom;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.GatewayHarness;
import io.switchboard.testkit.PluginControl;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Projects from an IM chat: /projects, /new <project>, /diff and /merge (the starter's only). */
@ExtendWith(VertxExtension.class)
class ChatProjectsTest {
  static final PluginRoom.Timings FAST = new PluginRoom.Timings(300, 2_000, 4, 30_000, 90_000);

  @TempDir Path dir;
  GatewayHarness gateway;

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
  }

  private static JsonObject said(PluginControl plugin, String contains, int n) {
    return plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains(contains), n, "\"" + contains + "\"");
  }

  /** A demo turn from the chat whose note the sender allows. */
  private static void noteTurn(PluginControl plugin, String text, int turn) {
    plugin.prompt("42", "42", text);
    plugin.tap(plugin.awaitType("card", turn).getString("key"), "allow-once", "42");
  }

  @Test
  void aChatStartsInAProjectSeesItsDiffAndOnlyItsStarterMerges(Vertx vertx) throws Exception {
    Path repo = newRepo(dir.resolve("repo"));
    Path plain = Files.createDirectories(dir.resolve("plain"));
    PluginControl plugin = new PluginControl(dir.resolve("fake"));
    Settings base = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("data"), "demo",
        List.of(AgentHarness.demo()), List.of(plugin.spec("fake", "acp", List.of(), List.of(PluginSpec.ANYONE))),
        Settings.LogFormat.TEXT);
    gateway = new GatewayHarness(vertx, GatewayHarness.withProjects(base, List.of(
        new ProjectSpec("app", "App", repo, List.of(), ProjectSpec.Worktrees.PER_THREAD, null, null, null, null),
        new ProjectSpec("plain", "Plain", plain, List.of(), ProjectSpec.Worktrees.SHARED, null, null, null, null))),
        new Gateway.Tuning(FAST, Gateway.Tuning.DEFAULT.outboxStuckMs()));
    plugin.awaitType("initialized", 1);

    plugin.prompt("42", "42", "/projects");
    said(plugin, "Projects: app (App) [default], plain (Plain).", 1);
    plugin.prompt("42", "42", "/new nowhere");
    said(plugin, "No project called nowhere here.", 1);
    plugin.prompt("42", "42", "/new plain");
    said(plugin, "starts a new conversation in project plain.", 1);
    noteTurn(plugin, "a note in plain", 1);
    plugin.awaitType("prompt_result", 4);
    assertTrue(Files.readString(plain.resolve("demo-notes.md")).contains("a note in plain"));

    plugin.prompt("42", "42", "/new");
    said(plugin, "OK: your next message starts a new conversation.", 1);
    noteTurn(plugin, "a note in app", 2);
    plugin.awaitType("prompt_result", 6);
    plugin.prompt("42", "42", "/diff");
    JsonObject diff = said(plugin, "files changed on switchboard/", 1);
    assertTrue(diff.getJsonObject("params").getString("text").contains("demo-notes.md +3 -0"), diff.encode());
    assertTrue(diff.getJsonObject("params").getString("text").contains("1 files not committed"), diff.encode());
    plugin.prompt("42", "99", "/merge");
    said(plugin, "Only this conversation's starter or an approver of this chat may merge its work.", 1);
    assertEquals("1", person(repo, "rev-list", "--count", "main"), "a refused merge moves nothing");
    plugin.prompt("42", "42", "/merge");
    said(plugin, "Merged into main as ", 1);
    assertTrue(person(repo, "show", "main:demo-notes.md").contains("a note in app"));
    assertTrue(person(repo, "log", "-1", "--format=%B", "main").contains("Switchboard-Merged-By: fake:42:42"));
  }
}
