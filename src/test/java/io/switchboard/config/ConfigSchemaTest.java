package io.switchboard.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.SettingsLoader.Override;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The config's JSON Schema: its errors as key paths and messages, and that it agrees with the docs and the loader. */
class ConfigSchemaTest {
  @TempDir
  Path dir;

  // --- the pointer -> key path mapping ---

  @Test
  void aPointerBecomesTheConfigsKeyPath() {
    JsonObject tree = new JsonObject()
        .put("agents", new JsonArray().add(new JsonObject()).add(new JsonObject().put("command", new JsonArray())))
        .put("env", new JsonObject().put("a/b", "x").put("c~d", "y").put("7", "z").put("with space", "w"))
        .put("projects", new JsonArray().add(new JsonObject().put("mcpServers", new JsonArray()
            .add(new JsonObject().put("headers", new JsonArray().add(new JsonObject()))))));
    assertEquals("agents[1].command", ConfigSchema.keyPath("#/agents/1/command", tree));
    assertEquals("agents[1].command[0]", ConfigSchema.keyPath("/agents/1/command/0", tree), "a plain JSON pointer too");
    assertEquals("projects[0].mcpServers[0].headers[0].name",
        ConfigSchema.keyPath("#/projects/0/mcpServers/0/headers/0/name", tree));
    // ~1 is '/', ~0 is '~' (decoded in that order: ~01 is "~1", not "/"); %-escapes of a URI fragment first.
    assertEquals("env.a/b", ConfigSchema.keyPath("#/env/a~1b", tree));
    assertEquals("env.c~d", ConfigSchema.keyPath("#/env/c~0d", tree));
    assertEquals("env.~1", ConfigSchema.keyPath("#/env/~01", tree));
    assertEquals("env.with space", ConfigSchema.keyPath("#/env/with%20space", tree));
    assertEquals("env.100%", ConfigSchema.keyPath("#/env/100%25", tree));
    assertEquals("env.é", ConfigSchema.keyPath("#/env/%C3%A9", tree));
    // A numeric key of an object is a key, not an index; an index past the end is still an index.
    assertEquals("env.7", ConfigSchema.keyPath("#/env/7", tree));
    assertEquals("agents[5].id", ConfigSchema.keyPath("#/agents/5/id", tree));
    assertEquals("", ConfigSchema.keyPath("#", tree));
    assertEquals("", ConfigSchema.keyPath("", tree));
  }

  @Test
  void aKeyWithEscapesIsNamedAsWritten() {
    JsonObject tree = SettingsLoader.defaults();
    tree.getJsonObject("http").put("a/b~c d%", 1);
    assertRefused(tree, "http.a/b~c d%", "unknown key (known here: host, port, allowedOrigins, publicMetrics, allowedHosts, sessionLifetime)");
    JsonObject env = SettingsLoader.defaults();
    env.getJsonArray("agents").getJsonObject(0).put("env", new JsonObject().put("PATH/x", 5));
    assertRefused(env, "agents[0].env.PATH/x", "must be a string, got 5");
  }

  // --- a table of bad inputs: each names its key and says what is wrong ---

