package io.switchboard.agent;

import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.AgentSpec;
import io.switchboard.testkit.AgentHarness;
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

/** Zed's real Claude Code adapter from npm, with no API key and no network. */
@ExtendWith(VertxExtension.class)
class ClaudeAgentAcpTest {
  @TempDir
  Path dir;

  @Test
  void startsFailsThePromptClearlyAndStopsThoughItIgnoresAClosedStdin(Vertx vertx) throws Exception {
    Path home = Files.createDirectories(dir.resolve("home"));
    // As root the adapter only starts sessions when told it runs in a sandbox (IS_SANDBOX).
    AgentSpec claude = new AgentSpec("claude", "Claude Code", null, Peers.claudeAgentAcp(),
        Map.of("HOME", home.toString(), "IS_SANDBOX", "1", "ANTHROPIC_API_KEY", ""), null, null,
        io.switchboard.process.Sandbox.Mode.BWRAP);
    AgentHarness gateway = new AgentHarness(vertx, dir.resolve("data"), new AgentRoom.Timings(60_000, 5_000), claude)
        .start();
    try {
      String t = gateway.thread("claude", "web");
      gateway.prompt(t, "hello");
      assertEquals("error", gateway.awaitTurnEnd(t, 1), gateway.summary(t));
      JsonObject error = gateway.eventsOfKind(t, "system").stream()
          .filter(e -> "error".equals(e.getString("level"))).findFirst().orElseThrow();
      String text = error.getString("text");
      assertTrue(text.contains("needs you to log in") && !text.contains("Internal error"), text);
      // The adapter offers a terminal login (its own command with --cli): the exact line to run is shown.
      assertTrue(text.contains("Run this on the host") && text.contains(" --cli"), text);
      JsonObject status = gateway.agentStatus(t);
      assertEquals("READY", status.getString("state"), "initialize and session/new succeeded: " + status);
      assertNotNull(status.getString("acpSessionId"));
      long pid = status.getLong("pid");
      List<ProcessHandle> tree = ProcessHandle.of(pid).orElseThrow().descendants().toList();
      // The adapter (0.23.1) offers session/close: the stop closes the session before the process goes.
      ch.qos.logback.classic.Logger processLog = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory
          .getLogger(AgentProcess.class);
      ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> seen =
          new ch.qos.logback.core.read.ListAppender<>();
      seen.start();
      processLog.addAppender(seen);
      try {
        gateway.stop();
      } finally {
        processLog.detachAppender(seen);
      }
      String closed = "session/close of session " + status.getString("acpSessionId") + " answered";
      assertTrue(seen.list.stream().anyMatch(e -> e.getFormattedMessage().endsWith(closed)),
          "the adapter closed its session: " + seen.list.stream().map(e -> e.getFormattedMessage()).toList());
      waitFor(() -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true), "the adapter to be gone");
      for (ProcessHandle child : tree) {
        // Exited, if perhaps not yet reaped by PID 1 (a zombie, which ProcessHandle counts alive).
        assertFalse(io.switchboard.process.ProcessTree.running(child), "child " + child.pid() + " of the adapter survived");
      }
    } finally {
      gateway.close();
    }
  }
}
