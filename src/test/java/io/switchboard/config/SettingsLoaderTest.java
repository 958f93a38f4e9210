package io.switchboard.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.SettingsLoader.Override;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SettingsLoaderTest {
  @TempDir
  Path dir;

  private Settings load(String json, Map<String, String> env, Map<Override, String> flags) throws Exception {
    Path file = dir.resolve("switchboard.json");
    Files.writeString(file, json);
    Map<Override, String> all = new EnumMap<>(Override.class);
    all.putAll(flags);
    all.put(Override.CONFIG, file.toString());
    return SettingsLoader.load(env, all).settings();
  }

  private ConfigException refuse(String json) {
    return assertThrows(ConfigException.class, () -> load(json, Map.of(), Map.of()));
  }

  @Test
  void theShippedDefaultFileEqualsTheBuiltInDefaults() throws Exception {
    Path shipped = Path.of("conf", "switchboard.json");
    assertTrue(Files.isRegularFile(shipped), "conf/switchboard.json is the documented default");
    assertEquals(SettingsLoader.parse(SettingsLoader.defaults()),
        SettingsLoader.parse(new JsonObject(Files.readString(shipped))));
  }

  @Test
  void builtInDefaultsListenOnLoopbackWithTheDemoAgent() throws Exception {
    Settings s = SettingsLoader.parse(SettingsLoader.defaults());
    assertEquals("127.0.0.1", s.http().host());
    assertEquals(8080, s.http().port());
    assertEquals("demo", s.defaultAgent());
    assertTrue(s.agent("demo").orElseThrow().isBuiltin());
    assertEquals(Path.of("data").toAbsolutePath(), s.dataDir());
  }

  @Test
  void fileThenEnvironmentThenFlags() throws Exception {
    String json = "{\"http\": {\"port\": 9000, \"host\": \"0.0.0.0\"}, \"dataDir\": \"/tmp/from-file\"}";
    Settings fileOnly = load(json, Map.of(), Map.of());
    assertEquals(9000, fileOnly.http().port());
    assertEquals("0.0.0.0", fileOnly.http().host());
    assertEquals(Path.of("/tmp/from-file"), fileOnly.dataDir());

    Settings withEnv = load(json, Map.of("SWITCHBOARD_PORT", "9100", "SWITCHBOARD_DATA_DIR", "/tmp/env"), Map.of());
    assertEquals(9100, withEnv.http().port());
    assertEquals(Path.of("/tmp/env"), withEnv.dataDir());

    Settings withFlags = load(json, Map.of("SWITCHBOARD_PORT", "9100"), Map.of(Override.PORT, "0"));
    assertEquals(0, withFlags.http().port());
    assertEquals("0.0.0.0", withFlags.http().host());
  }

  @Test
  void unknownKeysAreNamed() {
    assertEquals("http.hots", refuse("{\"http\": {\"hots\": \"x\"}}").key());
    assertEquals("colour", refuse("{\"colour\": \"blue\"}").key());
    assertEquals("agents[0].argv", refuse("{\"agents\": [{\"id\": \"a\", \"argv\": [\"x\"]}], \"defaultAgent\": \"a\"}").key());
  }

  @Test
  void badValuesAreNamed() {
    assertEquals("http.port", refuse("{\"http\": {\"port\": \"eighty\"}}").key());
    assertEquals("http.port", refuse("{\"http\": {\"port\": 70000}}").key());
    assertEquals("http.allowedOrigins[0]", refuse("{\"http\": {\"allowedOrigins\": [\"evil\"]}}").key());
    assertEquals("defaultAgent", refuse("{\"defaultAgent\": \"ghost\"}").key());
    assertEquals("agents[0].command", refuse("{\"agents\": [{\"id\": \"a\", \"command\": []}], \"defaultAgent\": \"a\"}").key());
    assertEquals("agents[0].command", refuse("{\"agents\": [{\"id\": \"a\"}], \"defaultAgent\": \"a\"}").key());
    assertEquals("agents[1].id", refuse("{\"agents\": [{\"id\": \"a\", \"builtin\": \"demo\"}, "
        + "{\"id\": \"a\", \"builtin\": \"demo\"}], \"defaultAgent\": \"a\"}").key());
    assertEquals("plugins[0].dialect", refuse("{\"plugins\": [{\"id\": \"p\", \"dialect\": \"irc\", "
        + "\"command\": [\"x\"]}]}").key());
    assertEquals("plugins[0].command", refuse("{\"plugins\": [{\"id\": \"p\"}]}").key());
    assertEquals("logFormat", refuse("{\"logFormat\": \"xml\"}").key());
    assertEquals("agentProcesses.max", refuse("{\"agentProcesses\": {\"max\": 0}}").key());
    assertEquals("agentProcesses.idleStopSeconds", refuse("{\"agentProcesses\": {\"idleStopSeconds\": \"soon\"}}").key());
    assertEquals("agentProcesses.idle", refuse("{\"agentProcesses\": {\"idle\": 5}}").key());
    assertEquals("agents[0].maxProcesses", refuse("{\"agents\": [{\"id\": \"a\", \"builtin\": \"demo\", "
        + "\"maxProcesses\": -1}], \"defaultAgent\": \"a\"}").key());
    assertEquals("agents[0].shareProcess", refuse("{\"agents\": [{\"id\": \"a\", \"builtin\": \"demo\", "
        + "\"shareProcess\": \"yes\"}], \"defaultAgent\": \"a\"}").key());
  }

  @Test
  void aClusterSectionParsesWithItsDefaultsAndNotClusteredIsTheDefault() throws Exception {
    assertEquals(null, SettingsLoader.parse(SettingsLoader.defaults()).cluster());
    Settings edge = load("{\"cluster\": {\"node\": \"edge-1\", \"role\": \"edge\", \"host\": \"10.0.0.5\", "
        + "\"members\": [\"10.0.0.5:5701\", \"10.0.0.6:5701\"]}}", Map.of(), Map.of());
    assertEquals(new Settings.Cluster("edge-1", Settings.Cluster.Role.EDGE, "10.0.0.5", 5701, 5801,
        java.util.List.of("10.0.0.5:5701", "10.0.0.6:5701"), 5, 60, edge.dataDir().resolve("cluster-tls")),
        edge.cluster());
    assertTrue(edge.runsSurfaces() && !edge.runsAgents());
    Settings agent = load("{\"cluster\": {\"node\": \"build-1\", \"role\": \"agent\", \"host\": \"10.0.0.6\", "
        + "\"port\": 6701, \"busPort\": 6801, \"members\": [\"[fd00::5]:5701\"], \"memberTimeoutSeconds\": 10, "
        + "\"edgeGraceSeconds\": 300, \"tlsDir\": \"/etc/switchboard/tls\"}}",
        Map.of(), Map.of());
    assertEquals(new Settings.Cluster("build-1", Settings.Cluster.Role.AGENT, "10.0.0.6", 6701, 6801,
        java.util.List.of("[fd00::5]:5701"), 10, 300, java.nio.file.Path.of("/etc/switchboard/tls")), agent.cluster());
    assertTrue(agent.runsAgents() && !agent.runsSurfaces());
  }

  @Test
  void badClusterValuesAreNamed() {
    String ok = "\"node\": \"n\", \"role\": \"edge\", \"host\": \"10.0.0.5\", \"members\": [\"10.0.0.6:5701\"]";
    assertEquals("cluster.node", refuse("{\"cluster\": {\"role\": \"edge\", \"host\": \"h\", \"members\": [\"h:1\"]}}").key());
    assertEquals("cluster.node", refuse("{\"cluster\": {" + ok.replace("\"n\"", "\"no spaces\"") + "}}").key());
    assertEquals("cluster.role", refuse("{\"cluster\": {" + ok.replace("\"edge\"", "\"both\"") + "}}").key());
    assertEquals("cluster.host", refuse("{\"cluster\": {" + ok.replace("10.0.0.5", "a b") + "}}").key());
    assertEquals("cluster.members", refuse("{\"cluster\": {" + ok.replace("[\"10.0.0.6:5701\"]", "[]") + "}}").key());
    assertEquals("cluster.members[0]", refuse("{\"cluster\": {" + ok.replace("10.0.0.6:5701", "10.0.0.6") + "}}").key());
    assertEquals("cluster.members[0]", refuse("{\"cluster\": {" + ok.replace("5701", "70000") + "}}").key());
    assertEquals("cluster.port", refuse("{\"cluster\": {" + ok + ", \"port\": 0}}").key());
    assertEquals("cluster.busPort", refuse("{\"cluster\": {" + ok + ", \"port\": 5801}}").key());
    assertEquals("cluster.memberTimeoutSeconds", refuse("{\"cluster\": {" + ok + ", \"memberTimeoutSeconds\": 1}}").key());
    assertEquals("cluster.edgeGraceSeconds", refuse("{\"cluster\": {" + ok + ", \"edgeGraceSeconds\": 0}}").key());
    assertEquals("cluster.heartbeat", refuse("{\"cluster\": {" + ok + ", \"heartbeat\": 1}}").key());
    assertEquals("cluster", refuse("{\"cluster\": \"on\"}").key());
    // Plugins are surfaces: they belong to the edge node.
    ConfigException onAgentNode = refuse("{\"cluster\": {" + ok.replace("\"edge\"", "\"agent\"") + "}, \"plugins\": "
        + "[{\"id\": \"p\", \"command\": [\"x\"]}]}");
    assertEquals("plugins", onAgentNode.key());
    assertTrue(onAgentNode.getMessage().contains("edge node"), onAgentNode.getMessage());
  }

  @Test
  void agentProcessLimitsDefaultFromTheHostAndCanBeSet() throws Exception {
    Settings defaults = SettingsLoader.parse(SettingsLoader.defaults());
    assertEquals(Settings.AgentProcesses.defaultMax(), defaults.agentProcesses().max());
    assertTrue(defaults.agentProcesses().max() >= 2 && defaults.agentProcesses().max() <= 64);
    assertEquals(600_000, defaults.agentProcesses().idleStopMs());
    assertTrue(defaults.agent("demo").orElseThrow().shareProcess(), "the demo agent shares one process");
    Settings set = load("{\"agentProcesses\": {\"max\": 3, \"idleStopSeconds\": 30}, \"defaultAgent\": \"a\", "
        + "\"agents\": [{\"id\": \"a\", \"command\": [\"x\"], \"maxProcesses\": 2}]}", Map.of(), Map.of());
    assertEquals(new Settings.AgentProcesses(3, 30_000), set.agentProcesses());
    assertEquals(2, set.agent("a").orElseThrow().maxProcesses());
    assertTrue(!set.agent("a").orElseThrow().shareProcess(), "a command agent has a process per thread by default");
  }

  /** {@code agents[].writable}: absolute paths outside the data directory, each refusal naming its index. */
  @Test
  void anAgentsWritablePathsAreAbsoluteAndOutsideTheDataDirectory() throws Exception {
    Path data = directory("data");
    Path cache = dir.resolve("cache");
    JsonObject tree = SettingsLoader.defaults().put("dataDir", data.toString()).put("defaultAgent", "a");
    JsonObject agent = new JsonObject().put("id", "a").put("command", new JsonArray().add("x"));
    tree.put("agents", new JsonArray().add(agent));
    assertEquals(java.util.List.of(), SettingsLoader.parse(tree).agent("a").orElseThrow().writable());
    agent.put("writable", new JsonArray().add(cache.toString()).add("/var/cache/builds/"));
    assertEquals(java.util.List.of(cache, Path.of("/var/cache/builds")),
        SettingsLoader.parse(tree).agent("a").orElseThrow().writable());
    agent.put("writable", new JsonArray().add(dir.toString()));
    refused(tree, "agents[0].writable[0]", "contains the data directory " + data);
    agent.put("writable", new JsonArray().add(cache.toString()).add("x"));
    refused(tree, "agents[0].writable[1]", "must be an absolute path, got \"x\"");
    agent.put("writable", new JsonArray().add(data.resolve("workspaces").toString()));
    refused(tree, "agents[0].writable[0]", "is inside the data directory " + data);
    agent.put("writable", new JsonArray().add(data.toString()));
    refused(tree, "agents[0].writable[0]", "is inside the data directory");
    // Compared on real paths: a link into the data directory is inside it too.
    Path link = Files.createSymbolicLink(dir.resolve("sneaky"), data);
    agent.put("writable", new JsonArray().add(link.resolve("token").toString()));
    refused(tree, "agents[0].writable[0]", "is inside the data directory");
    agent.put("writable", new JsonArray().add(""));
    refused(tree, "agents[0].writable[0]", "must not be empty");
  }

  @Test
  void aFileThatIsNotJsonIsNamed() {
    ConfigException e = refuse("{ not json");
    assertTrue(e.key().endsWith("switchboard.json"), e.key());
    assertTrue(e.getMessage().contains("not a JSON object"), e.getMessage());
  }

  @Test
  void badEnvironmentAndFlagValuesAreNamed() {
    assertEquals("SWITCHBOARD_PORT", assertThrows(ConfigException.class,
        () -> load("{}", Map.of("SWITCHBOARD_PORT", "x"), Map.of())).key());
    assertEquals("SWITCHBOARD_COLOUR", assertThrows(ConfigException.class,
        () -> load("{}", Map.of("SWITCHBOARD_COLOUR", "x"), Map.of())).key());
    assertEquals("--port", assertThrows(ConfigException.class,
        () -> load("{}", Map.of(), Map.of(Override.PORT, "-1"))).key());
    assertEquals("--log-format", assertThrows(ConfigException.class,
        () -> load("{}", Map.of(), Map.of(Override.LOG_FORMAT, "yaml"))).key());
  }

  @Test
  void aMissingConfigFileIsAnError() {
    ConfigException e = assertThrows(ConfigException.class,
        () -> SettingsLoader.load(Map.of(), Map.of(Override.CONFIG, dir.resolve("nope.json").toString())));
    assertTrue(e.getMessage().contains("not found"));
  }

  @Test
  void pluginsParse() throws Exception {
    Settings s = load("{\"plugins\": [{\"id\": \"telegram\", \"dialect\": \"vibearound\", \"command\": [\"node\", "
        + "\"dist/main.js\"], \"cwd\": \"/opt/p\", \"config\": {\"bot_token\": \"x\"}, \"approvers\": [\"42\"]}]}",
        Map.of(), Map.of());
    PluginSpec p = s.plugins().get(0);
    assertEquals("vibearound", p.dialect());
    assertEquals("x", p.config().getString("bot_token"));
    assertEquals(java.util.List.of("42"), p.approvers());
  }

  // --- projects[] and defaultProject ---

  /** Runs git in {@code where} without the system's or the user's configuration; it must succeed. */
  static void git(Path where, String... args) throws Exception {
    List<String> argv = new ArrayList<>(List.of("git", "-C", where.toString(), "-c", "user.name=Test",
        "-c", "user.email=test@example.org", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"));
    argv.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
    pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
    pb.environment().put("GIT_CONFIG_GLOBAL", "/dev/null");
    Process process = pb.start();
    String out = new String(process.getInputStream().readAllBytes());
    assertTrue(process.waitFor(30, TimeUnit.SECONDS), "git " + args[0] + " hangs");
    assertEquals(0, process.exitValue(), "git " + String.join(" ", args) + ": " + out);
  }

  private Path directory(String name) throws Exception {
    return Files.createDirectories(dir.resolve(name));
  }

  private Path repository(String name) throws Exception {
    Path repo = directory(name);
    git(repo, "init", "-q");
    return repo;
  }

  /** The built-in defaults with a data directory under the test's directory, the projects and these keys. */
  private JsonObject withProjects(JsonArray projects) {
    return SettingsLoader.defaults().put("dataDir", dir.resolve("data").toString()).put("projects", projects);
  }

  private static JsonObject project(String id, Path path) {
    return new JsonObject().put("id", id).put("path", path.toString());
  }

  /** The error for a configuration with these projects; asserts its key and that its message holds {@code says}. */
  private static void refused(JsonObject tree, String key, String says) {
    ConfigException e = assertThrows(ConfigException.class, () -> SettingsLoader.parse(tree));
    assertEquals(key, e.key(), e.getMessage());
    assertTrue(e.getMessage().contains(says), "\"" + e.getMessage() + "\" should say \"" + says + "\"");
  }

  private void refusedProject(JsonObject project, String key, String says) {
    refused(withProjects(new JsonArray().add(project)), key, says);
  }

  @Test
  void attentionDefaultsToAReminderAfterFiveMinutesAndNoDeadline() throws Exception {
    Attention.Resolved r = SettingsLoader.parse(SettingsLoader.defaults()).attention().resolve("demo", null);
    assertEquals(5 * 60_000, r.remindAfterMs());
    assertEquals(0, r.deadlineMs(), "a request waits for its answer unless a deadline is configured");
    assertEquals(0, r.escalateAfterMs());
  }

  @Test
  void attentionIsOverriddenFieldByFieldByTheAgentThenTheProject() throws Exception {
    Path web = repository("web");
    JsonObject tree = withProjects(new JsonArray().add(project("web", web)
        .put("attention", new JsonObject().put("deadline", "10m"))));
    tree.put("attention", new JsonObject().put("remindAfter", "2m").put("deadline", "1h").put("onExpiry", "cancelTurn")
        .put("quietHours", new JsonObject().put("from", "22:00").put("to", "07:00").put("zone", "UTC")));
    tree.getJsonArray("agents").getJsonObject(0).put("attention", new JsonObject().put("remindAfter", "90s"));
    Settings s = SettingsLoader.parse(tree);
    Attention.Resolved inProject = s.attention().resolve("demo", "web");
    assertEquals(90_000, inProject.remindAfterMs(), "the agent's reminder");
    assertEquals(10 * 60_000, inProject.deadlineMs(), "the project's deadline");
    assertEquals(Attention.OnExpiry.CANCEL_TURN, inProject.onExpiry(), "the top level's onExpiry");
    assertEquals("deadline 10m of project web", inProject.deadlineRule());
    assertEquals("deadline 1h of the gateway's attention settings", s.attention().resolve("demo", null).deadlineRule());
  }

  @Test
  void aLoginLastsSevenDaysUnlessHttpSessionLifetimeSaysOtherwise() throws Exception {
    assertEquals(TimeUnit.DAYS.toMillis(7), SettingsLoader.parse(SettingsLoader.defaults()).http().sessionLifetimeMs());
    JsonObject base = SettingsLoader.defaults();
    assertEquals(TimeUnit.DAYS.toMillis(30), SettingsLoader.parse(base.copy().put("http", base.getJsonObject("http")
        .copy().put("sessionLifetime", "30d"))).http().sessionLifetimeMs());
    assertEquals(TimeUnit.HOURS.toMillis(12), SettingsLoader.parse(base.copy().put("http", base.getJsonObject("http")
        .copy().put("sessionLifetime", "12h"))).http().sessionLifetimeMs());
    String[][] bad = {
        {"1m", "at least 5m"}, {"401d", "at most 400d"}, {"off", "like \"12h\""}, {"soon", "like \"12h\""},
    };
    for (String[] b : bad) {
      refused(base.copy().put("http", base.getJsonObject("http").copy().put("sessionLifetime", b[0])),
          "http.sessionLifetime", b[1]);
    }
  }

  @Test
  void badAttentionValuesAreNamed() throws Exception {
    JsonObject base = SettingsLoader.defaults();
    refused(base.copy().put("attention", new JsonObject().put("remindAfter", "soon")), "attention.remindAfter",
        "like \"90s\"");
    refused(base.copy().put("attention", new JsonObject().put("deadline", "5s")), "attention.deadline", "at least 10s");
    refused(base.copy().put("attention", new JsonObject().put("onExpiry", "allow")), "attention.onExpiry",
        "reject or cancelTurn");
    refused(base.copy().put("attention", new JsonObject().put("escalateTo", new JsonArray().add("boss"))),
        "attention.escalateTo[0]", "plugin id, a colon");
    refused(base.copy().put("attention", new JsonObject().put("escalateTo", new JsonArray().add("telegram:1"))),
        "attention.escalateTo[0]", "no configured plugin: \"telegram\"");
    refused(base.copy().put("attention", new JsonObject().put("quietHours", new JsonObject().put("from", "22h")
        .put("to", "07:00"))), "attention.quietHours.from", "time of day");
    refused(base.copy().put("attention", new JsonObject().put("snooze", "5m")), "attention.snooze", "unknown key");
  }

  @Test
  void rulesAndPresetsParseAndABadRuleIsNamedWithItsKey() throws Exception {
    JsonObject tree = SettingsLoader.defaults().put("rules", new JsonArray()
        .add(new JsonObject().put("preset", "readWorktree"))
        .add(new JsonObject().put("preset", "safeCommands").put("testCommand", new JsonArray().add("mvn").add("test")))
        .add(new JsonObject().put("id", "no-push").put("effect", "deny").put("command", "git push")));
    List<String> ids = SettingsLoader.parse(tree).rules().stream().map(io.switchboard.rules.Rule::id).toList();
    assertTrue(ids.containsAll(List.of("preset.readWorktree", "preset.safeCommands.git-status",
        "preset.safeCommands.mvn-test", "no-push")), ids.toString());
    refused(SettingsLoader.defaults().put("rules", new JsonArray().add(new JsonObject().put("id", "x")
        .put("effect", "allow").put("kinds", new JsonArray().add("read")).put("command", "git status"))),
        "rules[0].command", "could never match");
    refused(SettingsLoader.defaults().put("rules", new JsonArray().add(new JsonObject().put("preset", "safeCommands")
        .put("projectTests", new JsonObject().put("nope", new JsonArray().add("npm").add("test"))))),
        "rules[0].projectTests.nope", "names no configured project");
    refused(SettingsLoader.defaults().put("rules", new JsonArray().add(new JsonObject().put("id", "x")
        .put("effect", "allow").put("command", "git diff").put("examples", new JsonObject().put("match",
            new JsonArray().add(new JsonObject().put("kind", "execute").put("command", "git log")))))),
        "rules[0].examples.match", "is not matched by the rule");
    refused(SettingsLoader.defaults().put("rules", new JsonArray().add(new JsonObject().put("preset", "everything"))),
        "rules[0].preset", "must be readWorktree or safeCommands, got \"everything\"");
    refused(SettingsLoader.defaults().put("rules", new JsonArray().add(new JsonObject().put("id", "a")
        .put("effect", "allow").put("command", "ls")).add(new JsonObject().put("id", "a").put("effect", "deny")
        .put("command", "rm"))), "rules[1].id", "duplicate rule id");
  }

  /** A rule that can never match stops the start, its key named: nothing is left to silence. */
  @Test
  void aRuleThatCanNeverMatchIsRefusedNamingItsKey() throws Exception {
    Path notes = directory("notes");
    JsonObject tree = withProjects(new JsonArray().add(project("notes", notes)));
    JsonObject fine = rule("fine").put("agents", new JsonArray().add("demo"))
        .put("projects", new JsonArray().add("notes")).put("kinds", new JsonArray().add("read").add("fetch"))
        .put("paths", new JsonArray().add("docs/**").add("/etc/hosts"))
        .put("exceptPaths", new JsonArray().add("docs/secret*").add("**"));
    assertEquals(List.of("fine"), SettingsLoader.parse(tree.copy().put("rules", new JsonArray().add(fine)))
        .rules().stream().map(io.switchboard.rules.Rule::id).toList(), "an absolute path outside \"**\" still matches");

    refused(tree.copy().put("rules", new JsonArray().add(rule("x").put("agents", new JsonArray().add("demo")
        .add("claude")))), "rules[0].agents[1]", "names no configured agent: \"claude\" (configured: demo)");
    refused(tree.copy().put("rules", new JsonArray().add(rule("x").put("projects", new JsonArray().add("web")))),
        "rules[0].projects[0]", "names no configured project: \"web\" (configured: notes)");
    refused(SettingsLoader.defaults().put("rules", new JsonArray().add(rule("x").put("projects",
        new JsonArray().add("web")))), "rules[0].projects[0]", "(none is configured), so this rule could never match");
    refused(tree.copy().put("rules", new JsonArray().add(rule("x").put("scope", new JsonObject().put("agent", "gpt")))),
        "rules[0].scope.agent", "names no configured agent: \"gpt\"");
    refused(tree.copy().put("rules", new JsonArray().add(rule("x").put("kinds", new JsonArray().add("fetch")
        .add("think")).put("paths", new JsonArray().add("*.md")))), "rules[0].paths",
        "kind fetch or think names no file");
    refused(tree.copy().put("rules", new JsonArray().add(rule("x").put("kinds", new JsonArray().add("switch_mode"))
        .put("exceptPaths", new JsonArray().add(".env")))), "rules[0].exceptPaths", "could never match");
    refused(tree.copy().put("rules", new JsonArray().add(rule("x").put("paths", new JsonArray().add("src/**")
        .add("/tmp/*")).put("exceptPaths", new JsonArray().add("/tmp/*").add("src/**")))), "rules[0].exceptPaths",
        "excepts every path the rule covers (src/**, /tmp/*)");
    refused(tree.copy().put("rules", new JsonArray().add(rule("x").put("paths", new JsonArray().add("src/**")
        .add("*.md")).put("exceptPaths", new JsonArray().add("**")))), "rules[0].exceptPaths", "could never match");
    refused(tree.copy().put("rules", new JsonArray().add(rule("x").put("kinds", new JsonArray().add("read"))
        .put("exceptPaths", new JsonArray().add("**")))), "rules[0].exceptPaths", "excepts every path the rule covers");
  }

  private static JsonObject rule(String id) {
    return new JsonObject().put("id", id).put("effect", "allow");
  }

  @Test
  void noProjectsIsTheDefault() throws Exception {
    Settings s = SettingsLoader.parse(SettingsLoader.defaults());
    assertEquals(List.of(), s.projects());
    assertEquals(null, s.defaultProject());
  }

  @Test
  void projectsParseWithTheirDefaults() throws Exception {
    Path web = repository("web");
    Path notes = directory("notes");
    // A linked worktree or a submodule has a .git file, not a directory: still a repository.
    Path linked = directory("linked");
    Files.writeString(linked.resolve(".git"), "gitdir: " + web.resolve(".git") + "\n");
    Path viaLink = Files.createSymbolicLink(dir.resolve("notes-link"), notes);
    JsonArray servers = new JsonArray()
        .add(new JsonObject().put("name", "fs").put("command", "/usr/bin/mcp-fs").put("args", new JsonArray().add("-v"))
            .put("env", new JsonArray().add(new JsonObject().put("name", "ROOT").put("value", "/srv"))))
        .add(new JsonObject().put("name", "bare").put("command", "mcp-bare"))
        .add(new JsonObject().put("name", "docs").put("type", "http").put("url", "https://mcp.example.org/docs")
            .put("headers", new JsonArray().add(new JsonObject().put("name", "Authorization").put("value", "x"))))
        .add(new JsonObject().put("name", "events").put("type", "sse").put("url", "http://127.0.0.1:9000/sse"));
    JsonObject tree = withProjects(new JsonArray()
        .add(project("web", web).put("name", "Web app").put("agents", new JsonArray().add("claude"))
            .put("baseBranch", "release/2.x").put("mcpServers", servers)
            .put("copyFiles", new JsonArray().add(".env").add("config/local.json"))
            .put("setup", new JsonArray().add("npm").add("ci")))
        .add(project("notes", viaLink))
        .add(project("linked", linked))
        .add(project("shared-repo", repository("shared-repo")).put("worktrees", "shared")))
        .put("defaultProject", "web")
        .put("agents", SettingsLoader.defaults().getJsonArray("agents").copy()
            .add(new JsonObject().put("id", "claude").put("command", new JsonArray().add("claude-code-acp"))));
    Settings s = SettingsLoader.parse(tree);

    assertEquals(List.of("web", "notes", "linked", "shared-repo"), s.projects().stream().map(ProjectSpec::id).toList());
    assertEquals("web", s.defaultProject());
    ProjectSpec w = s.project("web").orElseThrow();
    assertEquals("Web app", w.name());
    assertEquals(web.toRealPath(), w.path());
    assertEquals(List.of("claude"), w.agents());
    assertTrue(w.allows("claude") && !w.allows("demo"));
    assertEquals(ProjectSpec.Worktrees.PER_THREAD, w.worktrees(), "a git repository gets worktrees per thread");
    assertEquals("release/2.x", w.baseBranch());
    assertEquals(List.of(".env", "config/local.json"), w.copyFiles());
    assertEquals(List.of("npm", "ci"), w.setup());
    // As given, with the lists ACP's session/new requires filled in where left out.
    assertEquals(new JsonArray()
        .add(servers.getJsonObject(0))
        .add(new JsonObject().put("name", "bare").put("command", "mcp-bare").put("args", new JsonArray())
            .put("env", new JsonArray()))
        .add(servers.getJsonObject(2))
        .add(servers.getJsonObject(3).copy().put("headers", new JsonArray())), w.mcpServers());

    ProjectSpec n = s.project("notes").orElseThrow();
    assertEquals("notes", n.name(), "the name defaults to the id");
    assertEquals(notes.toRealPath(), n.path(), "a symbolic link is resolved");
    assertEquals(ProjectSpec.Worktrees.SHARED, n.worktrees(), "a directory without .git is shared");
    assertEquals(null, n.baseBranch());
    assertEquals(List.of(), n.agents());
    assertTrue(n.allows("demo"), "no agents listed: every agent may run there");
    assertEquals(new JsonArray(), n.mcpServers());
    assertEquals(List.of(), n.copyFiles());
    assertEquals(List.of(), n.setup());
    assertEquals(ProjectSpec.Worktrees.PER_THREAD, s.project("linked").orElseThrow().worktrees());
    assertEquals(ProjectSpec.Worktrees.SHARED, s.project("shared-repo").orElseThrow().worktrees());
  }

  @Test
  void projectsAndDefaultProjectAreReadFromTheFile() throws Exception {
    Path web = repository("web");
    Settings s = load(new JsonObject().put("dataDir", dir.resolve("data").toString())
        .put("projects", new JsonArray().add(project("web", web))).put("defaultProject", "web").encode(),
        Map.of(), Map.of());
    assertEquals("web", s.defaultProject());
    assertEquals(web.toRealPath(), s.project("web").orElseThrow().path());
  }

  @Test
  void badProjectKeysAreNamed() throws Exception {
    Path ok = directory("ok");
    refused(SettingsLoader.defaults().put("projects", new JsonObject()), "projects", "must be an array of objects");
    refused(withProjects(new JsonArray().add("web")), "projects[0]", "must be an object");
    refusedProject(project("p", ok).put("colour", "blue"), "projects[0].colour", "unknown key");
    refusedProject(new JsonObject().put("path", ok.toString()), "projects[0].id", "missing");
    refusedProject(project("no spaces", ok), "projects[0].id", "must be letters, digits");
    refused(withProjects(new JsonArray().add(project("p", ok)).add(project("p", directory("other")))),
        "projects[1].id", "duplicate project id \"p\"");
    refusedProject(new JsonObject().put("id", "p"), "projects[0].path", "missing");
    refusedProject(project("p", ok).put("name", ""), "projects[0].name", "must not be empty");
    refusedProject(project("p", ok).put("setup", new JsonArray()), "projects[0].setup", "must not be empty");
    refusedProject(project("p", ok).put("setup", "make"), "projects[0].setup", "must be an array of strings");
  }

  @Test
  void aProjectsPathMustBeAnExistingDirectoryOutsideTheDataDirectory() throws Exception {
    refusedProject(new JsonObject().put("id", "p").put("path", "src/web"), "projects[0].path",
        "must be an absolute path, got \"src/web\"");
    refusedProject(project("p", dir.resolve("gone")), "projects[0].path", dir.resolve("gone") + " does not exist");
    Path file = Files.writeString(dir.resolve("file.txt"), "x");
    refusedProject(project("p", file), "projects[0].path", "is not a directory");

    Path data = directory("data");
    Path inData = Files.createDirectories(data.resolve("workspaces/x"));
    refusedProject(project("p", inData), "projects[0].path", "is inside the data directory " + data);
    refusedProject(project("p", inData), "projects[0].path", "the token and the database live there");
    refusedProject(project("p", data), "projects[0].path", "is inside the data directory");
    refusedProject(project("p", dir), "projects[0].path", "contains the data directory " + data);
    // Compared on real paths: a link into the data directory is inside it too.
    Path link = Files.createSymbolicLink(dir.resolve("sneaky"), inData);
    refusedProject(project("p", link), "projects[0].path", inData.toRealPath() + " is inside the data directory");
    // And a data directory named through a link (that need not exist yet) is compared where it really is.
    Path real = directory("real");
    Path dataLink = Files.createSymbolicLink(dir.resolve("data-link"), real);
    Path inside = Files.createDirectories(real.resolve("later/project"));
    String linkedData = dataLink.resolve("later").toString();
    refused(withProjects(new JsonArray().add(project("p", inside))).put("dataDir", linkedData),
        "projects[0].path", "is inside the data directory");
    refused(withProjects(new JsonArray().add(project("p", real))).put("dataDir", linkedData),
        "projects[0].path", "contains the data directory");
  }

  @Test
  void projectsMayNotOverlap() throws Exception {
    Path web = directory("web");
    Path nested = directory("web/packages/ui");
    refused(withProjects(new JsonArray().add(project("web", web)).add(project("ui", nested))),
        "projects[1].path", "overlaps project web (" + web.toRealPath() + ")");
    refused(withProjects(new JsonArray().add(project("ui", nested)).add(project("web", web))),
        "projects[1].path", "overlaps project ui (" + nested.toRealPath() + ")");
    Path alias = Files.createSymbolicLink(dir.resolve("alias"), web);
    refused(withProjects(new JsonArray().add(project("web", web)).add(project("again", alias))),
        "projects[1].path", "overlaps project web");
    // Side by side is fine, even with a common prefix in the name.
    Settings s = SettingsLoader.parse(withProjects(new JsonArray().add(project("web", web))
        .add(project("web2", directory("web2")))));
    assertEquals(2, s.projects().size());
  }

  @Test
  void aProjectsAgentsMustBeConfiguredExceptOnAnEdgeNode() throws Exception {
    Path ok = directory("ok");
    JsonObject tree = withProjects(new JsonArray().add(project("p", ok).put("agents", new JsonArray().add("demo")
        .add("ghost"))));
    refused(tree, "projects[0].agents[1]", "names no configured agent: \"ghost\" (configured: demo)");
    refusedProject(project("p", ok).put("agents", new JsonArray().add("")), "projects[0].agents[0]",
        "must be a non-empty string");
    // An edge node's agents are the agent node's.
    Settings edge = SettingsLoader.parse(tree.copy().put("cluster", new JsonObject().put("node", "edge")
        .put("role", "edge").put("host", "10.0.0.5").put("members", new JsonArray().add("10.0.0.5:5701"))));
    assertEquals(List.of("demo", "ghost"), edge.project("p").orElseThrow().agents());
  }

  @Test
  void worktreesAreCheckedAgainstTheDirectory() throws Exception {
    Path plain = directory("plain");
    refusedProject(project("p", plain).put("worktrees", "perThread"), "projects[0].worktrees",
        "perThread needs a git repository; " + plain.toRealPath() + " has no .git");
    refusedProject(project("p", repository("repo")).put("worktrees", "sometimes"), "projects[0].worktrees",
        "must be perThread (a git worktree per thread) or shared");
    refusedProject(project("p", plain).put("worktrees", "PerThread"), "projects[0].worktrees", "got \"PerThread\"");
    assertEquals(ProjectSpec.Worktrees.PER_THREAD, SettingsLoader.parse(withProjects(new JsonArray()
        .add(project("p", dir.resolve("repo")).put("worktrees", "perThread")))).projects().get(0).worktrees());
  }

  @Test
  void aBaseBranchMustBeAPlausibleBranchName() throws Exception {
    Path repo = repository("repo");
    refusedProject(project("p", repo).put("baseBranch", ""), "projects[0].baseBranch", "must not be empty");
    refusedProject(project("p", repo).put("baseBranch", 3), "projects[0].baseBranch", "must be a string");
    Map<String, String> wrong = Map.of("my branch", "contains a space", "main..dev", "contains \"..\"",
        "-f", "starts with '-'", "tab\tbed", "contains a control character", "main~1", "contains '~'",
        "HEAD^", "contains '^'",
        "a:b", "contains ':'", "what?", "contains '?'", "feat*", "contains '*'", "back\\slash", "contains '\\'");
    for (Map.Entry<String, String> e : wrong.entrySet()) {
      refusedProject(project("p", repo).put("baseBranch", e.getKey()), "projects[0].baseBranch",
          "is not a usable branch name (" + e.getValue() + "), got \"" + e.getKey() + "\"");
    }
    refusedProject(project("p", repo).put("baseBranch", "[x"), "projects[0].baseBranch", "contains '['");
    refusedProject(project("p", repo).put("baseBranch", "x.lock"), "projects[0].baseBranch", "\".lock\"");
    refusedProject(project("p", repo).put("baseBranch", "x/"), "projects[0].baseBranch", "empty part");
    assertEquals("feature/x-1.2_y", SettingsLoader.parse(withProjects(new JsonArray()
        .add(project("p", repo).put("baseBranch", "feature/x-1.2_y")))).projects().get(0).baseBranch());
  }

  @Test
  void mcpServersAreCheckedInTheirAcpForm() throws Exception {
    Path ok = directory("ok");
    String at = "projects[0].mcpServers";
    java.util.function.BiConsumer<Object, String[]> refusedServer = (server, keyAndText) -> refusedProject(
        project("p", ok).put("mcpServers", new JsonArray().add(server)), keyAndText[0], keyAndText[1]);
    refusedProject(project("p", ok).put("mcpServers", new JsonObject()), at, "must be an array of objects");
    refusedServer.accept("fs", new String[] {at + "[0]", "must be an object"});
    refusedServer.accept(new JsonObject().put("command", "x"), new String[] {at + "[0].name", "missing"});
    refusedServer.accept(new JsonObject().put("name", "").put("command", "x"), new String[] {at + "[0].name",
        "must not be empty"});
    refusedServer.accept(new JsonObject().put("name", "fs"), new String[] {at + "[0].command",
        "needs a \"command\" (stdio) or a \"type\" (http or sse) and a \"url\""});
    refusedServer.accept(new JsonObject().put("name", "fs").put("command", ""), new String[] {at + "[0].command",
        "must not be empty"});
    refusedServer.accept(new JsonObject().put("name", "fs").put("command", new JsonArray().add("x")),
        new String[] {at + "[0].command", "must be a string"});
    refusedServer.accept(new JsonObject().put("name", "fs").put("command", "x").put("args", "-v"),
        new String[] {at + "[0].args", "must be an array of strings"});
    refusedServer.accept(new JsonObject().put("name", "fs").put("command", "x").put("args", new JsonArray().add(1)),
        new String[] {at + "[0].args[0]", "must be a string, got 1"});
    refusedServer.accept(new JsonObject().put("name", "fs").put("command", "x").put("env", new JsonObject()),
        new String[] {at + "[0].env", "must be an array of objects"});
    refusedServer.accept(new JsonObject().put("name", "fs").put("command", "x").put("env", new JsonArray()
        .add(new JsonObject().put("name", "A"))), new String[] {at + "[0].env[0].value", "missing"});
    refusedServer.accept(new JsonObject().put("name", "fs").put("command", "x").put("env", new JsonArray()
        .add(new JsonObject().put("name", "A").put("value", "1").put("secret", true))),
        new String[] {at + "[0].env[0].secret", "unknown key"});
    refusedServer.accept(new JsonObject().put("name", "fs").put("command", "x").put("url", "http://h"),
        new String[] {at + "[0].url", "unknown key"});
    refusedServer.accept(new JsonObject().put("name", "web").put("url", "https://h/mcp"),
        new String[] {at + "[0].type", "needs a \"command\" (stdio) or a \"type\""});
    refusedServer.accept(new JsonObject().put("name", "web").put("type", "ws").put("url", "https://h/mcp"),
        new String[] {at + "[0].type", "must be stdio, http or sse, got \"ws\""});
    refusedServer.accept(new JsonObject().put("name", "web").put("type", "http"),
        new String[] {at + "[0].url", "missing"});
    refusedServer.accept(new JsonObject().put("name", "web").put("type", "http").put("url", "ftp://h/mcp"),
        new String[] {at + "[0].url", "must start with http:// or https://, got \"ftp://h/mcp\""});
    refusedServer.accept(new JsonObject().put("name", "web").put("type", "sse").put("url", "https://h/mcp")
        .put("headers", new JsonArray().add(new JsonObject().put("value", "x"))),
        new String[] {at + "[0].headers[0].name", "missing"});
    refusedServer.accept(new JsonObject().put("name", "web").put("type", "sse").put("url", "https://h/mcp")
        .put("command", "x"), new String[] {at + "[0].command", "unknown key"});
  }

  @Test
  void copyFilesStayInsideTheProject() throws Exception {
    Path ok = directory("ok");
    refusedProject(project("p", ok).put("copyFiles", new JsonArray().add(".env").add("/etc/passwd")),
        "projects[0].copyFiles[1]", "must be a path relative to the project's directory, got \"/etc/passwd\"");
    refusedProject(project("p", ok).put("copyFiles", new JsonArray().add("../secrets")),
        "projects[0].copyFiles[0]", "no \"..\"");
    refusedProject(project("p", ok).put("copyFiles", new JsonArray().add("config/../../x")),
        "projects[0].copyFiles[0]", "no \"..\"");
    refusedProject(project("p", ok).put("copyFiles", new JsonArray().add("")), "projects[0].copyFiles[0]",
        "must be a non-empty string");
    assertEquals(List.of("..env", "a/..b"), SettingsLoader.parse(withProjects(new JsonArray().add(project("p", ok)
        .put("copyFiles", new JsonArray().add("..env").add("a/..b"))))).projects().get(0).copyFiles());
  }

  @Test
  void theDefaultProjectMustBeConfigured() throws Exception {
    Path ok = directory("ok");
    refused(withProjects(new JsonArray().add(project("web", ok))).put("defaultProject", "ghost"), "defaultProject",
        "names no configured project: \"ghost\" (configured: web)");
    refused(SettingsLoader.defaults().put("defaultProject", "web"), "defaultProject",
        "names no configured project: \"web\"");
    refused(withProjects(new JsonArray().add(project("web", ok))).put("defaultProject", 1), "defaultProject",
        "must be a string");
    assertEquals(null, SettingsLoader.parse(withProjects(new JsonArray().add(project("web", ok)))).defaultProject());
  }
}
