package io.switchboard.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where {@link Sandbox#wrap} puts what an agent may write, against the data directory's tmpfs: a
 * HOME inside the data directory (the systemd unit's) keeps its state folders, and nothing else of
 * the data directory comes back; a writable folder that contains the data directory leaves it hidden.
 */
class SandboxWrapTest {
  @TempDir
  Path dir;

  @Test
  void stateInAHomeInsideTheDataDirectoryIsWritableAndTheRestOfItStaysHidden() throws Exception {
    Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
    Path workspace = Files.createDirectories(data.resolve("workspaces/t"));
    Files.createDirectories(data.resolve("workspaces/other"));
    Files.writeString(data.resolve("token"), "secret");
    Path outer = dir.toRealPath(); // writable, and it contains the data directory
    // HOME is the data directory; CLAUDE_CONFIG_DIR names (wrongly) the gateway's workspaces.
    AgentState.Paths state = AgentState.of(List.of("claude-agent-acp"),
        Map.of("HOME", data.toString(), "CLAUDE_CONFIG_DIR", data.resolve("workspaces").toString()), Path.of("/none"));
    Sandbox.Writes writes = new Sandbox.Writes(Sandbox.Writes.tmp(data, "t"), state, List.of(outer));
    List<String> argv = Sandbox.wrap(List.of("sh", "-c", String.join("; ",
        "echo state > \"$HOME/.claude/f\" && echo state-written",
        "cat \"$HOME/token\" 2>/dev/null || echo token-hidden",
        "ls \"$HOME/workspaces\"",
        "echo x > \"$OUTER/x\" && echo outer-written",
        "echo x > \"$TMPDIR/x\" && echo tmp-written")), data, workspace, workspace, writes,
        Sandbox.Confinement.NONE);

    int tmpfs = Collections.indexOfSubList(argv, List.of("--tmpfs", data.toString()));
    assertTrue(tmpfs > 0, argv.toString());
    assertTrue(Collections.indexOfSubList(argv, List.of("--bind", outer.toString(), outer.toString())) < tmpfs,
        "a folder that contains the data directory is bound before its tmpfs: " + argv);
    String claude = data.resolve(".claude").toString();
    assertTrue(Collections.indexOfSubList(argv, List.of("--bind", claude, claude)) > tmpfs,
        "a state folder inside it after: " + argv);
    String json = data.resolve(".claude.json").toString();
    assertTrue(Collections.indexOfSubList(argv, List.of("--bind", json, json)) > tmpfs, argv.toString());
    assertEquals("{}", Files.readString(data.resolve(".claude.json")), "made as Claude reads no settings yet");
    assertFalse(argv.contains(data.resolve("workspaces").toString()), "the gateway's workspaces are not its state: "
        + argv);

    assertEquals(null, Sandbox.probe(), "bubblewrap must run here (scripts/test.sh installs it)");
    ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
    pb.environment().put("HOME", data.toString());
    pb.environment().put("OUTER", outer.toString());
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertEquals(List.of("state-written", "token-hidden", "t", "outer-written", "tmp-written"), out.lines().toList(),
        out);
    assertEquals("state\n", Files.readString(data.resolve(".claude/f")));
    assertEquals("secret", Files.readString(data.resolve("token")));
  }

  @Test
  void aConfiguredFolderInsideTheDataDirectoryIsRefused() throws Exception {
    Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
    Path workspace = Files.createDirectories(data.resolve("workspaces/t"));
    Sandbox.Writes writes = new Sandbox.Writes(Sandbox.Writes.tmp(data, "t"),
        new AgentState.Paths(List.of(), List.of()), List.of(data.resolve("workspaces")));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Sandbox.wrap(List.of("true"), data, workspace, workspace, writes, Sandbox.Confinement.NONE));
    assertTrue(e.getMessage().startsWith("agents[].writable: "), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Sandbox.Writes.tmp(data, "../t"), "an owner is one name");
  }
}