  /** {key path, message fragment, the tree's change as JSON merged over the defaults}. */
  private static final String[][] BAD = {
      {"colour", "unknown key (known here: http, dataDir", "{\"colour\": \"blue\"}"},
      {"http", "must be an object, got 8080", "{\"http\": 8080}"},
      {"http.port", "must be an integer 0..65535, got \"eighty\"", "{\"http\": {\"port\": \"eighty\"}}"},
      {"http.port", "must be an integer 0..65535, got 70000", "{\"http\": {\"port\": 70000}}"},
      {"http.port", "must be an integer 0..65535, got 1.5", "{\"http\": {\"port\": 1.5}}"},
      {"http.host", "missing", "{\"http\": {\"host\": null}}"},
      {"http.host", "must not be empty, got \" \"", "{\"http\": {\"host\": \" \"}}"},
      {"http.publicMetrics", "must be true or false, got \"yes\"", "{\"http\": {\"publicMetrics\": \"yes\"}}"},
      {"http.allowedOrigins", "must be an array of strings, got \"https://a.b\"",
          "{\"http\": {\"allowedOrigins\": \"https://a.b\"}}"},
      {"http.allowedOrigins[1]", "must be an origin like https://chat.example.org, got \"https://a.b/path\"",
          "{\"http\": {\"allowedOrigins\": [\"https://a.b\", \"https://a.b/path\"]}}"},
      {"http.allowedOrigins[0]", "must be an origin like", "{\"http\": {\"allowedOrigins\": [\"https://a.b\\n\"]}}"},
      {"http.allowedHosts[0]", "must be a non-empty string, got \"\"", "{\"http\": {\"allowedHosts\": [\"\"]}}"},
      {"dataDir", "must be a string, got 1", "{\"dataDir\": 1}"},
      {"dataDir", "missing", "{\"dataDir\": null}"},
      {"logFormat", "must be text or json, got \"xml\"", "{\"logFormat\": \"xml\"}"},
      {"agents", "must not be empty", "{\"agents\": []}"},
      {"agents", "must be an array of objects, got an object", "{\"agents\": {}}"},
      {"agents[0]", "must be an object, got \"demo\"", "{\"agents\": [\"demo\"]}"},
      {"agents[0].id", "missing", "{\"agents\": [{\"builtin\": \"demo\"}]}"},
      {"agents[0].id", "must be letters, digits, '.', '_' or '-' (at most 64), got \"a b\"",
          "{\"agents\": [{\"id\": \"a b\", \"builtin\": \"demo\"}]}"},
      {"agents[0].id", "must be letters, digits", "{\"agents\": [{\"id\": \"demo\\n\", \"builtin\": \"demo\"}]}"},
      {"agents[0].argv", "unknown key (known here: id, name, builtin, command, env, cwd, authMethod, sandbox, "
          + "maxProcesses, shareProcess, writable, fourEyes, attention)", "{\"agents\": [{\"id\": \"a\", \"argv\": [\"x\"]}]}"},
      {"agents[0].command", "an agent needs exactly one of \"builtin\" or \"command\"", "{\"agents\": [{\"id\": \"a\"}]}"},
      {"agents[0].command", "an agent needs exactly one of \"builtin\" or \"command\"",
          "{\"agents\": [{\"id\": \"a\", \"builtin\": \"demo\", \"command\": [\"x\"]}]}"},
      {"agents[0].command", "must not be empty", "{\"agents\": [{\"id\": \"a\", \"command\": []}]}"},
      {"agents[0].command[1]", "must be a non-empty string, got \"\"", "{\"agents\": [{\"id\": \"a\", \"command\": [\"x\", \"\"]}]}"},
      {"agents[0].builtin", "must be demo, got \"gpt\"", "{\"agents\": [{\"id\": \"a\", \"builtin\": \"gpt\"}]}"},
      {"agents[0].sandbox", "must be auto, bwrap or none, got \"docker\"",
          "{\"agents\": [{\"id\": \"a\", \"builtin\": \"demo\", \"sandbox\": \"docker\"}]}"},
      {"agents[0].maxProcesses", "must be an integer 1..10000, got 0",
          "{\"agents\": [{\"id\": \"a\", \"builtin\": \"demo\", \"maxProcesses\": 0}]}"},
      {"agents[0].env.A", "must be a string, got null",
          "{\"agents\": [{\"id\": \"a\", \"builtin\": \"demo\", \"env\": {\"A\": null}}]}"},
      {"agents[0].attention.remindAfter", "must be a duration like \"90s\", \"2m\", \"1h\" or \"off\", got \"soon\"",
          "{\"agents\": [{\"id\": \"a\", \"builtin\": \"demo\", \"attention\": {\"remindAfter\": \"soon\"}}]}"},
      {"agentProcesses.idle", "unknown key (known here: max, idleStopSeconds)", "{\"agentProcesses\": {\"idle\": 5}}"},
      {"agentProcesses.idle", "unknown key", "{\"agentProcesses\": {\"idle\": null}}"},
      {"plugins[0].command", "missing", "{\"plugins\": [{\"id\": \"p\"}]}"},
      {"plugins[0].dialect", "must be acp or vibearound, got \"irc\"",
          "{\"plugins\": [{\"id\": \"p\", \"command\": [\"x\"], \"dialect\": \"irc\"}]}"},
      {"plugins[0].config", "must be an object, got \"x\"", "{\"plugins\": [{\"id\": \"p\", \"command\": [\"x\"], \"config\": \"x\"}]}"},
      {"cluster.node", "missing", "{\"cluster\": {\"role\": \"edge\", \"host\": \"h\", \"members\": [\"h:1\"]}}"},
      {"cluster.role", "must be agent (runs the agents and their ledger) or edge (runs the web and plugins), got \"both\"",
          "{\"cluster\": {\"node\": \"n\", \"role\": \"both\", \"host\": \"h\", \"members\": [\"h:1\"]}}"},
      {"cluster.members[0]", "must be a member's host:port", "{\"cluster\": {\"node\": \"n\", \"role\": \"edge\", "
          + "\"host\": \"h\", \"members\": [\"h:65536\"]}}"},
      {"cluster.memberTimeoutSeconds", "must be an integer 2..300, got 1", "{\"cluster\": {\"node\": \"n\", "
          + "\"role\": \"edge\", \"host\": \"h\", \"members\": [\"h:1\"], \"memberTimeoutSeconds\": 1}}"},
      {"attention.escalateTo[0]", "must be a chat surface like \"telegram:12345\"", "{\"attention\": {\"escalateTo\": [\"telegram:\"]}}"},
      {"attention.onExpiry", "must be reject or cancelTurn, got \"allow\"", "{\"attention\": {\"onExpiry\": \"allow\"}}"},
      {"attention.quietHours.to", "missing", "{\"attention\": {\"quietHours\": {\"from\": \"22:00\"}}}"},
      {"projects[0].path", "missing", "{\"projects\": [{\"id\": \"p\"}]}"},
      {"projects[0].worktrees", "must be perThread (a git worktree per thread) or shared", "{\"projects\": [{\"id\": \"p\", "
          + "\"path\": \"/x\", \"worktrees\": \"sometimes\"}]}"},
      {"projects[0].mcpServers[0].type", "an MCP server needs a \"command\" (stdio) or a \"type\" (http or sse) and a \"url\"",
          "{\"projects\": [{\"id\": \"p\", \"path\": \"/x\", \"mcpServers\": [{\"name\": \"w\", \"url\": \"https://h\"}]}]}"},
      {"projects[0].mcpServers[0].url", "must start with http:// or https://, got \"ftp://h\"",
          "{\"projects\": [{\"id\": \"p\", \"path\": \"/x\", \"mcpServers\": [{\"name\": \"w\", \"type\": \"sse\", "
              + "\"url\": \"ftp://h\"}]}]}"},
      {"defaultProject", "must be a string, got 1", "{\"defaultProject\": 1}"},
      {"rules[0]", "must be an object, got \"readWorktree\"", "{\"rules\": [\"readWorktree\"]}"},
      {"rules[0].effect", "must be allow, ask or deny, got \"permit\"", "{\"rules\": [{\"id\": \"r\", \"effect\": \"permit\"}]}"},
      {"rules[0].kinds[1]", "must be read, edit, delete, move, search, execute, think, fetch, switch_mode or other, got \"write\"",
          "{\"rules\": [{\"id\": \"r\", \"effect\": \"allow\", \"kinds\": [\"read\", \"write\"]}]}"},
      {"rules[0].scope", "must be everywhere, got \"anywhere\"", "{\"rules\": [{\"id\": \"r\", \"effect\": \"allow\", "
          + "\"scope\": \"anywhere\"}]}"},
      {"rules[0].scope", "must have exactly one key", "{\"rules\": [{\"id\": \"r\", \"effect\": \"allow\", "
          + "\"scope\": {\"agent\": \"demo\", \"project\": \"p\"}}]}"},
      {"rules[0].testCommand", "unknown key (known here: id, effect", "{\"rules\": [{\"id\": \"r\", \"effect\": \"allow\", "
          + "\"testCommand\": [\"x\"]}]}"},
      {"rules[0].projectTests.web", "must not be empty", "{\"rules\": [{\"preset\": \"safeCommands\", "
          + "\"projectTests\": {\"web\": []}}]}"},
  };

