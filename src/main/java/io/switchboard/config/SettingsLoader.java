package io.switchboard.config;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Builds {@link Settings} from the built-in defaults, then the config file, then
 * {@code SWITCHBOARD_*} environment variables, then command-line flags (later wins). Anything
 * unknown or malformed is a {@link ConfigException} naming the key, the variable or the flag.
 */
public final class SettingsLoader {

  /** The file used when no {@code --config} is given, if it exists (relative to the working directory). */
  public static final Path DEFAULT_CONFIG = Path.of("conf", "switchboard.json");

  /** The overrides a flag or an environment variable may set, by their flag name. */
  public enum Override {
    CONFIG("config"), DATA_DIR("data-dir"), HOST("host"), PORT("port"), LOG_FORMAT("log-format");

    public final String flag;

    Override(String flag) {
      this.flag = flag;
    }

    public String envName() {
      return "SWITCHBOARD_" + flag.toUpperCase().replace('-', '_');
    }

    public static Override byFlag(String flag) {
      for (Override o : values()) {
        if (o.flag.equals(flag)) {
          return o;
        }
      }
      return null;
    }
  }


  /** The configuration used when there is no file; conf/switchboard.json documents the same. */
  public static JsonObject defaults() {
    return new JsonObject()
        .put("http", new JsonObject().put("host", "127.0.0.1").put("port", 8080)
            .put("allowedOrigins", new JsonArray()).put("publicMetrics", false))
        .put("dataDir", "./data")
        .put("defaultAgent", "demo")
        .put("agents", new JsonArray().add(new JsonObject()
            .put("id", "demo").put("name", "Demo agent").put("builtin", "demo")))
        .put("plugins", new JsonArray())
        .put("agentProcesses", new JsonObject().put("idleStopSeconds", 600))
        .put("logFormat", "text");
  }

  /** Where the settings came from, for messages: the file read, or "built-in defaults". */
  public record Loaded(Settings settings, String source) {}

  /**
   * @param env the process environment (only {@code SWITCHBOARD_*} names are read)
   * @param flags values given on the command line, by override
   */
  public static Loaded load(Map<String, String> env, Map<Override, String> flags) throws ConfigException {
    Map<Override, String> fromEnv = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : env.entrySet()) {
      if (!e.getKey().startsWith("SWITCHBOARD_")) {
        continue;
      }
      Override match = null;
      for (Override o : Override.values()) {
        if (o.envName().equals(e.getKey())) {
          match = o;
        }
      }
      if (match == null) {
        throw new ConfigException(e.getKey(), "unknown environment variable (known: "
            + String.join(", ", envNames()) + ")");
      }
      fromEnv.put(match, e.getValue());
    }

