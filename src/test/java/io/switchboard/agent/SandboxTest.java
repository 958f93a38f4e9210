package io.switchboard.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.AgentSpec;
import io.switchboard.process.Sandbox;
import io.switchboard.testkit.AgentHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * An agent in its sandbox (bubblewrap, which scripts/test.sh installs) tries what a hostile one
 * would: read the gateway's token and database with plain file calls, list the other workspaces,
 * look for the gateway among the processes, and do the same from a terminal. It must see only its
 * own workspace, where it can still work.
 */
@ExtendWith(VertxExtension.class)
class SandboxTest {
  static final Path SCRIPT = Path.of("src", "test", "badpeers", "bad-agent.js").toAbsolutePath();

  @TempDir
  Path dir;
  AgentHarness gateway;

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
  }

  @Test
  void aSandboxedAgentSeesOnlyItsOwnWorkspace(Vertx vertx) throws Exception {
    assertEquals(null, Sandbox.probe(), "bubblewrap must run here (scripts/test.sh installs it)");
    Files.writeString(dir.resolve("token"), "the-gateway-token");
    Files.createDirectories(dir.resolve("workspaces").resolve("someone-else"));
    Files.writeString(dir.resolve("workspaces").resolve("someone-else").resolve("secret.txt"), "theirs");
    gateway = new AgentHarness(vertx, dir, new AgentRoom.Timings(30_000, 1_500),
        new AgentSpec("snoop", "snoop", null, List.of("node", SCRIPT.toString(), "snoop"), Map.of(), null, null,
            Sandbox.Mode.BWRAP)).start();
    String t = gateway.thread("snoop", "web");
    gateway.prompt(t, "look around");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1), gateway.summary(t));
    JsonObject report = gateway.report(t);
    assertTrue(report.getString("token").startsWith("refused"), report.encode());
    assertTrue(report.getString("db").startsWith("refused"), report.encode());
    assertEquals(new JsonArray().add(t), report.getJsonArray("workspaces"), "only its own workspace: " + report);
    assertFalse(report.getBoolean("seesJvm"), "the gateway's JVM is visible: " + report);
    assertTrue(report.getInteger("processes") < 10, "processes it sees: " + report);
    assertEquals("written", report.getString("wrote"));
    assertEquals("written", Files.readString(dir.resolve("workspaces").resolve(t).resolve("mine.txt")));
    assertEquals("hidden", report.getString("terminal"), "a terminal runs in the sandbox too: " + report);
  }

  @Test
  void anAgentThatMustBeSandboxedWhereItCannotBeIsRefusedClearly(Vertx vertx) throws Exception {
    gateway = new AgentHarness(vertx, dir, new AgentRoom.Timings(30_000, 1_500),
        new AgentSpec("snoop", "snoop", null, List.of("node", SCRIPT.toString(), "snoop"), Map.of(), null, null,
            Sandbox.Mode.BWRAP));
    gateway.sandboxProblem = "bwrap is not installed (Debian: apt-get install bubblewrap)";
    gateway.start();
    String t = gateway.thread("snoop", "web");
    gateway.prompt(t, "go");
    assertEquals("error", gateway.awaitTurnEnd(t, 1));
    String error = gateway.eventsOfKind(t, "system").get(0).getString("text");
    assertTrue(error.contains("must run in a sandbox") && error.contains("bwrap is not installed"), error);
  }

  @Test
  void anAgentThatMayBeSandboxedRunsUnconfinedWhereItCannotBeAndTheThreadIsTold(Vertx vertx) {
    gateway = new AgentHarness(vertx, dir, new AgentRoom.Timings(30_000, 1_500),
        new AgentSpec("plain", "plain", null, List.of("node", SCRIPT.toString(), "error-data"), Map.of(), null, null,
            Sandbox.Mode.AUTO));
    gateway.sandboxProblem = "bwrap is not installed (Debian: apt-get install bubblewrap)";
    gateway.start();
    String t = gateway.thread("plain", "web");
    gateway.prompt(t, "go");
    assertEquals("error", gateway.awaitTurnEnd(t, 1)); // the agent's own error: it did run
    String note = gateway.eventsOfKind(t, "system").get(0).getString("text");
    assertTrue(note.contains("runs without a sandbox") && note.contains("token"), note);
  }
}
