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

  /**
   * The hostile table of writes: nothing the person or the gateway runs, reads back or loads takes
   * one (HOME's start-up files, ~/.ssh, ~/.gitconfig, the gateway's classes, host /tmp, the data
   * directory); its own temporary folder (shared with its terminals, not in host /tmp), its state
   * folder and what its config declares writable do. HOME is a test folder: the real one is never touched.
   */
  @Test
  void aSandboxedAgentWritesOnlyItsWorkspaceTemporaryFolderAndOwnState(Vertx vertx) throws Exception {
    assertEquals(null, Sandbox.probe(), "bubblewrap must run here (scripts/test.sh installs it)");
    Path data = dir.resolve("data");
    Path home = Files.createDirectories(dir.resolve("home"));
    Files.writeString(home.resolve(".bashrc"), "# the person's own\n");
    Files.writeString(home.resolve(".gitconfig"), "[user]\n\tname = Person\n");
    Files.writeString(home.resolve(".claude.json"), "{}");
    Files.createDirectories(home.resolve(".ssh"));
    Path nativeLib = Files.createDirectories(data.resolve("native")).resolve("libsqlitejdbc.so");
    Files.writeString(nativeLib, "the gateway's library");
    Path hostFile = Files.writeString(dir.resolve("libsqlitejdbc.so"), "loaded by the gateway from /tmp");
    Path classes = Path.of("target", "classes").toAbsolutePath();
    Path declared = dir.resolve("declared");
    // "claude" in its argv: the sandbox lets it write Claude's state folders.
    AgentSpec writer = new AgentSpec("writer", "writer", null,
        List.of("node", SCRIPT.toString(), "sandbox-writes", "claude"),
        Map.of("HOME", home.toString(), "BAD_AGENT_CLASSES", classes.toString(),
            "BAD_AGENT_HOST_FILE", hostFile.toString(), "BAD_AGENT_DATA_DIR", data.toString(),
            "BAD_AGENT_WRITABLE", declared.toString()), null, null, Sandbox.Mode.BWRAP)
        .withWritable(List.of(declared));
    gateway = new AgentHarness(vertx, data, new AgentRoom.Timings(30_000, 1_500), writer).start();
    String t = gateway.thread("writer", "web");
    gateway.prompt(t, "write everywhere");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1), gateway.summary(t));
    JsonObject report = gateway.report(t);
    String name = report.getString("name");

    for (String refused : List.of("bashrc", "ssh", "gitconfig", "classes", "hostTmp", "hostFile")) {
      assertEquals("refused: EROFS", report.getString(refused), refused + ": " + report);
    }
    assertTrue(report.getString("fifo").startsWith("refused"), "a FIFO in host /tmp: " + report);
    // The data directory is an empty tmpfs: the gateway's library is not there to read or replace.
    assertEquals("refused: ENOENT", report.getString("nativeLib"), report.encode());
    assertEquals("refused: ENOENT", report.getString("nativeLibWrite"), report.encode());

    Path tmp = data.resolve("sandbox").resolve(t).resolve("tmp").toRealPath();
    assertEquals(tmp.toString(), report.getString("tmpdir"), "its TMPDIR: " + report);
    assertEquals(tmp.toString(), report.getString("osTmpdir"), "node's os.tmpdir(): " + report);
    assertEquals(tmp.toString(), report.getString("claudeTmpdir"), "Claude Code's, which ignores TMPDIR: " + report);
    assertEquals("written", report.getString("privateTmp"), report.encode());
    assertEquals("mine", Files.readString(tmp.resolve(name)));
    assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(
        Files.getPosixFilePermissions(tmp)), "its temporary folder is private");
    assertEquals(List.of(tmp.toString(), "refused-host-tmp"), report.getJsonArray("terminal").getList(),
        "its terminal has the same TMPDIR, and host /tmp read-only: " + report);
    assertEquals("from-terminal", report.getString("fromTerminal"), "agent and terminal share it: " + report);

    assertEquals("written", report.getString("state"), report.encode());
    assertEquals("state", Files.readString(home.resolve(".claude").resolve(name)));
    assertEquals("written", report.getString("claudeJson"), report.encode());
    assertEquals("{\"by\":\"agent\"}", Files.readString(home.resolve(".claude.json")));
    assertEquals("written", report.getString("writable"), report.encode());
    assertEquals("declared", Files.readString(declared.resolve(name)));

    // Nothing outside changed.
    assertEquals("# the person's own\n", Files.readString(home.resolve(".bashrc")));
    assertEquals("[user]\n\tname = Person\n", Files.readString(home.resolve(".gitconfig")));
    try (var left = Files.list(home.resolve(".ssh"))) {
      assertEquals(0, left.count(), "~/.ssh is as it was");
    }
    assertEquals("the gateway's library", Files.readString(nativeLib));
    assertEquals("loaded by the gateway from /tmp", Files.readString(hostFile));
    for (Path planted : List.of(classes.resolve(name + ".class"), Path.of("/tmp", name), Path.of("/tmp", name + ".fifo"),
        Path.of("/tmp", name + ".terminal"))) {
      assertFalse(Files.exists(planted, java.nio.file.LinkOption.NOFOLLOW_LINKS), planted + " was planted");
    }
    // Its temporary folder goes with the thread.
    io.switchboard.testkit.PermissionHarness.await(vertx.eventBus().request(io.switchboard.bus.Addresses.THREAD_ARCHIVE,
        new JsonObject().put("threadId", t)));
    io.switchboard.testkit.PermissionHarness.await(vertx.eventBus().request(io.switchboard.bus.Addresses.THREAD_DELETE,
        new JsonObject().put("threadId", t)));
    assertFalse(Files.exists(data.resolve("sandbox").resolve(t)), "the thread's temporary folder is gone");
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
