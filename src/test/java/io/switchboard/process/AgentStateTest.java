package io.switchboard.process;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which agent an argv names, and the state folders its sandbox lets it write: a table. */
class AgentStateTest {
  private static final Path GATEWAY_HOME = Path.of("/home/gw");

  @Test
  void anAgentIsNamedByAFileNameOrAPathSegmentOfItsArgv() {
    Object[][] table = {
        {List.of("npx", "-y", "@zed-industries/claude-agent-acp"), Set.of("claude")},
        {List.of("node", "/opt/x/node_modules/@zed-industries/claude-agent-acp/dist/index.js"), Set.of("claude")},
        {List.of("/usr/local/bin/Claude"), Set.of("claude")},
        {List.of("gemini", "--acp"), Set.of("gemini")},
        {List.of("npx", "-y", "@zed-industries/codex-acp"), Set.of("codex")},
        {List.of("opencode", "acp"), Set.of("opencode")},
        {List.of("/home/me/.opencode/bin/opencode", "acp"), Set.of("opencode")},
        // Naming two gives both their folders; naming none gives only npm's cache.
        {List.of("my-agent", "--model", "anthropic/claude-sonnet", "--fallback", "gemini-pro"), Set.of("claude", "gemini")},
        {List.of("node", "/srv/agent.js"), Set.of()},
        {List.of(), Set.of()},
    };
    for (Object[] row : table) {
      @SuppressWarnings("unchecked") List<String> argv = (List<String>) row[0];
      assertEquals(row[1], AgentState.agents(argv), String.join(" ", argv));
    }
  }

  @Test
  void eachKnownAgentKeepsItsStateInItsOwnFolders() {
    Map<String, String> env = Map.of("HOME", "/home/me");
    assertEquals(List.of(Path.of("/home/me/.npm"), Path.of("/home/me/.claude"),
            Path.of("/home/me/.cache/claude-cli-nodejs")),
        AgentState.of(List.of("claude-agent-acp"), env, GATEWAY_HOME).folders());
    assertEquals(List.of(new AgentState.StateFile(Path.of("/home/me/.claude.json"), "{}")),
        AgentState.of(List.of("claude-agent-acp"), env, GATEWAY_HOME).files());
    assertEquals(List.of(Path.of("/home/me/.npm"), Path.of("/home/me/.gemini")),
        AgentState.of(List.of("gemini"), env, GATEWAY_HOME).folders());
    assertEquals(List.of(Path.of("/home/me/.npm"), Path.of("/home/me/.codex")),
        AgentState.of(List.of("codex-acp"), env, GATEWAY_HOME).folders());
    assertEquals(List.of(Path.of("/home/me/.npm"), Path.of("/home/me/.local/share/opencode"),
            Path.of("/home/me/.config/opencode"), Path.of("/home/me/.cache/opencode"),
            Path.of("/home/me/.local/state/opencode")),
        AgentState.of(List.of("opencode"), env, GATEWAY_HOME).folders());
    assertEquals(List.of(), AgentState.of(List.of("gemini"), env, GATEWAY_HOME).files());
  }

  @Test
  void theEnvironmentMovesThemAndTheGatewaysHomeIsTheFallback() {
    assertEquals(List.of(Path.of("/home/gw/.npm")), AgentState.of(List.of("agent"), Map.of(), GATEWAY_HOME).folders());
    assertEquals(List.of(Path.of("/home/me/.npm"), Path.of("/home/me/.claude"), Path.of("/srv/claude"),
            Path.of("/x/cache/claude-cli-nodejs")),
        AgentState.of(List.of("claude"), Map.of("HOME", "/home/me", "CLAUDE_CONFIG_DIR", "/srv/claude",
            "XDG_CACHE_HOME", "/x/cache"), GATEWAY_HOME).folders());
    assertEquals(List.of(Path.of("/home/me/.npm"), Path.of("/srv/codex")),
        AgentState.of(List.of("codex"), Map.of("HOME", "/home/me", "CODEX_HOME", "/srv/codex/"), GATEWAY_HOME).folders());
    assertEquals(List.of(Path.of("/home/me/.npm"), Path.of("/srv/gemini/.gemini")),
        AgentState.of(List.of("gemini", "--acp"), Map.of("HOME", "/home/me", "GEMINI_CLI_HOME", "/srv/gemini"),
            GATEWAY_HOME).folders());
    assertEquals(Path.of("/x/data/opencode"), AgentState.of(List.of("opencode"),
        Map.of("HOME", "/home/me", "XDG_DATA_HOME", "/x/data"), GATEWAY_HOME).folders().get(1));
    // A variable that is no absolute path is ignored, as a HOME that is none.
    assertEquals(List.of(Path.of("/home/gw/.npm"), Path.of("/home/gw/.codex")),
        AgentState.of(List.of("codex"), Map.of("HOME", "relative", "CODEX_HOME", "codex"), GATEWAY_HOME).folders());
  }
}
