package io.switchboard.rules;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Rules as JSON: the config's {@code rules[]} entries and a person's grants. Parsing checks that a
 * rule can match at all (a command rule limited to kinds that run no command, a command prefix a
 * plain command can never have, paths for a fetch...) and runs its {@code examples}: each
 * {@code match} must be decided by it, each {@code notMatch} must not. The exception's message
 * names the field; the caller prefixes where the rule is.
 */
public final class RuleSpecs {
  static final Set<String> KINDS = Set.of("read", "edit", "delete", "move", "search", "execute", "think", "fetch",
      "switch_mode", "other");
  /** Kinds whose tool calls name no file: a fetch names a URL, the others nothing at all. */
  static final Set<String> PATHLESS_KINDS = Set.of("fetch", "think", "switch_mode");

  private RuleSpecs() {}

  /** A rule of the config (source {@code config}) from its JSON; the examples are checked too. */
  public static Rule fromConfig(JsonObject json) {
    for (String key : json.fieldNames()) {
      if (!Set.of("id", "effect", "agents", "projects", "kinds", "title", "command", "exceptWords", "paths",
          "exceptPaths", "domains", "scope", "note", "examples", "expiresAt").contains(key)) {
        throw new IllegalArgumentException(key + ": unknown key (known here: id, effect, agents, projects, kinds, "
            + "title, command, paths, exceptPaths, domains, scope, note, examples)");
      }
    }
    String id = text(json, "id");
    if (!id.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) {
      throw new IllegalArgumentException("id: must be letters, digits, '.', '_' or '-', got \"" + id + "\"");
    }
    Rule rule = new Rule(id, 1, effect(json), match(json), scope(json), "config", "config", 0, null, null, null,
        json.getValue("note") instanceof String s ? s : null);
    if (rule.effect() == Rule.Effect.ALLOW && rule.match().title() != null) {
      throw new IllegalArgumentException("title: an allow rule cannot match on a title: the agent writes it (\"Check "
          + "status\" can name any command); match on command, paths or domains, or make this a deny or ask rule");
    }
    checkPathsCanMatch(rule.match());
    checkExamples(rule, json.getValue("examples"));
    return rule;
  }

  /** The match of a rule's JSON; the exception names the field. */
  public static Rule.Match match(JsonObject json) {
    List<String> kinds = strings(json, "kinds");
    for (String k : kinds) {
      if (!KINDS.contains(k)) {
        throw new IllegalArgumentException("kinds: \"" + k + "\" is not an ACP tool kind (" + String.join(", ",
            KINDS.stream().sorted().toList()) + ")");
      }
    }
    Object commandValue = json.getValue("command");
    List<String> command = commandValue instanceof String s ? ShellWords.split(s) : strings(json, "command");
    if (commandValue != null && (command == null || command.isEmpty())) {
      throw new IllegalArgumentException("command: must be a plain command's first words, like \"git status\" or "
          + "[\"git\", \"status\"] (no ; & | < > $ ` ( ) or globs: a command with them never qualifies)");
    }
    for (String word : command == null ? List.<String>of() : command) {
      if (ShellWords.split(word.contains(" ") ? "'" + word + "'" : word) == null) {
        throw new IllegalArgumentException("command: the word \"" + word + "\" has a shell metacharacter: a command "
            + "with one never qualifies, so this rule could never match");
      }
    }
    List<String> paths = strings(json, "paths");
    List<String> except = strings(json, "exceptPaths");
    List<String> domains = strings(json, "domains");
    if (command != null && !command.isEmpty() && !kinds.isEmpty() && !kinds.contains("execute")) {
      throw new IllegalArgumentException("command: only an execute tool call has a command, and kinds leaves it out: "
          + "this rule could never match");
    }
    if (!domains.isEmpty() && !kinds.isEmpty() && !kinds.contains("fetch")) {
      throw new IllegalArgumentException("domains: only a fetch has a URL, and kinds leaves it out: this rule could "
          + "never match");
    }
    for (String p : paths) {
      checkGlob("paths", p);
    }
    for (String p : except) {
      checkGlob("exceptPaths", p);
    }
    Object title = json.getValue("title");
    if (title != null && !(title instanceof String)) {
      throw new IllegalArgumentException("title: must be a glob string");
    }
    return new Rule.Match(strings(json, "agents"), strings(json, "projects"), kinds, (String) title, command,
        strings(json, "exceptWords"), paths, except, domains);
  }

  public static Rule.Effect effect(JsonObject json) {
    try {
      return Rule.Effect.parse(text(json, "effect"));
    } catch (IllegalArgumentException e) {
      throw e.getMessage().startsWith("effect:") ? e : new IllegalArgumentException("effect: " + e.getMessage());
    }
  }

