package io.switchboard.rules;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What a rule may look at in a permission request, read conservatively from the agent's tool call
 * (which the agent writes, so it is not trusted): the kind, the title, the command as words (null
 * when there is none, or it is not one plain command), the paths it names resolved against the
 * thread's directory (symbolic links and {@code ..} followed, so a link out of the worktree is
 * outside it), and the hosts of the URLs it fetches.
 *
 * @param paths each path as {@code inside} (relative to the thread's directory, '/'-separated) or
 *              absolute when outside it; null when a path could not be resolved (nothing that needs
 *              paths may match then)
 */
public record ToolFacts(String agentId, String projectId, String threadId, String kind, String title,
                        List<String> command, List<ResolvedPath> paths, List<String> domains, String commandText,
                        List<String> doubts) {

  /**
   * A path the tool call names: its resolved absolute form and whether it is inside the thread's
   * directory; for a folder, what lies under it ({@code under}, at most
   * {@link #MAX_UNDER}; null when there is more, or it could not be read).
   */
  public record ResolvedPath(String absolute, String inside, boolean folder, List<ResolvedPath> under) {
    public ResolvedPath(String absolute, String inside) {
      this(absolute, inside, false, List.of());
    }
  }

  /** The most entries read under a folder a read or search names (a bigger one is taken to hold anything). */
  static final int MAX_UNDER = 2_000;
  /** Kinds that may name a folder to look into. */
  private static final java.util.Set<String> LOOKING_KINDS = java.util.Set.of("read", "search");
  /** Kinds whose tool call runs nothing: a command in their input is a lie about the kind. */
  private static final java.util.Set<String> COMMANDLESS_KINDS = java.util.Set.of("read", "edit", "delete", "move",
      "search", "fetch", "think", "switch_mode");

  public ToolFacts {
    doubts = doubts == null ? List.of() : List.copyOf(doubts);
  }

  private static final List<String> SHELLS = List.of("sh", "bash", "zsh", "dash", "/bin/sh", "/bin/bash",
      "/usr/bin/bash", "/bin/zsh", "/usr/bin/zsh");
  private static final List<String> PATH_KEYS = List.of("file_path", "path", "notebook_path", "abs_path", "filePath",
      "absolute_path");

  /**
   * Whether reading {@code toolCall}'s facts touches the disk (a path to resolve, a folder to list):
   * the permission room reads those off its event loop (an agent may name a path on a hung mount).
   */
  public static boolean namesPaths(JsonObject toolCall) {
    if (toolCall.getValue("locations") != null) {
      return true;
    }
    return toolCall.getValue("rawInput") instanceof JsonObject raw && PATH_KEYS.stream().anyMatch(raw::containsKey);
  }

  /** Reads the facts of {@code toolCall}; {@code cwd} is the thread's directory (null: none known). */
  public static ToolFacts of(String agentId, String projectId, String threadId, JsonObject toolCall, Path cwd) {
    JsonObject raw = toolCall.getValue("rawInput") instanceof JsonObject o ? o : new JsonObject();
    String kind = text(toolCall.getValue("kind"));
    List<String> doubts = new ArrayList<>();
    String commandText = commandText(raw);
    if (commandText != null && kind != null && COMMANDLESS_KINDS.contains(kind)) {
      doubts.add("a " + kind + " whose input carries a command");
    }
    List<ResolvedPath> paths = paths(toolCall, raw, cwd, kind != null && LOOKING_KINDS.contains(kind), doubts);
    return new ToolFacts(agentId, projectId, threadId, kind, text(toolCall.getValue("title")), command(raw), paths,
        domains(raw), commandText, doubts);
  }

  /** The command as the agent wrote it (a string, or an argv joined by spaces), or null when it gave none. */
  private static String commandText(JsonObject raw) {
    Object command = raw.getValue("command");
    StringBuilder text = new StringBuilder();
    if (command instanceof String c) {
      text.append(c);
    } else if (command instanceof JsonArray a) {
      a.forEach(w -> text.append(text.length() == 0 ? "" : " ").append(w));
    } else if (command != null) {
      text.append(command);
    } else {
      return null;
    }
    if (raw.getValue("args") instanceof JsonArray args) {
      args.forEach(w -> text.append(' ').append(w));
    }
    return text.toString();
  }

  private static String text(Object v) {
    return v instanceof String s && !s.isEmpty() ? s : null;
  }

  /**
   * {@code command} with {@code args} (ACP's terminal form: no shell) is that argv; a command string
   * alone is split as a shell would (plain commands only).
   */
  static List<String> command(JsonObject raw) {
    Object command = raw.getValue("command");
    Object args = raw.getValue("args");
    if (args == null) {
      return command(command);
    }
    if (!(command instanceof String c) || c.isEmpty() || !(args instanceof JsonArray a)) {
      return null;
    }
    return command(new JsonArray().add(c).addAll(a));
  }

  /** A string is split as a shell would (plain commands only); an argv array is taken as is, unless it runs a shell. */
  static List<String> command(Object value) {
    if (value instanceof String s) {
      return ShellWords.split(s);
    }
    if (!(value instanceof JsonArray a) || a.isEmpty()) {
      return null;
    }
    List<String> argv = new ArrayList<>();
    for (Object o : a) {
      if (!(o instanceof String s)) {
        return null;
      }
      argv.add(s);
    }
    if (SHELLS.contains(argv.get(0))) {
      // ["bash", "-lc", "git status"]: what runs is the script, read like a command line.
      if (argv.size() == 3 && (argv.get(1).equals("-c") || argv.get(1).equals("-lc"))) {
        return ShellWords.split(argv.get(2));
      }
      return null;
    }
    for (String word : argv) {
      if (word.indexOf('\n') >= 0 || word.indexOf('\r') >= 0) {
        return null;
      }
    }
    return argv;
  }

  private static List<ResolvedPath> paths(JsonObject toolCall, JsonObject raw, Path cwd, boolean looking,
                                          List<String> doubts) {
    Set<String> located = new LinkedHashSet<>();
    boolean unreadable = false;
    if (toolCall.getValue("locations") instanceof JsonArray locations) {
      for (Object o : locations) {
        if (o instanceof JsonObject l && l.getValue("path") instanceof String p) {
          located.add(p);
        } else {
          unreadable = true; // a location without a path: what it points at is unknown
        }
      }
    } else if (toolCall.getValue("locations") != null) {
      unreadable = true;
    }
    Set<String> input = new LinkedHashSet<>();
    for (String key : PATH_KEYS) {
      Object p = raw.getValue(key);
      if (p instanceof String s) {
        input.add(s);
      } else if (p != null) {
        unreadable = true;
      }
    }
    List<ResolvedPath> out = new ArrayList<>();
    Set<String> fromLocations = new LinkedHashSet<>();
    Set<String> fromInput = new LinkedHashSet<>();
    for (String p : located) {
      ResolvedPath r = resolve(p, cwd, looking);
      if (r == null) {
        return null;
      }
      fromLocations.add(r.absolute());
      out.add(r);
    }
    for (String p : input) {
      ResolvedPath r = resolve(p, cwd, looking);
      if (r == null) {
        return null;
      }
      fromInput.add(r.absolute());
      if (!fromLocations.contains(r.absolute())) {
        out.add(r);
      }
    }
    if (!fromLocations.isEmpty() && !fromInput.isEmpty() && !fromLocations.equals(fromInput)) {
      doubts.add("its input names other paths than its locations");
    }
    return unreadable ? null : out;
  }

  static ResolvedPath resolve(String named, Path cwd) {
    return resolve(named, cwd, false);
  }

  /**
   * Symbolic links and {@code ..} followed as far as the path exists; null when it cannot be read.
   * With {@code looking}, a folder's contents are listed (bounded) so that a rule's excepted paths
   * (.env, keys) are seen even when a search names only the folder above them.
   */
  static ResolvedPath resolve(String named, Path cwd, boolean looking) {
    try {
      Path p = Path.of(named);
      if (!p.isAbsolute()) {
        if (cwd == null) {
          return null;
        }
        p = cwd.resolve(p);
      }
      Path real = realPath(p.normalize());
      Path root = cwd == null ? null : realPath(cwd.toAbsolutePath().normalize());
      String inside = root != null && real.startsWith(root) ? root.relativize(real).toString() : null;
      String in = inside == null ? null : inside.isEmpty() ? "." : inside;
      if (looking && Files.isDirectory(real)) {
        return new ResolvedPath(real.toString(), in, true, under(real, root));
      }
      return new ResolvedPath(real.toString(), in);
    } catch (InvalidPathException | IOException e) {
      return null;
    }
  }

  /** What lies under a folder (links not followed): null when more than {@link #MAX_UNDER}. */
  private static List<ResolvedPath> under(Path folder, Path root) {
    List<ResolvedPath> found = new ArrayList<>();
    try (var walk = Files.walk(folder)) {
      var it = walk.iterator();
      while (it.hasNext()) {
        Path p = it.next();
        if (found.size() >= MAX_UNDER) {
          return null;
        }
        if (!p.equals(folder)) {
          found.add(new ResolvedPath(p.toString(), root != null && p.startsWith(root) ? root.relativize(p).toString()
              : null));
        }
      }
      return found;
    } catch (IOException | java.io.UncheckedIOException e) {
      return null;
    }
  }

  /** The real path of the longest part that exists, with the rest appended. */
  private static Path realPath(Path p) throws IOException {
    Path existing = p;
    Path rest = null;
    while (existing != null && !Files.exists(existing, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      rest = rest == null ? existing.getFileName() : existing.getFileName().resolve(rest);
      existing = existing.getParent();
    }
    if (existing == null) {
      return p;
    }
    Path real = existing.toRealPath();
    return rest == null ? real : real.resolve(rest).normalize();
  }

  private static List<String> domains(JsonObject raw) {
    List<String> out = new ArrayList<>();
    for (String key : List.of("url", "uri")) {
      if (raw.getValue(key) instanceof String u) {
        try {
          URI uri = new URI(u);
          if (uri.getHost() == null || !("https".equals(uri.getScheme()) || "http".equals(uri.getScheme()))) {
            return null;
          }
          out.add(uri.getHost().toLowerCase(java.util.Locale.ROOT));
        } catch (java.net.URISyntaxException e) {
          return null;
        }
      }
    }
    return out;
  }
}