    JsonObject tree = defaults();
    String source = "built-in defaults";
    Path file = null;
    if (flags.containsKey(Override.CONFIG)) {
      file = Path.of(flags.get(Override.CONFIG));
    } else if (fromEnv.containsKey(Override.CONFIG)) {
      file = Path.of(fromEnv.get(Override.CONFIG));
    }
    if (file != null && !Files.isRegularFile(file)) {
      throw new ConfigException(file.toString(), "config file not found");
    }
    if (file == null && Files.isRegularFile(DEFAULT_CONFIG)) {
      file = DEFAULT_CONFIG;
    }
    if (file != null) {
      source = file.toString();
      JsonObject fromFile = readFile(file);
      fromFile.forEach(e -> {
        Object base = tree.getValue(e.getKey());
        if (base instanceof JsonObject baseObject && e.getValue() instanceof JsonObject over) {
          tree.put(e.getKey(), baseObject.copy().mergeIn(over));
        } else {
          tree.put(e.getKey(), e.getValue());
        }
      });
    }
    applyOverrides(tree, fromEnv, true);
    applyOverrides(tree, flags, false);
    return new Loaded(parse(tree), source);
  }

  private static List<String> envNames() {
    List<String> names = new ArrayList<>();
    for (Override o : Override.values()) {
      names.add(o.envName());
    }
    return names;
  }

  private static JsonObject readFile(Path file) throws ConfigException {
    String text;
    try {
      text = Files.readString(file);
    } catch (IOException e) {
      throw new ConfigException(file.toString(), "cannot read the config file: " + e.getMessage());
    }
    try {
      return new JsonObject(text);
    } catch (DecodeException | ClassCastException e) {
      throw new ConfigException(file.toString(), "not a JSON object: " + firstLine(e.getMessage()));
    }
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "unreadable";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  private static void applyOverrides(JsonObject tree, Map<Override, String> values, boolean fromEnv)
      throws ConfigException {
    for (Map.Entry<Override, String> e : values.entrySet()) {
      String name = fromEnv ? e.getKey().envName() : "--" + e.getKey().flag;
      String value = e.getValue();
      switch (e.getKey()) {
        case CONFIG -> { }
        case DATA_DIR -> tree.put("dataDir", nonBlank(name, value));
        // (a path with a NUL is refused by parse(), naming dataDir)
        case HOST -> http(tree).put("host", nonBlank(name, value));
        case PORT -> http(tree).put("port", port(name, value));
        case LOG_FORMAT -> {
          if (!value.equals("text") && !value.equals("json")) {
            throw new ConfigException(name, "must be text or json, got \"" + value + "\"");
          }
          tree.put("logFormat", value);
        }
        default -> throw new IllegalStateException(e.getKey().name());
      }
    }
  }

  /** The tree's {@code http} object; where the file made it something else, a spare one (the schema names "http"). */
  private static JsonObject http(JsonObject tree) {
    return tree.getValue("http") instanceof JsonObject http ? http : new JsonObject();
  }

  private static String nonBlank(String name, String value) throws ConfigException {
    if (value == null || value.isBlank()) {
      throw new ConfigException(name, "must not be empty");
    }
    return value;
  }

  private static int port(String name, String value) throws ConfigException {
    try {
      int port = Integer.parseInt(value.trim());
      if (port >= 0 && port <= 65535) {
        return port;
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new ConfigException(name, "must be a port number 0..65535 (0 picks a free port), got \"" + value + "\"");
  }

  /**
   * Checks a merged configuration tree and turns it into settings: its shape against the schema
   * ({@link ConfigSchema}), then what a schema cannot say (ids named elsewhere, paths, rules).
   */
  public static Settings parse(JsonObject tree) throws ConfigException {
    new ConfigSchema().check(tree);
    Node root = new Node("", tree);

    Node http = root.object("http");
    String host = http.string("host");
    int port = http.integer("port");
    List<String> origins = http.strings("allowedOrigins");
    boolean publicMetrics = http.bool("publicMetrics");
    List<String> allowedHosts = http.has("allowedHosts") ? http.strings("allowedHosts") : List.of();
    long sessionLifetime = Settings.Http.DEFAULT_SESSION_LIFETIME_MS;
    if (http.has("sessionLifetime")) {
      try {
        // Shorter than 5 minutes ends a login while it is used; browsers cap a cookie at 400 days.
        sessionLifetime = Durations.parse(http.string("sessionLifetime"), 5 * 60_000L, 400L * 86_400_000);
      } catch (IllegalArgumentException e) {
        throw new ConfigException(http.key("sessionLifetime"), e.getMessage());
      }
    }

    String dataDir = root.path("dataDir");
    String logFormat = root.string("logFormat");

    Settings.AgentProcesses agentProcesses = Settings.AgentProcesses.defaults();
    if (root.has("agentProcesses")) {
      Node processes = root.object("agentProcesses");
      agentProcesses = new Settings.AgentProcesses(
          processes.has("max") ? processes.integer("max") : agentProcesses.max(),
          processes.has("idleStopSeconds") ? processes.integer("idleStopSeconds") * 1000L : agentProcesses.idleStopMs());
    }

    List<AgentSpec> agents = new ArrayList<>();
    Set<String> agentIds = new HashSet<>();
    List<Node> agentNodes = root.objects("agents");
    for (Node a : agentNodes) {
      String id = a.string("id");
      if (!agentIds.add(id)) {
        throw new ConfigException(a.key("id"), "duplicate agent id \"" + id + "\"");
      }
      String builtin = a.has("builtin") ? a.string("builtin") : null;
      agents.add(new AgentSpec(id, a.has("name") ? a.string("name") : id, builtin,
          a.has("command") ? a.strings("command") : null, a.env("env"),
          a.has("cwd") ? a.path("cwd") : null,
          a.has("authMethod") ? a.string("authMethod") : null,
          a.has("sandbox") ? io.switchboard.process.Sandbox.Mode.parse(a.string("sandbox"))
              : io.switchboard.process.Sandbox.Mode.AUTO,
          a.has("maxProcesses") ? a.integer("maxProcesses") : null,
          a.has("shareProcess") ? a.bool("shareProcess") : builtin != null,
          a.has("writable") ? writable(a, Path.of(dataDir)) : List.of()));
    }
    String defaultAgent = root.string("defaultAgent");
    Map<String, Attention.Spec> attentionByAgent = new LinkedHashMap<>();
    Map<String, Set<String>> fourEyes = new LinkedHashMap<>();
    for (Node a : agentNodes) {
      if (a.has("attention")) {
        attentionByAgent.put(a.string("id"), attention(a.object("attention")));
      }
      if (a.has("fourEyes")) {
        List<String> kinds = a.strings("fourEyes");
        for (int i = 0; i < kinds.size(); i++) {
          if (!io.switchboard.people.Roles.KINDS.contains(kinds.get(i))) {
            throw new ConfigException(a.key("fourEyes") + "[" + i + "]", "\"" + kinds.get(i)
                + "\" is no kind of tool call; one of " + io.switchboard.people.Roles.KINDS);
          }
        }
        fourEyes.put(a.string("id"), Set.copyOf(kinds));
      }
    }
    if (!agentIds.contains(defaultAgent)) {
      throw new ConfigException("defaultAgent", "names no configured agent: \"" + defaultAgent + "\"");
    }

    Settings.Cluster cluster = root.has("cluster") ? cluster(root.object("cluster"), Path.of(dataDir)) : null;
    boolean edge = cluster != null && !cluster.runsAgents();
    List<PluginSpec> plugins = new ArrayList<>();
    Set<String> pluginIds = new HashSet<>();
    for (Node p : root.objects("plugins")) {
      String id = p.string("id");
      if (id.equals("web")) {
        throw new ConfigException(p.key("id"), "\"web\" is the browser's surface; name the plugin otherwise");
      }
      if (!pluginIds.add(id)) {
        throw new ConfigException(p.key("id"), "duplicate plugin id \"" + id + "\"");
      }
      String agent = p.has("agent") ? p.string("agent") : null;
      // An edge node's agents are the agent node's: that node refuses a thread for one it lacks.
      if (agent != null && !agentIds.contains(agent) && !edge) {
        throw new ConfigException(p.key("agent"), "names no configured agent: \"" + agent + "\"");
      }
      plugins.add(new PluginSpec(id, p.has("dialect") ? p.string("dialect") : "acp", p.strings("command"),
          p.has("cwd") ? p.path("cwd") : null, p.env("env"),
          p.has("config") ? p.object("config").json : null,
          p.has("approvers") ? p.strings("approvers") : null, agent,
          p.has("cardsInGroups") && p.bool("cardsInGroups"),
          p.has("users") ? p.strings("users") : null, p.has("requireLinked") && p.bool("requireLinked")));
    }

    if (cluster != null && cluster.runsAgents() && !plugins.isEmpty()) {
      throw new ConfigException("plugins", "plugins run on the edge node of a cluster: configure them there, not on "
          + "agent node \"" + cluster.node() + "\"");
    }

    List<ProjectSpec> projects = new ArrayList<>();
    if (root.has("projects")) {
      List<String> agentOrder = agents.stream().map(AgentSpec::id).toList();
      for (Node p : root.objects("projects")) {
        projects.add(project(p, projects, Path.of(dataDir), agentOrder, edge));
      }
    }
    String defaultProject = null;
    if (root.has("defaultProject")) {
      defaultProject = root.string("defaultProject");
      String wanted = defaultProject;
      if (projects.stream().noneMatch(p -> p.id().equals(wanted))) {
        throw new ConfigException("defaultProject", "names no configured project: \"" + defaultProject + "\" ("
            + (projects.isEmpty() ? "\"projects\" lists none" : "configured: "
                + String.join(", ", projects.stream().map(ProjectSpec::id).toList())) + ")");
      }
    }
    Map<String, Attention.Spec> attentionByProject = new LinkedHashMap<>();
    if (root.has("projects")) {
      for (Node p : root.objects("projects")) {
        if (p.has("attention")) {
          attentionByProject.put(p.string("id"), attention(p.object("attention")));
        }
      }
    }
    Attention attention = new Attention(root.has("attention") ? attention(root.object("attention")) : null,
        attentionByAgent, attentionByProject);
    if (cluster == null) {
      checkEscalations(attention, pluginIds); // a cluster's plugins are configured on its edge node
    }
    // An edge node's agents and projects are the agent node's (which decides by rules): not checked here.
    Set<String> projectIds = edge ? null : new HashSet<>(projects.stream().map(ProjectSpec::id).toList());
    List<io.switchboard.rules.Rule> rules = root.has("rules")
        ? rules(root.objects("rules"), edge ? null : agentIds, projectIds) : List.of();
    return new Settings(new Settings.Http(host, port, origins, publicMetrics, allowedHosts, sessionLifetime),
        Path.of(dataDir),
        defaultAgent, agents, plugins,
        logFormat.equals("json") ? Settings.LogFormat.JSON : Settings.LogFormat.TEXT, agentProcesses, cluster,
        projects, defaultProject, attention).withRules(rules).withPeople(new Settings.People(fourEyes));
  }

  /**
   * {@code rules[]}: each a rule ({@code RuleSpecs}: checked, its examples run) or {@code {"preset":
   * "readWorktree"}} / {@code {"preset": "safeCommands", "testCommand": [...]}}; ids unique. The
   * agents and projects a rule names must be configured ({@code agentIds}, {@code projectIds}; null:
   * not known here): one that names none of them never matches.
   */
  private static List<io.switchboard.rules.Rule> rules(List<Node> nodes, Set<String> agentIds, Set<String> projectIds)
      throws ConfigException {
    List<io.switchboard.rules.Rule> out = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (Node n : nodes) {
      List<io.switchboard.rules.Rule> made;
      try {
        if (n.has("preset")) {
          Map<String, List<String>> projectTests = new LinkedHashMap<>();
          if (n.has("projectTests")) {
            Node tests = n.object("projectTests");
            for (String project : tests.json.fieldNames()) {
              if (projectIds != null && !projectIds.contains(project)) {
                throw new ConfigException(tests.key(project), "names no configured project (configured: "
                    + (projectIds.isEmpty() ? "none" : String.join(", ", projectIds.stream().sorted().toList()))
                    + "), so its test command could never be allowed");
              }
              projectTests.put(project, tests.strings(project));
            }
          }
          made = io.switchboard.rules.Presets.of(n.string("preset"),
              n.has("testCommand") ? n.strings("testCommand") : List.of(), projectTests);
        } else {
          made = List.of(io.switchboard.rules.RuleSpecs.fromConfig(n.json));
        }
      } catch (IllegalArgumentException e) {
        int colon = e.getMessage().indexOf(':');
        String field = colon > 0 && !e.getMessage().substring(0, colon).contains(" ")
            ? e.getMessage().substring(0, colon) : null;
        throw new ConfigException(field == null ? n.path : n.key(field.replaceAll("\\[.*", "")),
            field == null ? e.getMessage() : e.getMessage().substring(colon + 1).trim());
      }
      for (io.switchboard.rules.Rule r : made) {
        checkNamed(n, "agents", r.match().agents(), agentIds, "agent");
        checkNamed(n, "projects", r.match().projects(), projectIds, "project");
        if (r.scope().kind().equals("agent") || r.scope().kind().equals("project")) {
          checkNamed(n, "scope." + r.scope().kind(), List.of(r.scope().id()),
              r.scope().kind().equals("agent") ? agentIds : projectIds, r.scope().kind());
        }
        if (!ids.add(r.id())) {
          throw new ConfigException(n.key(n.has("preset") ? "preset" : "id"), "duplicate rule id \"" + r.id() + "\"");
        }
        out.add(r);
      }
    }
    return out;
  }

  /** Each of a rule's {@code named} agents or projects must be one of {@code configured} (null: unknown here). */
  private static void checkNamed(Node rule, String field, List<String> named, Set<String> configured, String what)
      throws ConfigException {
    if (configured == null) {
      return;
    }
    for (int i = 0; i < named.size(); i++) {
      if (!configured.contains(named.get(i))) {
        throw new ConfigException(rule.key(field) + (field.startsWith("scope") ? "" : "[" + i + "]"), "names no "
            + "configured " + what + ": \"" + named.get(i) + "\" (" + (configured.isEmpty() ? "none is configured"
            : "configured: " + String.join(", ", configured.stream().sorted().toList())) + "), so this rule could "
            + "never match");
      }
    }
  }

  /** One {@code attention} object (top level, an agent's or a project's); absent keys are left to the level below. */
  private static Attention.Spec attention(Node n) throws ConfigException {
    Attention.OnExpiry onExpiry = n.has("onExpiry") ? Attention.OnExpiry.parse(n.string("onExpiry")) : null;
    List<String> escalateTo = n.has("escalateTo") ? n.strings("escalateTo") : null;
    Attention.QuietHours quiet = null;
    if (n.has("quietHours")) {
      Node q = n.object("quietHours");
      java.time.ZoneId zone = java.time.ZoneId.systemDefault();
      if (q.has("zone")) {
        try {
          zone = java.time.ZoneId.of(q.string("zone"));
        } catch (java.time.DateTimeException e) {
          throw new ConfigException(q.key("zone"), "is not a time zone like Europe/Berlin: " + e.getMessage());
        }
      }
      quiet = new Attention.QuietHours(clock(q, "from"), clock(q, "to"), zone);
      if (quiet.from().equals(quiet.to())) {
        throw new ConfigException(q.key("to"), "must differ from \"from\" (quiet hours of no length, or of all day?)");
      }
    }
    Long deadline = duration(n, "deadline");
    Long escalate = duration(n, "escalateAfter");
    if (deadline != null && deadline > 0 && deadline < 10_000) {
      throw new ConfigException(n.key("deadline"), "must be at least 10s: a person needs time to read the card");
    }
    return new Attention.Spec(duration(n, "remindAfter"), escalate, escalateTo, deadline, onExpiry, quiet);
  }

  /** A duration's form is the schema's; its value (at most 30 days) is {@link Durations}'. */
  private static Long duration(Node n, String name) throws ConfigException {
    if (!n.has(name)) {
      return null;
    }
    try {
      return Durations.parse(n.string(name));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(n.key(name), e.getMessage());
    }
  }

  private static java.time.LocalTime clock(Node n, String name) throws ConfigException {
    String s = n.string(name);
    try {
      return java.time.LocalTime.parse(s);
    } catch (java.time.format.DateTimeParseException e) {
      throw new ConfigException(n.key(name), "must be a time of day like \"22:00\", got \"" + s + "\"");
    }
  }

  /** An escalation to a chat of no configured plugin would never be seen: said at start, not at 3 a.m. */
  private static void checkEscalations(Attention attention, Set<String> pluginIds) throws ConfigException {
    List<Map.Entry<String, Attention.Spec>> all = new ArrayList<>();
    all.add(Map.entry("attention", attention.defaults()));
    attention.byAgent().forEach((id, s) -> all.add(Map.entry("agents[" + id + "].attention", s)));
    attention.byProject().forEach((id, s) -> all.add(Map.entry("projects[" + id + "].attention", s)));
    for (Map.Entry<String, Attention.Spec> e : all) {
      List<String> to = e.getValue().escalateTo();
      for (int i = 0; to != null && i < to.size(); i++) {
        String plugin = to.get(i).substring(0, to.get(i).indexOf(':'));
        if (!pluginIds.contains(plugin)) {
          throw new ConfigException(e.getKey() + ".escalateTo[" + i + "]", "names no configured plugin: \"" + plugin
              + "\"");
        }
      }
    }
  }

  /**
   * One {@code projects[]} entry. Its directory is compared on its real path (symbolic links
   * resolved) with the data directory and with the projects before it ({@code earlier}).
   */
  private static ProjectSpec project(Node p, List<ProjectSpec> earlier, Path dataDir, List<String> agentIds,
                                     boolean edge) throws ConfigException {
    String id = p.string("id");
    for (ProjectSpec e : earlier) {
      if (e.id().equals(id)) {
        throw new ConfigException(p.key("id"), "duplicate project id \"" + id + "\"");
      }
    }
    String name = p.has("name") ? p.string("name") : id;

    String given = p.path("path");
    Path path = Path.of(given);
    if (!path.isAbsolute()) {
      throw new ConfigException(p.key("path"), "must be an absolute path, got \"" + given + "\"");
    }
    if (!Files.exists(path)) {
      throw new ConfigException(p.key("path"), given + " does not exist");
    }
    if (!Files.isDirectory(path)) {
      throw new ConfigException(p.key("path"), given + " is not a directory");
    }
    Path real;
    try {
      real = path.toRealPath();
    } catch (IOException e) {
      throw new ConfigException(p.key("path"), "cannot resolve " + given + ": " + e.getMessage());
    }
    Path data = dataDir.toAbsolutePath().normalize();
    for (Path d : new LinkedHashSet<>(List.of(data, realPrefix(data)))) {
      if (real.startsWith(d)) {
        throw new ConfigException(p.key("path"), real + " is inside the data directory " + data + ": the agent's "
            + "sandbox hides the data directory (the token and the database live there), so an agent could not "
            + "see its project; keep projects outside dataDir");
      }
      if (d.startsWith(real)) {
        throw new ConfigException(p.key("path"), real + " contains the data directory " + data + ": the agent's "
            + "sandbox hides the data directory (the token and the database live there), which would cut a hole "
            + "into the project; move dataDir out of the project");
      }
    }
    for (ProjectSpec e : earlier) {
      if (real.startsWith(e.path()) || e.path().startsWith(real)) {
        throw new ConfigException(p.key("path"), "overlaps project " + e.id() + " (" + e.path() + "): two "
            + "projects may not share a directory, nor lie one inside the other");
      }
    }

    List<String> agents = p.has("agents") ? p.strings("agents") : List.of();
    if (!edge) { // an edge node's agents are the agent node's (as for plugins[].agent)
      for (int i = 0; i < agents.size(); i++) {
        if (!agentIds.contains(agents.get(i))) {
          throw new ConfigException(p.key("agents") + "[" + i + "]", "names no configured agent: \""
              + agents.get(i) + "\" (configured: " + String.join(", ", agentIds) + ")");
        }
      }
    }

    boolean git = Files.exists(real.resolve(".git"), java.nio.file.LinkOption.NOFOLLOW_LINKS);
    ProjectSpec.Worktrees worktrees = git ? ProjectSpec.Worktrees.PER_THREAD : ProjectSpec.Worktrees.SHARED;
    if (p.has("worktrees")) {
      String w = p.string("worktrees");
      for (ProjectSpec.Worktrees candidate : ProjectSpec.Worktrees.values()) {
        if (candidate.key.equals(w)) {
          worktrees = candidate;
        }
      }
      if (worktrees == ProjectSpec.Worktrees.PER_THREAD && !git) {
        throw new ConfigException(p.key("worktrees"), "perThread needs a git repository; " + real
            + " has no .git (use \"shared\", or git init it)");
      }
    }

    String baseBranch = null;
    if (p.has("baseBranch")) {
      baseBranch = p.string("baseBranch");
      String wrong = branchProblem(baseBranch);
      if (wrong != null) {
        throw new ConfigException(p.key("baseBranch"), "is not a usable branch name (" + wrong + "), got \""
            + baseBranch + "\"");
      }
    }

    JsonArray mcpServers = new JsonArray();
    if (p.has("mcpServers")) {
      for (Node m : p.objects("mcpServers")) {
        mcpServers.add(mcpServer(m));
      }
    }

    List<String> copyFiles = p.has("copyFiles") ? p.strings("copyFiles") : List.of();
    for (int i = 0; i < copyFiles.size(); i++) {
      String f = copyFiles.get(i);
      String at = p.key("copyFiles") + "[" + i + "]";
      try {
        Path.of(f);
      } catch (java.nio.file.InvalidPathException e) {
        throw new ConfigException(at, "is not a valid path: " + e.getReason());
      }
      if (f.startsWith("/") || Path.of(f).isAbsolute()) {
        throw new ConfigException(at, "must be a path relative to the project's directory, got \"" + f + "\"");
      }
      for (String segment : f.split("/")) {
        if (segment.equals("..")) {
          throw new ConfigException(at, "must stay inside the project's directory (no \"..\"), got \"" + f + "\"");
        }
      }
    }
    List<String> setup = p.has("setup") ? p.strings("setup") : List.of();
    return new ProjectSpec(id, name, real, agents, worktrees, baseBranch, mcpServers, copyFiles, setup);
  }

  /**
   * {@code agents[].writable}: absolute paths its sandbox lets the agent write, none inside the data
   * directory (the sandbox hides it: the token and the database live there) nor containing it.
   */
  private static List<Path> writable(Node a, Path dataDir) throws ConfigException {
    List<String> given = a.strings("writable");
    Path data = dataDir.toAbsolutePath().normalize();
    List<Path> out = new ArrayList<>();
    for (int i = 0; i < given.size(); i++) {
      String at = a.key("writable") + "[" + i + "]";
      Path path;
      try {
        path = Path.of(given.get(i));
      } catch (java.nio.file.InvalidPathException e) {
        throw new ConfigException(at, "is not a valid path: " + e.getReason());
      }
      if (!path.isAbsolute()) {
        throw new ConfigException(at, "must be an absolute path, got \"" + given.get(i) + "\"");
      }
      path = path.normalize();
      for (Path d : new LinkedHashSet<>(List.of(data, realPrefix(data)))) {
        if (path.startsWith(d) || realPrefix(path).startsWith(d)) {
          throw new ConfigException(at, path + " is inside the data directory " + data + ": the agent's sandbox "
              + "hides the data directory (the token and the database live there); name a folder outside it");
        }
        if (d.startsWith(path) || d.startsWith(realPrefix(path))) {
          throw new ConfigException(at, path + " contains the data directory " + data + ": an agent that could "
              + "write there could move the data directory aside and put a token and a database of its own in its "
              + "place; name a folder beside it");
        }
      }
      out.add(path);
    }
    return out;
  }

  /** The real path of {@code path}'s longest existing prefix, with the rest appended (it may not exist yet). */
  private static Path realPrefix(Path path) {
    Path rest = Path.of("");
    for (Path at = path; at != null; at = at.getParent()) {
      try {
        return at.toRealPath().resolve(rest).normalize();
      } catch (IOException e) {
        rest = at.getFileName() == null ? rest : at.getFileName().resolve(rest);
      }
    }
    return path;
  }

  /** Why {@code name} is not a plausible git branch name (git check-ref-format's main rules), or null. */
  private static String branchProblem(String name) {
    if (name.startsWith("-")) {
      return "starts with '-'";
    }
    if (name.contains("..")) {
      return "contains \"..\"";
    }
    if (name.contains("@{")) {
      return "contains \"@{\"";
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        return "contains a control character";
      }
      if (c == ' ') {
        return "contains a space";
      }
      if ("~^:?*[\\".indexOf(c) >= 0) {
        return "contains '" + c + "'";
      }
    }
    if (name.startsWith("/") || name.endsWith("/") || name.contains("//")) {
      return "has an empty part between '/'";
    }
    if (name.endsWith(".") || name.endsWith(".lock") || name.equals("@")) {
      return "ends with '.' or \".lock\", or is \"@\"";
    }
    return null;
  }

  /**
   * One {@code mcpServers[]} entry, in ACP's {@code session/new} form: a stdio server ({@code command},
   * {@code args}, {@code env}) or an http/sse one ({@code type}, {@code url}, {@code headers}); the
   * schema checks both. The object is kept as given, with the lists ACP requires filled in empty
   * where left out.
   */
  private static JsonObject mcpServer(Node m) {
    JsonObject out = m.json.copy();
    String type = m.has("type") ? m.string("type") : "stdio";
    for (String list : type.equals("stdio") ? List.of("args", "env") : List.of("headers")) {
      if (!m.has(list)) {
        out.put(list, new JsonArray());
      }
    }
    return out;
  }

  private static Settings.Cluster cluster(Node c, Path dataDir) throws ConfigException {
    int port = c.has("port") ? c.integer("port") : Settings.Cluster.DEFAULT_PORT;
    int busPort = c.has("busPort") ? c.integer("busPort") : Settings.Cluster.DEFAULT_BUS_PORT;
    if (busPort == port) {
      throw new ConfigException(c.key("busPort"), "must differ from cluster.port (" + port + ")");
    }
    return new Settings.Cluster(c.string("node"),
        c.string("role").equals("agent") ? Settings.Cluster.Role.AGENT : Settings.Cluster.Role.EDGE,
        c.string("host"), port, busPort, c.strings("members"),
        c.has("memberTimeoutSeconds") ? c.integer("memberTimeoutSeconds") : Settings.Cluster.DEFAULT_MEMBER_TIMEOUT_SECONDS,
        c.has("edgeGraceSeconds") ? c.integer("edgeGraceSeconds") : Settings.Cluster.DEFAULT_EDGE_GRACE_SECONDS,
        c.has("tlsDir") ? Path.of(c.path("tlsDir")) : dataDir.resolve(Settings.Cluster.DEFAULT_TLS_DIR));
  }

  /**
   * A JSON object at a key path, read after {@link ConfigSchema} has checked the tree: the readers
   * cast, since the schema has made sure of each type (a null counts as absent, as there).
   */
  private record Node(String path, JsonObject json) {
    String key(String name) {
      return path.isEmpty() ? name : path + "." + name;
    }

    boolean has(String name) {
      return json.getValue(name) != null;
    }

    String string(String name) {
      return json.getString(name);
    }

    /** A path this system can name (the schema only knows it is not blank). */
    String path(String name) throws ConfigException {
      String s = string(name);
      try {
        Path.of(s);
      } catch (java.nio.file.InvalidPathException e) {
        throw new ConfigException(key(name), "is not a valid path: " + e.getReason());
      }
      return s;
    }

    int integer(String name) {
      return ((Number) json.getValue(name)).intValue();
    }

    boolean bool(String name) {
      return json.getBoolean(name);
    }

    Node object(String name) {
      return new Node(key(name), json.getJsonObject(name));
    }

    List<String> strings(String name) {
      List<String> out = new ArrayList<>();
      for (Object item : json.getJsonArray(name)) {
        out.add((String) item);
      }
      return out;
    }

    List<Node> objects(String name) {
      JsonArray a = json.getJsonArray(name);
      List<Node> out = new ArrayList<>();
      for (int i = 0; i < a.size(); i++) {
        out.add(new Node(key(name) + "[" + i + "]", a.getJsonObject(i)));
      }
      return out;
    }

    Map<String, String> env(String name) {
      if (!has(name)) {
        return Map.of();
      }
      Map<String, String> out = new LinkedHashMap<>();
      json.getJsonObject(name).forEach(e -> out.put(e.getKey(), (String) e.getValue()));
      return out;
    }
  }
}
