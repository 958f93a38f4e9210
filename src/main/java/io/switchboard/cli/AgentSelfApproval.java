package io.switchboard.cli;

import io.switchboard.config.AgentSpec;
import io.switchboard.config.ProjectSpec;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What lets an agent skip asking, so the gateway never sees those calls: flags on its command line
 * (Claude Code's {@code --dangerously-skip-permissions} or {@code --permission-mode bypassPermissions},
 * Codex's {@code --dangerously-bypass-approvals-and-sandbox}, {@code --full-auto} or
 * {@code --ask-for-approval never}, Gemini CLI's {@code --yolo}), and its own settings files under
 * the home it runs with and in the projects (Claude's {@code permissions.defaultMode} and broad
 * {@code allow} entries, Codex's {@code approval_policy = "never"}, Gemini's yolo approval mode).
 */
final class AgentSelfApproval {
  private static final List<String> SKIPPING_FLAGS = List.of("--dangerously-skip-permissions",
      "--dangerously-bypass-approvals-and-sandbox", "--full-auto", "--yolo");
  /** Claude Code allow entries that cover a whole tool: {@code Bash}, {@code Bash(*)}, {@code Edit}, ... */
  private static final Pattern BROAD_CLAUDE_ALLOW = Pattern.compile("^(Bash|Edit|Write|MultiEdit|WebFetch|mcp__\\w+)"
      + "(\\((\\*|\\*:\\*|:\\*)\\))?$");
  private static final Pattern CODEX_NEVER = Pattern.compile("(?m)^\\s*approval_policy\\s*=\\s*\"never\"");

  private AgentSelfApproval() {}

  /** One line per way {@code agent} may skip asking (empty: none found). */
  static List<String> findings(AgentSpec agent, List<ProjectSpec> projects) {
    List<String> found = new ArrayList<>();
    List<String> argv = agent.command();
    for (int i = 0; i < argv.size(); i++) {
      String a = argv.get(i);
      String next = i + 1 < argv.size() ? argv.get(i + 1) : "";
      if (SKIPPING_FLAGS.contains(a)) {
        found.add("its command has " + a);
      } else if ((a.equals("--permission-mode") && next.equals("bypassPermissions"))
          || a.equals("--permission-mode=bypassPermissions")) {
        found.add("its command has --permission-mode bypassPermissions");
      } else if ((a.equals("--ask-for-approval") || a.equals("-a")) && next.equals("never")) {
        found.add("its command has " + a + " never");
      } else if (a.equals("--approval-mode") && next.equals("yolo") || a.equals("--approval-mode=yolo")) {
        found.add("its command has --approval-mode yolo");
      }
    }
    String home = agent.env().getOrDefault("HOME", System.getProperty("user.home"));
    List<Path> claude = new ArrayList<>(List.of(Path.of(home, ".claude", "settings.json"),
        Path.of(home, ".claude", "settings.local.json")));
    // Gemini keeps its folder under GEMINI_CLI_HOME when set (process.AgentState binds the same one).
    String geminiHome = agent.env().getOrDefault("GEMINI_CLI_HOME", home);
    List<Path> gemini = new ArrayList<>(List.of(Path.of(geminiHome, ".gemini", "settings.json")));
    for (ProjectSpec p : projects) {
      if (p.allows(agent.id())) {
        claude.add(p.path().resolve(".claude/settings.json"));
        claude.add(p.path().resolve(".claude/settings.local.json"));
        gemini.add(p.path().resolve(".gemini/settings.json"));
      }
    }
    for (Path f : claude) {
      JsonObject json = read(f);
      JsonObject permissions = json == null ? null : json.getValue("permissions") instanceof JsonObject o ? o : null;
      if (permissions == null) {
        continue;
      }
      if ("bypassPermissions".equals(permissions.getValue("defaultMode"))) {
        found.add(f + " sets permissions.defaultMode bypassPermissions (Claude Code)");
      }
      if (permissions.getValue("allow") instanceof JsonArray allow) {
        List<String> broad = allow.stream().filter(e -> e instanceof String s && BROAD_CLAUDE_ALLOW.matcher(s).matches())
            .map(String::valueOf).toList();
        if (!broad.isEmpty()) {
          found.add(f + " allows " + String.join(", ", broad) + " without asking (Claude Code)");
        }
      }
    }
    for (Path f : gemini) {
      JsonObject json = read(f);
      if (json != null && (Boolean.TRUE.equals(json.getValue("autoAccept")) || "yolo".equals(json.getValue("approvalMode"))
          || json.getValue("tools") instanceof JsonObject t && Boolean.TRUE.equals(t.getValue("autoAccept")))) {
        found.add(f + " turns on auto-accept or yolo mode (Gemini CLI)");
      }
    }
    String codexHome = agent.env().get("CODEX_HOME");
    Path codex = codexHome != null ? Path.of(codexHome, "config.toml") : Path.of(home, ".codex", "config.toml");
    try {
      if (Files.isRegularFile(codex) && CODEX_NEVER.matcher(Files.readString(codex)).find()) {
        found.add(codex + " sets approval_policy = \"never\" (Codex)");
      }
    } catch (IOException e) {
      // unreadable: nothing to say about it
    }
    return found;
  }

  private static JsonObject read(Path f) {
    try {
      return Files.isRegularFile(f) ? new JsonObject(Files.readString(f)) : null;
    } catch (IOException | DecodeException | ClassCastException e) {
      return null;
    }
  }
}
