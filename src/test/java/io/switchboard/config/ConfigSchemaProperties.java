package io.switchboard.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The schema and the loader together, on a full configuration (every section, every key) changed
 * at any depth: a key set to a hostile value, removed, or an unknown one added. Each gives settings
 * or a {@link ConfigException} whose key is in the tree, or missing from an object that is; never
 * another exception (a type the schema let through that the loader's reads do not expect).
 */
class ConfigSchemaProperties {
  /** Values that are right somewhere and wrong elsewhere. */
  private static final List<Object> VALUES = Arrays.asList(null, "", " ", "a b", "x", "demo", "web", "http", "stdio",
      "perThread", "shared", "edge", "agent", "text", "json", "acp", "vibearound", "auto", "none", "reject", "90s",
      "off", "5s", "31d", "22:00", "UTC", "telegram:1", "https://chat.example.org", "10.0.0.5", "10.0.0.6:5701",
      "readWorktree", "safeCommands", "allow", "read", "git status", "main", "../x", "/etc/passwd", "abc\n", "\u2003",
      0, 1, -1, 65535, 70000, 1.5, 8080.0, true, false);

  /** As many tries as every property without its own (1,000 a run; the long run's flag sets more). */
  @Property
  void aChangedConfigGivesSettingsOrAnErrorNamingAKeyThatIsThere(@ForAll long seed) {
    Random random = new Random(seed);
    JsonObject tree = random.nextInt(4) == 0 ? clustered() : full();
    for (int n = 1 + random.nextInt(2); n > 0; n--) {
      change(tree, random);
    }
    try {
      SettingsLoader.parse(tree.copy());
    } catch (ConfigException e) {
      if (!named(tree, e.key())) {
        throw new AssertionError("the key of \"" + e.getMessage() + "\" is not in " + tree.encode());
      }
    }
  }

  @Example
  void theUnchangedConfigsParse() throws ConfigException {
    SettingsLoader.parse(full());
    SettingsLoader.parse(clustered());
  }

  /** Every section and key, valid. Its project directories exist on any Linux, outside its data directory. */
  static JsonObject full() {
    JsonObject t = SettingsLoader.defaults().put("dataDir", "/nonexistent-switchboard-data");
    t.getJsonObject("http").put("allowedHosts", new JsonArray().add("chat.example.org"))
        .put("allowedOrigins", new JsonArray().add("https://chat.example.org"));
    t.getJsonArray("agents").add(new JsonObject().put("id", "claude").put("name", "Claude")
        .put("command", new JsonArray().add("claude")).put("env", new JsonObject().put("A", "1")).put("cwd", "/tmp")
        .put("authMethod", "login").put("sandbox", "none").put("maxProcesses", 2).put("shareProcess", false)
        .put("writable", new JsonArray().add("/var/cache/builds")).put("attention", new JsonObject().put("remindAfter", "90s")));
    t.put("plugins", new JsonArray().add(new JsonObject().put("id", "telegram").put("dialect", "vibearound")
        .put("command", new JsonArray().add("node")).put("cwd", "/opt").put("env", new JsonObject())
        .put("config", new JsonObject().put("k", "v")).put("approvers", new JsonArray().add("1"))
        .put("agent", "demo").put("cardsInGroups", true).put("users", new JsonArray().add("*"))));
    t.put("projects", new JsonArray()
        .add(new JsonObject().put("id", "usr").put("name", "Usr").put("path", "/usr")
            .put("agents", new JsonArray().add("claude")).put("worktrees", "shared").put("baseBranch", "main")
            .put("mcpServers", new JsonArray()
                .add(new JsonObject().put("name", "fs").put("command", "x").put("args", new JsonArray().add("-v"))
                    .put("env", new JsonArray().add(new JsonObject().put("name", "A").put("value", "1"))))
                .add(new JsonObject().put("name", "w").put("type", "http").put("url", "https://h")
                    .put("headers", new JsonArray().add(new JsonObject().put("name", "A").put("value", "1")))))
            .put("copyFiles", new JsonArray().add(".env")).put("setup", new JsonArray().add("make"))
            .put("attention", new JsonObject().put("deadline", "10m")))
        .add(new JsonObject().put("id", "etc").put("path", "/etc")));
    t.put("defaultProject", "usr");
    t.put("attention", new JsonObject().put("remindAfter", "2m").put("escalateAfter", "5m")
        .put("escalateTo", new JsonArray().add("telegram:1")).put("deadline", "1h").put("onExpiry", "reject")
        .put("quietHours", new JsonObject().put("from", "22:00").put("to", "07:00").put("zone", "UTC")));
    t.put("agentProcesses", new JsonObject().put("max", 3).put("idleStopSeconds", 30));
    t.put("rules", new JsonArray().add(new JsonObject().put("preset", "readWorktree"))
        .add(new JsonObject().put("preset", "safeCommands").put("testCommand", new JsonArray().add("make"))
            .put("projectTests", new JsonObject().put("usr", new JsonArray().add("make").add("test"))))
        .add(new JsonObject().put("id", "no-push").put("effect", "deny").put("command", "git push")
            .put("agents", new JsonArray().add("demo")).put("kinds", new JsonArray().add("execute"))
            .put("scope", new JsonObject().put("project", "usr")).put("note", "n").put("title", "git*")));
    return t;
  }

  static JsonObject clustered() {
    return SettingsLoader.defaults().put("dataDir", "/nonexistent-switchboard-data").put("cluster", new JsonObject()
        .put("node", "edge-1").put("role", "edge").put("host", "10.0.0.5").put("members", new JsonArray()
            .add("10.0.0.6:5701")).put("port", 5701).put("busPort", 5801).put("memberTimeoutSeconds", 5)
        .put("edgeGraceSeconds", 60).put("tlsDir", "/nonexistent-switchboard-tls"));
  }

  /** Sets a key or an item to one of {@link #VALUES} (or a small object or array), removes it, or adds an unknown key. */
  private static void change(JsonObject tree, Random random) {
    List<Object[]> places = new ArrayList<>();
    collect(tree, places);
    Object[] place = places.get(random.nextInt(places.size()));
    int what = random.nextInt(10);
    Object value = random.nextInt(8) == 0 ? new JsonArray().add(VALUES.get(random.nextInt(VALUES.size())))
        : random.nextInt(8) == 0 ? new JsonObject().put("name", VALUES.get(random.nextInt(VALUES.size())))
        : VALUES.get(random.nextInt(VALUES.size()));
    if (place[0] instanceof JsonObject o) {
      if (what == 0) {
        o.remove((String) place[1]);
      } else if (what == 1) {
        o.put("unknown", value);
      } else {
        o.put((String) place[1], value);
      }
    } else {
      JsonArray a = (JsonArray) place[0];
      if (what == 0) {
        a.remove((int) (Integer) place[1]);
      } else {
        a.set((Integer) place[1], value);
      }
    }
  }

  private static void collect(Object node, List<Object[]> places) {
    if (node instanceof JsonObject o) {
      for (String key : o.fieldNames()) {
        places.add(new Object[] {o, key});
        collect(o.getValue(key), places);
      }
    } else if (node instanceof JsonArray a) {
      for (int i = 0; i < a.size(); i++) {
        places.add(new Object[] {a, i});
        collect(a.getValue(i), places);
      }
    }
  }

  private static final Pattern STEP = Pattern.compile("\\[([^\\]]*)\\]|\\.?([^.\\[]+)");

  /**
   * Whether {@code key} (like {@code projects[0].mcpServers[1].url}) leads through the tree to a
   * value or to a key missing from an object there. {@code [id]} names the array item of that id
   * (as {@code agents[claude].attention}); a key that is no path at all is a variable or a file.
   */
  static boolean named(JsonObject tree, String key) {
    Object node = tree;
    Matcher step = STEP.matcher(key);
    int end = 0;
    while (step.find()) {
      if (step.start() != end || node == null) {
        return false;
      }
      end = step.end();
      if (step.group(1) != null) {
        if (!(node instanceof JsonArray a)) {
          return false;
        }
        node = item(a, step.group(1));
      } else if (node instanceof JsonObject o) {
        node = o.getValue(step.group(2));
        if (node == null && end < key.length()) {
          return false; // only the last step may be missing
        }
      } else {
        return false;
      }
    }
    return end == key.length() && end > 0;
  }

  private static Object item(JsonArray a, String index) {
    if (index.matches("\\d+")) {
      int i = Integer.parseInt(index);
      return i < a.size() ? a.getValue(i) : null;
    }
    for (Object o : a) {
      if (o instanceof JsonObject j && index.equals(j.getValue("id"))) {
        return j;
      }
    }
    return null;
  }
}