  @Test
  void eachBadInputIsRefusedNamingItsKey() {
    List<String> wrong = new ArrayList<>();
    for (String[] row : BAD) {
      JsonObject tree = merged(new JsonObject(row[2]));
      try {
        new ConfigSchema().check(tree);
        wrong.add(row[2] + " was accepted; expected " + row[0] + ": " + row[1]);
      } catch (ConfigException e) {
        if (!e.key().equals(row[0]) || !e.getMessage().contains(row[1])) {
          wrong.add(row[2] + "\n    expected " + row[0] + ": ..." + row[1] + "...\n    got      " + e.getMessage());
        }
      }
    }
    assertTrue(wrong.isEmpty(), String.join("\n", wrong));
  }

  @Test
  void aDeclaredKeySetToNullIsLeftOutButAnUnknownOneIsNot() throws Exception {
    JsonObject tree = SettingsLoader.defaults();
    tree.getJsonObject("http").put("allowedHosts", null);
    tree.getJsonArray("agents").getJsonObject(0).put("name", null).put("cwd", null).put("command", null);
    tree.put("agentProcesses", new JsonObject().put("idleStopSeconds", null)).put("cluster", null);
    Settings s = SettingsLoader.parse(tree);
    assertEquals("demo", s.agent("demo").orElseThrow().name(), "a null name is no name: the id");
    assertEquals(600_000, s.agentProcesses().idleStopMs(), "a null leaves the default");
    assertRefused(SettingsLoader.defaults().put("colour", null), "colour", "unknown key");
  }

