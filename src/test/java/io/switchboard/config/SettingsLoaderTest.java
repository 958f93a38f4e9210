package io.switchboard.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.SettingsLoader.Override;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
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
        java.util.List.of("10.0.0.5:5701", "10.0.0.6:5701"), 5, 60), edge.cluster());
    assertTrue(edge.runsSurfaces() && !edge.runsAgents());
    Settings agent = load("{\"cluster\": {\"node\": \"build-1\", \"role\": \"agent\", \"host\": \"10.0.0.6\", "
        + "\"port\": 6701, \"busPort\": 6801, \"members\": [\"[fd00::5]:5701\"], \"memberTimeoutSeconds\": 10, "
        + "\"edgeGraceSeconds\": 300}}",
        Map.of(), Map.of());
    assertEquals(new Settings.Cluster("build-1", Settings.Cluster.Role.AGENT, "10.0.0.6", 6701, 6801,
        java.util.List.of("[fd00::5]:5701"), 10, 300), agent.cluster());
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
}
