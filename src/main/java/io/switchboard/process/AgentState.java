package io.switchboard.process;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Where known agents keep their own state (logins, settings, sessions, caches), which their sandbox
 * lets them write: found from the agent's argv (an element whose file name or a path segment names
 * {@code claude}, {@code gemini}, {@code codex} or {@code opencode}) and its environment. Pure: the
 * caller gives the environment the agent runs with (the gateway's plus its own {@code env}).
 */
public final class AgentState {
  /** The folders it may write (made when missing) and the files it may write. */
  public record Paths(List<Path> folders, List<StateFile> files) {
    public Paths {
      folders = List.copyOf(folders);
      files = List.copyOf(files);
    }
  }

  /** A file of an agent's own, made holding {@code initial} (what it reads as "nothing yet") when missing. */
  public record StateFile(Path path, String initial) {}

  private static final List<String> KNOWN = List.of("claude", "gemini", "codex", "opencode");

  private AgentState() {}

  /** The known agents {@code argv} names, in {@link #KNOWN}'s order (several when it names several). */
  static Set<String> agents(List<String> argv) {
    Set<String> found = new LinkedHashSet<>();
    for (String arg : argv) {
      for (String segment : arg.toLowerCase(Locale.ROOT).split("/")) {
        for (String name : KNOWN) {
          if (segment.contains(name)) {
            found.add(name);
          }
        }
      }
    }
    return found;
  }

  /** The state of the agent run as {@code argv} with its own {@code env} over the gateway's, which it inherits. */
  public static Paths of(List<String> argv, Map<String, String> env) {
    Map<String, String> seen = new HashMap<>(System.getenv());
    seen.putAll(env);
    return of(argv, seen, Path.of(System.getProperty("user.home")));
  }

  /**
   * The state of the agent run as {@code argv} with the environment {@code env}: npm's cache for
   * every agent ({@code npx} fills it), and each named agent's own folders. HOME is {@code env}'s, or
   * {@code fallbackHome} when it has none; a variable that is not an absolute path is ignored.
   */
  public static Paths of(List<String> argv, Map<String, String> env, Path fallbackHome) {
    Path home = absolute(env.get("HOME"));
    if (home == null) {
      home = fallbackHome;
    }
    Set<Path> folders = new LinkedHashSet<>();
    List<StateFile> files = new ArrayList<>();
    folders.add(home.resolve(".npm"));
    for (String agent : agents(argv)) {
      switch (agent) {
        case "claude" -> {
          folders.add(home.resolve(".claude"));
          Path config = absolute(env.get("CLAUDE_CONFIG_DIR"));
          if (config != null) {
            folders.add(config); // it keeps its .claude.json there too
          }
          // Its error and MCP server logs (env-paths' cache folder of "claude-cli").
          folders.add(xdg(env, "XDG_CACHE_HOME", home, ".cache").resolve("claude-cli-nodejs"));
          // Claude Code cannot open a session without writing it. It writes by a rename beside it
          // (refused in a read-only HOME), then in place: a file bound writable takes the second way,
          // so it must exist to be bound; "{}" reads as no settings yet, as a missing one does.
          files.add(new StateFile(home.resolve(".claude.json"), "{}"));
        }
        case "gemini" -> {
          // Gemini CLI puts its ".gemini" in GEMINI_CLI_HOME when set, else in HOME; when the folder
          // is not writable it dies before it answers initialize.
          Path geminiHome = absolute(env.get("GEMINI_CLI_HOME"));
          folders.add((geminiHome != null ? geminiHome : home).resolve(".gemini"));
        }
        case "codex" -> {
          Path codexHome = absolute(env.get("CODEX_HOME"));
          folders.add(codexHome != null ? codexHome : home.resolve(".codex"));
        }
        case "opencode" -> {
          // Its XDG folders (the xdg-basedir defaults unless the variables say otherwise).
          folders.add(xdg(env, "XDG_DATA_HOME", home, ".local/share").resolve("opencode"));
          folders.add(xdg(env, "XDG_CONFIG_HOME", home, ".config").resolve("opencode"));
          folders.add(xdg(env, "XDG_CACHE_HOME", home, ".cache").resolve("opencode"));
          folders.add(xdg(env, "XDG_STATE_HOME", home, ".local/state").resolve("opencode"));
        }
        default -> throw new IllegalStateException(agent);
      }
    }
    return new Paths(new ArrayList<>(folders), files);
  }

  private static Path xdg(Map<String, String> env, String variable, Path home, String fallback) {
    Path given = absolute(env.get(variable));
    return given != null ? given : home.resolve(fallback);
  }

  private static Path absolute(String value) {
    if (value == null || value.isBlank()) {
      return null;
    }
    try {
      Path p = Path.of(value);
      return p.isAbsolute() ? p.normalize() : null;
    } catch (java.nio.file.InvalidPathException e) {
      return null;
    }
  }
}