  public static Rule.Scope scope(JsonObject json) {
    try {
      return Rule.Scope.parse(json.getValue("scope"));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("scope: " + e.getMessage());
    }
  }

  /**
   * A config rule's paths must leave something to match. Only here, not in {@link #match}: a rule
   * read back from the database (a person's grant included) is never refused.
   */
  static void checkPathsCanMatch(Rule.Match m) {
    if (m.paths().isEmpty() && m.exceptPaths().isEmpty()) {
      return;
    }
    String field = m.paths().isEmpty() ? "exceptPaths" : "paths";
    if (!m.kinds().isEmpty() && PATHLESS_KINDS.containsAll(m.kinds())) {
      throw new IllegalArgumentException(field + ": a tool call of kind " + String.join(" or ", m.kinds())
          + " names no file, and kinds lists no other: this rule could never match");
    }
    // No paths means every path inside the thread's folder ("**"); "**" excepts every relative glob
    // (an absolute glob reaches paths outside the folder, which a relative one never covers).
    List<String> globs = m.paths().isEmpty() ? List.of("**") : m.paths();
    boolean allExcepted = globs.stream().allMatch(g -> m.exceptPaths().contains(g)
        || !g.startsWith("/") && m.exceptPaths().contains("**"));
    if (allExcepted) {
      throw new IllegalArgumentException("exceptPaths: excepts every path the rule covers (" + String.join(", ", globs)
          + "): this rule could never match");
    }
  }

  private static void checkGlob(String field, String glob) {
    if (glob.contains("..")) {
      throw new IllegalArgumentException(field + ": \"" + glob + "\" climbs with ..: paths are resolved before a glob "
          + "is tried, so it could never match");
    }
    try {
      java.nio.file.FileSystems.getDefault().getPathMatcher("glob:" + glob);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(field + ": \"" + glob + "\" is not a glob: " + e.getMessage());
    }
  }

  /**
   * {@code examples: {match: [...], notMatch: [...]}}, each a tool call in short: {@code {kind,
   * title?, command?, path?, url?, agent?, project?}}, paths relative to a thread's directory.
   */
  private static void checkExamples(Rule rule, Object value) {
    if (value == null) {
      return;
    }
    if (!(value instanceof JsonObject examples)) {
      throw new IllegalArgumentException("examples: must be {\"match\": [...], \"notMatch\": [...]}");
    }
    for (String key : List.of("match", "notMatch")) {
      Object list = examples.getValue(key);
      if (list == null) {
        continue;
      }
      if (!(list instanceof JsonArray a)) {
        throw new IllegalArgumentException("examples." + key + ": must be an array of tool calls");
      }
      for (int i = 0; i < a.size(); i++) {
        if (!(a.getValue(i) instanceof JsonObject example)) {
          throw new IllegalArgumentException("examples." + key + "[" + i + "]: must be an object");
        }
        RuleBook book = new RuleBook();
        book.put(rule);
        boolean decided = book.decide(example(example), 0) != null;
        if (decided != key.equals("match")) {
          throw new IllegalArgumentException("examples." + key + "[" + i + "]: " + example.encode() + (decided
              ? " is matched by the rule, though listed under notMatch" : " is not matched by the rule"));
        }
      }
    }
  }

  /** An example's facts, in a made-up thread directory that exists nowhere (no link to follow). */
  public static ToolFacts example(JsonObject e) {
    Path cwd = Path.of("/nonexistent-switchboard-example/thread");
    JsonObject raw = new JsonObject();
    if (e.getValue("command") != null) {
      raw.put("command", e.getValue("command"));
    }
    if (e.getValue("path") instanceof String p) {
      raw.put("path", p);
    }
    if (e.getValue("url") instanceof String u) {
      raw.put("url", u);
    }
    JsonObject toolCall = new JsonObject().put("kind", e.getString("kind")).put("title", e.getString("title"))
        .put("rawInput", raw);
    return ToolFacts.of(e.getString("agent"), e.getString("project"), "example", toolCall, cwd);
  }

  private static String text(JsonObject json, String key) {
    if (!(json.getValue(key) instanceof String s) || s.isEmpty()) {
      throw new IllegalArgumentException(key + ": must be a non-empty string");
    }
    return s;
  }

  private static List<String> strings(JsonObject json, String key) {
    Object v = json.getValue(key);
    if (v == null) {
      return List.of();
    }
    if (!(v instanceof JsonArray a)) {
      throw new IllegalArgumentException(key + ": must be an array of strings");
    }
    List<String> out = new ArrayList<>();
    for (Object o : a) {
      if (!(o instanceof String s) || s.isEmpty()) {
        throw new IllegalArgumentException(key + ": must be an array of non-empty strings");
      }
      out.add(s);
    }
    return out;
  }
}
