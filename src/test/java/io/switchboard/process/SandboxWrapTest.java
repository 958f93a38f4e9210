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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where {@link Sandbox#wrap} puts what an agent may write, against the data directory's tmpfs and the
 * agent's own earlier writes: a HOME inside the data directory (the systemd unit's) keeps its state
 * folders and nothing else of the data directory comes back; a path the agent could have made a link
 * is never followed; nothing writable contains the data directory.
 */
class SandboxWrapTest {
  @TempDir
  Path dir;
  Path data;
  Path workspace;

  @BeforeEach
  void dataDirectory() throws Exception {
    data = Files.createDirectories(dir.resolve("data")).toRealPath();
    workspace = Files.createDirectories(data.resolve("workspaces/t"));
    Files.createDirectories(data.resolve("workspaces/other"));
    Files.writeString(data.resolve("token"), "secret");
  }

  /** Runs {@code script} in {@code argv}'s sandbox with {@code env}; its output lines. */
  private static List<String> run(List<String> argv, Map<String, String> env) throws Exception {
    assertEquals(null, Sandbox.probe(), "bubblewrap must run here (scripts/test.sh installs it)");
    ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    return out.lines().toList();
  }

  @Test
  void stateInAHomeInsideTheDataDirectoryIsWritableAndTheRestOfItStaysHidden() throws Exception {
    // HOME is the data directory; CLAUDE_CONFIG_DIR names (wrongly) the gateway's workspaces.
    AgentState.Paths state = AgentState.of(List.of("claude-agent-acp"),
        Map.of("HOME", data.toString(), "CLAUDE_CONFIG_DIR", data.resolve("workspaces").toString()), Path.of("/none"));
    Path cache = dir.resolve("cache");
    Sandbox.Writes writes = new Sandbox.Writes(Sandbox.Writes.tmp(data, "t"), state, List.of(cache));
    List<String> argv = Sandbox.wrap(List.of("sh", "-c", String.join("; ",
        "echo state > \"$HOME/.claude/f\" && echo state-written",
        "cat \"$HOME/token\" 2>/dev/null || echo token-hidden",
        "ls \"$HOME/workspaces\"",
        "echo x > \"$CACHE/x\" && echo cache-written",
        "echo x > \"$TMPDIR/x\" && echo tmp-written")), data, workspace, workspace, writes,
        Sandbox.Confinement.NONE);

    int tmpfs = Collections.indexOfSubList(argv, List.of("--tmpfs", data.toString()));
    assertTrue(tmpfs > 0, argv.toString());
    String claude = data.resolve(".claude").toString();
    assertTrue(Collections.indexOfSubList(argv, List.of("--bind", claude, claude)) > tmpfs,
        "a state folder inside the data directory is bound after its tmpfs: " + argv);
    String json = data.resolve(".claude.json").toString();
    assertTrue(Collections.indexOfSubList(argv, List.of("--bind", json, json)) > tmpfs, argv.toString());
    assertEquals("{}", Files.readString(data.resolve(".claude.json")), "made as Claude reads no settings yet");
    assertFalse(argv.contains(data.resolve("workspaces").toString()), "the gateway's workspaces are not its state: "
        + argv);

    assertEquals(List.of("state-written", "token-hidden", "t", "cache-written", "tmp-written"),
        run(argv, Map.of("HOME", data.toString(), "CACHE", cache.toString())));
    assertEquals("state\n", Files.readString(data.resolve(".claude/f")));
    assertEquals("secret", Files.readString(data.resolve("token")));
  }

  /**
   * Inside a writable folder the agent may have left a link where another writable path was, for the
   * next start to bind what it points to: such a path is writable through its folder, never followed.
   */
  @Test
  void aLinkTheAgentLeftInAWritableFolderIsNotFollowed() throws Exception {
    Path home = Files.createDirectories(dir.resolve("home"));
    Path ssh = Files.createDirectories(home.resolve(".ssh"));
    Files.createDirectories(home.resolve(".claude"));
    Files.createSymbolicLink(home.resolve(".claude/profile"), ssh); // CLAUDE_CONFIG_DIR, swapped by the agent
    Path cache = Files.createDirectories(dir.resolve("cache"));
    Files.createSymbolicLink(cache.resolve("sub"), ssh); // agents[].writable's second path, swapped too
    AgentState.Paths state = AgentState.of(List.of("claude"),
        Map.of("HOME", home.toString(), "CLAUDE_CONFIG_DIR", home.resolve(".claude/profile").toString()),
        Path.of("/none"));
    // Listed deepest first: the folder that holds it is still looked at first.
    Sandbox.Writes writes = new Sandbox.Writes(Sandbox.Writes.tmp(data, "t"), state,
        List.of(cache.resolve("sub"), cache));
    List<String> argv = Sandbox.wrap(List.of("sh", "-c", String.join("; ",
        "(echo x > \"$HOME/.claude/profile/authorized_keys\") 2>/dev/null && echo profile-written || echo profile-refused",
        "(echo x > \"$CACHE/sub/authorized_keys\") 2>/dev/null && echo sub-written || echo sub-refused",
        "echo x > \"$CACHE/x\" && echo cache-written")), data, workspace, workspace, writes, Sandbox.Confinement.NONE);
    assertFalse(argv.contains(ssh.toString()), "~/.ssh is never bound: " + argv);
    assertEquals(List.of("profile-refused", "sub-refused", "cache-written"),
        run(argv, Map.of("HOME", home.toString(), "CACHE", cache.toString())));
    try (var left = Files.list(ssh)) {
      assertEquals(0, left.count(), "~/.ssh is as it was");
    }
  }

  @Test
  void aConfiguredFolderInsideOrAboveTheDataDirectoryIsRefused() throws Exception {
    for (Path wrong : List.of(data.resolve("plugins"), dir)) {
      Sandbox.Writes writes = new Sandbox.Writes(Sandbox.Writes.tmp(data, "t"),
          new AgentState.Paths(List.of(), List.of()), List.of(wrong));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Sandbox.wrap(List.of("true"), data, workspace, workspace, writes, Sandbox.Confinement.NONE));
      assertTrue(e.getMessage().startsWith("agents[].writable: " + wrong), e.getMessage());
    }
    // A state folder above it (HOME's CLAUDE_CONFIG_DIR set to HOME, say) is left out.
    Sandbox.Writes writes = new Sandbox.Writes(Sandbox.Writes.tmp(data, "t"),
        new AgentState.Paths(List.of(dir), List.of()), List.of());
    assertFalse(Sandbox.wrap(List.of("true"), data, workspace, workspace, writes, Sandbox.Confinement.NONE)
        .contains(dir.toRealPath().toString()));
    assertThrows(IllegalArgumentException.class, () -> Sandbox.Writes.tmp(data, "../t"), "an owner is one name");
  }
}
