package io.switchboard.rules;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One version of a rule: what it does ({@code effect}), what it matches, where it applies
 * ({@code scope}), where it came from ({@code source}: {@code config}, {@code preset} or
 * {@code grant}), who made it and when, when it expires, when and by whom it was revoked, a note.
 * A field of the match left empty matches anything; a field a rule names that the request lacks
 * (no command, a path that cannot be resolved) does not match: the request asks a person.
 */
public record Rule(String id, int version, Effect effect, Match match, Scope scope, String source, String createdBy,
                   long createdAt, Long expiresAt, Long revokedAt, String revokedBy, String note) {

  public enum Effect {
    ALLOW, ASK, DENY;

    public String key() {
      return name().toLowerCase(Locale.ROOT);
    }

    public static Effect parse(String s) {
      for (Effect e : values()) {
        if (e.key().equals(s)) {
          return e;
        }
      }
      throw new IllegalArgumentException("must be allow, ask or deny, got \"" + s + "\"");
    }
  }

  /** Where a rule applies: everywhere, or one agent, project or thread. */
  public record Scope(String kind, String id) {
    public static final Scope EVERYWHERE = new Scope("everywhere", null);

    public static Scope parse(Object value) {
      if (value == null || "everywhere".equals(value)) {
        return EVERYWHERE;
      }
      if (value instanceof JsonObject o && o.size() == 1) {
        String kind = o.fieldNames().iterator().next();
        if (List.of("agent", "project", "thread").contains(kind) && o.getValue(kind) instanceof String id
            && !id.isEmpty()) {
          return new Scope(kind, id);
        }
      }
      throw new IllegalArgumentException("must be \"everywhere\" or one of {\"agent\": id}, {\"project\": id}, "
          + "{\"thread\": id}");
    }

    public Object toJson() {
      return id == null ? kind : new JsonObject().put(kind, id);
    }

    boolean covers(ToolFacts f) {
      return switch (kind) {
        case "agent" -> id.equals(f.agentId());
        case "project" -> id.equals(f.projectId());
        case "thread" -> id.equals(f.threadId());
        default -> true;
      };
    }

    public String words() {
      return id == null ? "everywhere" : "this " + kind + " (" + id + ")";
    }
  }

  /** What a rule matches; each list empty = any. {@code command} is a prefix of the command's words. */
  public record Match(List<String> agents, List<String> projects, List<String> kinds, String title,
                      List<String> command, List<String> exceptWords, List<String> paths, List<String> exceptPaths,
                      List<String> domains) {
    /** With no words that disqualify a command. */
    public Match(List<String> agents, List<String> projects, List<String> kinds, String title, List<String> command,
                 List<String> paths, List<String> exceptPaths, List<String> domains) {
      this(agents, projects, kinds, title, command, null, paths, exceptPaths, domains);
    }

    public Match {
      exceptWords = exceptWords == null ? List.of() : List.copyOf(exceptWords);
      agents = agents == null ? List.of() : List.copyOf(agents);
      projects = projects == null ? List.of() : List.copyOf(projects);
      kinds = kinds == null ? List.of() : List.copyOf(kinds);
      command = command == null ? List.of() : List.copyOf(command);
      paths = paths == null ? List.of() : List.copyOf(paths);
      exceptPaths = exceptPaths == null ? List.of() : List.copyOf(exceptPaths);
      domains = domains == null ? List.of() : List.copyOf(domains);
    }

    /**
     * The fields that matched (for the ledger), or null when the request does not match. The facts
     * are the agent's to write, so a missing or unreadable one reads as the worst case: for an
     * {@code allow} ({@code strict}) it does not match, and an allow never matches facts that
     * disagree with each other or a title; for a {@code deny} or {@code ask} it matches (a deny
     * never stops applying because the agent left a field out or made a command compound).
     */
    List<String> test(ToolFacts f, boolean strict) {
      List<String> matched = new ArrayList<>();
      if (strict && (!f.doubts().isEmpty() || title != null)) {
        return null;
      }
      if (!agents.isEmpty()) {
        if (f.agentId() == null ? strict : !agents.contains(f.agentId())) {
          return null;
        }
        matched.add("agent=" + f.agentId());
      }
      if (!projects.isEmpty()) {
        // No project is a fact, not a missing one: a rule about projects does not cover a scratch thread.
        if (f.projectId() == null || !projects.contains(f.projectId())) {
          return null;
        }
        matched.add("project=" + f.projectId());
      }
      if (!kinds.isEmpty()) {
        if (f.kind() == null ? strict : !kinds.contains(f.kind())) {
          return null;
        }
        matched.add("kind=" + (f.kind() == null ? "(none given)" : f.kind()));
      }
      if (title != null) {
        if (f.title() == null ? strict : !glob(title, f.title())) {
          return null;
        }
        matched.add("title=" + f.title());
      }
      if (!command.isEmpty()) {
        List<String> words = f.command();
        if (words == null) {
          // No plain command: an allow cannot tell what runs; a deny looks for its words in every part.
          if (strict || f.commandText() == null || !ShellWords.mentions(f.commandText(), command)) {
            return null;
          }
          matched.add("command~" + String.join(" ", command));
        } else {
          if (words.size() < command.size() || !words.subList(0, command.size()).equals(command)) {
            if (strict || !ShellWords.mentions(String.join(" ", words), command)) {
              return null;
            }
          } else {
            // A word that turns a looking command into a writing one (git diff --output=x) disqualifies it.
            for (String w : words) {
              if (exceptWords.stream().anyMatch(e -> e.endsWith("*") ? w.startsWith(e.substring(0, e.length() - 1))
                  : w.equals(e))) {
                return null;
              }
            }
          }
          matched.add("command=" + String.join(" ", words));
        }
      }
      if (!paths.isEmpty() || !exceptPaths.isEmpty()) {
        if (f.paths() == null) {
          if (strict) {
            return null;
          }
          matched.add("paths=(unreadable)");
        } else {
          if (f.paths().isEmpty()) {
            return null;
          }
          for (ToolFacts.ResolvedPath p : f.paths()) {
            if (strict ? !pathIn(p, paths.isEmpty() ? List.of("**") : paths) || excepted(p, exceptPaths)
                : paths.isEmpty() ? excepted(p, exceptPaths) : !pathIn(p, paths) && !holds(p, paths)) {
              return null;
            }
          }
          matched.add("paths=" + String.join(",", f.paths().stream().map(p -> p.inside() != null ? p.inside()
              : p.absolute()).toList()));
        }
      }
      if (!domains.isEmpty()) {
        if (f.domains() == null) {
          if (strict) {
            return null;
          }
          matched.add("domains=(unreadable)");
        } else {
          if (f.domains().isEmpty()) {
            return null;
          }
          for (String host : f.domains()) {
            if (domains.stream().noneMatch(d -> d.startsWith("*.") ? host.endsWith(d.substring(1)) : host.equals(d))) {
              return null;
            }
          }
          matched.add("domains=" + String.join(",", f.domains()));
        }
      }
      return matched;
    }

    /** An excepted path, or a folder that holds one (or too much to tell). */
    private static boolean excepted(ToolFacts.ResolvedPath p, List<String> globs) {
      return pathIn(p, globs) || holds(p, globs);
    }

    /** A folder with something under it the globs name, or whose contents could not all be read. */
    private static boolean holds(ToolFacts.ResolvedPath p, List<String> globs) {
      if (!p.folder() || globs.isEmpty()) {
        return false;
      }
      if (p.under() == null) {
        return true;
      }
      for (ToolFacts.ResolvedPath below : p.under()) {
        if (pathIn(below, globs)) {
          return true;
        }
      }
      return false;
    }

    /**
     * A relative glob is tried against the path inside the thread's directory (a path outside it
     * never matches one), {@code **} also covering the directory's top level; an absolute glob
     * against the resolved absolute path.
     */
    private static boolean pathIn(ToolFacts.ResolvedPath p, List<String> globs) {
      for (String g : globs) {
        if (g.startsWith("/")) {
          if (glob(g, p.absolute())) {
            return true;
          }
        } else if (p.inside() != null && (glob(g, p.inside()) || g.startsWith("**/") && glob(g.substring(3),
            p.inside()))) {
          return true;
        }
      }
      return false;
    }

    private static boolean glob(String pattern, String value) {
      if (pattern.equals("**") || pattern.equals("*") && !value.contains("/")) {
        return true;
      }
      PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + pattern);
      return m.matches(Path.of(value));
    }

    public JsonObject toJson() {
      JsonObject json = new JsonObject();
      put(json, "agents", agents);
      put(json, "projects", projects);
      put(json, "kinds", kinds);
      if (title != null) {
        json.put("title", title);
      }
      put(json, "command", command);
      put(json, "exceptWords", exceptWords);
      put(json, "paths", paths);
      put(json, "exceptPaths", exceptPaths);
      put(json, "domains", domains);
      return json;
    }

    private static void put(JsonObject json, String key, List<String> values) {
      if (!values.isEmpty()) {
        json.put(key, new JsonArray(values));
      }
    }

    /** What it matches, as a person reads it: "execute `git status …`", "read in the worktree except .env*". */
    public String words() {
      StringBuilder b = new StringBuilder(kinds.isEmpty() ? "any tool call" : String.join("/", kinds));
      if (!command.isEmpty()) {
        b.append(" `").append(String.join(" ", command)).append(" …`");
      }
      if (!paths.isEmpty()) {
        b.append(" of ").append(String.join(", ", paths));
      }
      if (!exceptPaths.isEmpty()) {
        b.append(" except ").append(String.join(", ", exceptPaths));
      }
      if (!domains.isEmpty()) {
        b.append(" from ").append(String.join(", ", domains));
      }
      if (title != null) {
        b.append(" titled ").append(title);
      }
      if (!agents.isEmpty()) {
        b.append(" by ").append(String.join(", ", agents));
      }
      if (!projects.isEmpty()) {
        b.append(" in ").append(String.join(", ", projects));
      }
      return b.toString();
    }
  }

  /** In force at {@code now}: not revoked, not expired. */
  public boolean active(long now) {
    return revokedAt == null && (expiresAt == null || expiresAt > now);
  }

  /** The id the ledger names as the decider: {@code <id>@<version>}. */
  public String ref() {
    return id + "@" + version;
  }

  public Rule revoked(long at, String by) {
    return new Rule(id, version + 1, effect, match, scope, source, createdBy, createdAt, expiresAt, at, by, note);
  }

  /** A rule as {@link #toJson} wrote it (the store keeps it so). */
  public static Rule fromJson(JsonObject j) {
    return new Rule(j.getString("ruleId"), j.getInteger("version"), Effect.parse(j.getString("effect")),
        RuleSpecs.match(j.getJsonObject("match", new JsonObject())), Scope.parse(j.getValue("scope")),
        j.getString("source"), j.getString("createdBy"), j.getLong("createdAt", 0L), j.getLong("expiresAt"),
        j.getLong("revokedAt"), j.getString("revokedBy"), j.getString("note"));
  }

  public JsonObject toJson() {
    return new JsonObject().put("ruleId", id).put("version", version).put("effect", effect.key())
        .put("match", match.toJson()).put("scope", scope.toJson()).put("source", source).put("createdBy", createdBy)
        .put("createdAt", createdAt).put("expiresAt", expiresAt).put("revokedAt", revokedAt)
        .put("revokedBy", revokedBy).put("note", note).put("words", effect.key() + " " + match.words() + ", "
            + scope.words());
  }
}