  /** An editor's pointer to the schema may head the file; anything but a string there is refused. */
  @Test
  void aConfigMayNameItsSchemaForEditors() throws Exception {
    JsonObject tree = SettingsLoader.defaults().put("$schema", "../switchboard.schema.json");
    assertEquals("demo", SettingsLoader.parse(tree).defaultAgent());
    ConfigException e = assertThrows(ConfigException.class,
        () -> SettingsLoader.parse(SettingsLoader.defaults().put("$schema", 1)));
    assertEquals("$schema: must be a string, got 1", e.getMessage());
  }

  @Test
  void anOverrideIsNamedByItsVariableOrFlagEvenWhenTheFileIsWrongToo() throws Exception {
    Path file = Files.writeString(dir.resolve("switchboard.json"), "{\"http\": \"localhost\"}");
    ConfigException flag = assertThrows(ConfigException.class, () -> SettingsLoader.load(Map.of(),
        Map.of(Override.CONFIG, file.toString(), Override.PORT, "eighty")));
    assertEquals("--port", flag.key());
    ConfigException env = assertThrows(ConfigException.class, () -> SettingsLoader.load(
        Map.of("SWITCHBOARD_HOST", " "), Map.of(Override.CONFIG, file.toString())));
    assertEquals("SWITCHBOARD_HOST", env.key());
    // A good override over a file whose http is not an object: the file's key is named, not a crash.
    ConfigException http = assertThrows(ConfigException.class, () -> SettingsLoader.load(Map.of(),
        Map.of(Override.CONFIG, file.toString(), Override.PORT, "0")));
    assertEquals("http", http.key());
    assertTrue(http.getMessage().contains("must be an object, got \"localhost\""), http.getMessage());
  }

  // --- the schema agrees with the docs and the shipped config ---

