package io.switchboard.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The real ACP agents from npm that scripts/test.sh installs under src/test/peers. */
public final class Peers {
  private Peers() {}

  public static final Path MODULES = Path.of("src", "test", "peers", "node_modules").toAbsolutePath();

  /** The ACP TypeScript SDK's example agent (1.9.0): no model, about 5 s a turn. */
  public static List<String> sdkExampleAgent() {
    return node(MODULES.resolve("@agentclientprotocol/sdk/dist/examples/agent.js"));
  }

  /** Zed's Claude Code adapter: starts with no key, fails prompts. */
  public static List<String> claudeAgentAcp() {
    return node(MODULES.resolve("@zed-industries/claude-agent-acp/dist/index.js"));
  }

  /** Google's Gemini CLI in ACP mode ({@code gemini --acp}): answers initialize, then session/new asks for a login. */
  public static List<String> geminiCli() {
    List<String> argv = new java.util.ArrayList<>(node(MODULES.resolve("@google/gemini-cli/bundle/gemini.js")));
    argv.add("--acp");
    return List.copyOf(argv);
  }

  /** Zed's Codex adapter (a native program behind a node launcher): answers initialize, then session/new asks for a login. */
  public static List<String> codexAcp() {
    return node(MODULES.resolve("@zed-industries/codex-acp/bin/codex-acp.js"));
  }

  private static List<String> node(Path script) {
    if (!Files.isRegularFile(script)) {
      throw new AssertionError(script + " is missing: run scripts/test.sh, which installs the npm peers "
          + "(npm ci in src/test/peers)");
    }
    return List.of("node", script.toString());
  }
}