  @Test
  void theShippedConfigAndEveryConfigExampleInTheReadmeFitTheSchema() throws Exception {
    new ConfigSchema().check(new JsonObject(Files.readString(Path.of("conf", "switchboard.json"))));
    Set<String> root = schema().getJsonObject("properties").fieldNames();
    int checked = 0;
    List<String> wrong = new ArrayList<>();
    Matcher block = Pattern.compile("```json\\n(.*?)```", Pattern.DOTALL).matcher(Files.readString(Path.of("README.md")));
    while (block.find()) {
      String text = block.group(1).trim();
      JsonObject config = asConfig(text, root);
      if (config == null) {
        wrong.add("a README example that is no config, config fragment, agents list or plugin:\n" + text);
        continue;
      }
      try {
        new ConfigSchema().check(merged(config));
        checked++;
      } catch (ConfigException e) {
        wrong.add(e.getMessage() + "\n  in the README example\n" + text);
      }
    }
    assertTrue(wrong.isEmpty(), String.join("\n\n", wrong));
    assertTrue(checked >= 8, "the README's config examples were found: " + checked);
  }

  /** README's configuration table names every top-level and http key the schema has, and no other. */
  @Test
  void theReadmesConfigTableNamesTheSchemasKeys() throws Exception {
    Set<String> documented = new LinkedHashSet<>();
    Matcher row = Pattern.compile("(?m)^\\| ((?:`[^`]+`(?:, )?)+) \\|").matcher(Files.readString(Path.of("README.md")));
    while (row.find()) {
      Matcher key = Pattern.compile("`([^`]+)`").matcher(row.group(1));
      while (key.find()) {
        documented.add(key.group(1).replace("[]", ""));
      }
    }
    JsonObject properties = schema().getJsonObject("properties");
    Set<String> inSchema = new LinkedHashSet<>();
    for (String name : properties.fieldNames()) {
      if (name.equals("http") || name.equals("agentProcesses")) {
        for (String inner : properties.getJsonObject(name).getJsonObject("properties").fieldNames()) {
          inSchema.add(name + "." + inner);
        }
      } else {
        inSchema.add(name);
      }
    }
    assertEquals(inSchema, documented);
  }

  @Test
  void theSchemaFileIsWhereTheDocsSayItIs() throws Exception {
    Path file = Path.of("src", "main", "resources", "io", "switchboard", "config", ConfigSchema.RESOURCE);
    assertEquals(Files.readString(file), ConfigSchema.text());
    assertTrue(Files.readString(Path.of("README.md")).contains(file.toString()), "README.md names " + file);
  }

  // --- helpers ---

  private static JsonObject schema() {
    return new JsonObject(ConfigSchema.text());
  }

  /** The defaults with {@code change} merged in as the loader merges a file: top-level objects key by key. */
  private static JsonObject merged(JsonObject change) {
    JsonObject tree = SettingsLoader.defaults();
    change.forEach(e -> {
      if (tree.getValue(e.getKey()) instanceof JsonObject base && e.getValue() instanceof JsonObject over) {
        tree.put(e.getKey(), base.copy().mergeIn(over));
      } else {
        tree.put(e.getKey(), e.getValue());
      }
    });
    return tree;
  }

  /** A README example as a config: a whole one, a fragment of top-level keys, a list of agents or one plugin. */
  private static JsonObject asConfig(String text, Set<String> rootKeys) {
    for (String candidate : List.of(text, "{" + text + "}")) {
      try {
        JsonObject o = new JsonObject(candidate);
        if (rootKeys.containsAll(o.fieldNames())) {
          return o;
        }
        if (o.containsKey("dialect")) {
          return new JsonObject().put("plugins", new JsonArray().add(o));
        }
      } catch (DecodeException | ClassCastException notThisForm) {
        // try the next form
      }
    }
    try {
      JsonArray agents = new JsonArray("[" + text + "]");
      return new JsonObject().put("agents", SettingsLoader.defaults().getJsonArray("agents").copy().addAll(agents));
    } catch (DecodeException notAList) {
      return null;
    }
  }

  private static void assertRefused(JsonObject tree, String key, String says) {
    ConfigException e = assertThrows(ConfigException.class, () -> SettingsLoader.parse(tree));
    assertEquals(key, e.key(), e.getMessage());
    assertTrue(e.getMessage().contains(says), "\"" + e.getMessage() + "\" should say \"" + says + "\"");
  }
}
