package io.switchboard.config;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** The gateway's whole configuration after file, environment and flags were merged and checked. */
public record Settings(Http http, Path dataDir, String defaultAgent, List<AgentSpec> agents,
                       List<PluginSpec> plugins, LogFormat logFormat, AgentProcesses agentProcesses,
                       Cluster cluster, List<ProjectSpec> projects, String defaultProject, Attention attention,
                       List<io.switchboard.rules.Rule> rules, People people) {

  /**
   * How people are judged beyond their roles: {@code fourEyes}, per agent id ({@code *}: every
   * agent), the kinds of tool call the person who prompted a turn may not approve themselves.
   */
  public record People(java.util.Map<String, java.util.Set<String>> fourEyes) {
    public static final People DEFAULT = new People(java.util.Map.of());

    public People {
      fourEyes = java.util.Map.copyOf(fourEyes);
    }

    /** The kinds the prompter of a turn of {@code agentId} may not approve. */
    public java.util.Set<String> fourEyesKinds(String agentId) {
      java.util.Set<String> kinds = new java.util.TreeSet<>(fourEyes.getOrDefault("*", java.util.Set.of()));
      if (agentId != null) {
        kinds.addAll(fourEyes.getOrDefault(agentId, java.util.Set.of()));
      }
      return kinds;
    }
  }

  /** With the default people settings (no four-eyes rule). */
  public Settings(Http http, Path dataDir, String defaultAgent, List<AgentSpec> agents, List<PluginSpec> plugins,
                  LogFormat logFormat, AgentProcesses agentProcesses, Cluster cluster, List<ProjectSpec> projects,
                  String defaultProject, Attention attention, List<io.switchboard.rules.Rule> rules) {
    this(http, dataDir, defaultAgent, agents, plugins, logFormat, agentProcesses, cluster, projects, defaultProject,
        attention, rules, People.DEFAULT);
  }

  public Settings withPeople(People p) {
    return new Settings(http, dataDir, defaultAgent, agents, plugins, logFormat, agentProcesses, cluster, projects,
        defaultProject, attention, rules, p);
  }

  /** With no rules of its own: every request asks a person (grants made later live in the database). */
  public Settings(Http http, Path dataDir, String defaultAgent, List<AgentSpec> agents, List<PluginSpec> plugins,
                  LogFormat logFormat, AgentProcesses agentProcesses, Cluster cluster, List<ProjectSpec> projects,
                  String defaultProject, Attention attention) {
    this(http, dataDir, defaultAgent, agents, plugins, logFormat, agentProcesses, cluster, projects, defaultProject,
        attention, List.of());
  }

  public Settings withRules(List<io.switchboard.rules.Rule> r) {
    return new Settings(http, dataDir, defaultAgent, agents, plugins, logFormat, agentProcesses, cluster, projects,
        defaultProject, attention, r, people);
  }

  /** With the default attention settings (reminders after five minutes, no deadlines). */
  public Settings(Http http, Path dataDir, String defaultAgent, List<AgentSpec> agents, List<PluginSpec> plugins,
                  LogFormat logFormat, AgentProcesses agentProcesses, Cluster cluster, List<ProjectSpec> projects,
                  String defaultProject) {
    this(http, dataDir, defaultAgent, agents, plugins, logFormat, agentProcesses, cluster, projects, defaultProject,
        Attention.DEFAULT);
  }

  public Settings withAttention(Attention a) {
    return new Settings(http, dataDir, defaultAgent, agents, plugins, logFormat, agentProcesses, cluster, projects,
        defaultProject, a, rules, people);
  }

  /** With no projects: every thread works in a scratch workspace of its own. */
  public Settings(Http http, Path dataDir, String defaultAgent, List<AgentSpec> agents, List<PluginSpec> plugins,
                  LogFormat logFormat, AgentProcesses agentProcesses, Cluster cluster) {
    this(http, dataDir, defaultAgent, agents, plugins, logFormat, agentProcesses, cluster, List.of(), null);
  }

  /** Not clustered: one JVM runs every room. */
  public Settings(Http http, Path dataDir, String defaultAgent, List<AgentSpec> agents, List<PluginSpec> plugins,
                  LogFormat logFormat, AgentProcesses agentProcesses) {
    this(http, dataDir, defaultAgent, agents, plugins, logFormat, agentProcesses, null);
  }

  /** With the default agent-process limits for this host. */
  public Settings(Http http, Path dataDir, String defaultAgent, List<AgentSpec> agents, List<PluginSpec> plugins,
                  LogFormat logFormat) {
    this(http, dataDir, defaultAgent, agents, plugins, logFormat, AgentProcesses.defaults());
  }

  /**
   * How many agent processes may run at once (all agents together; {@code agents[].maxProcesses}
   * caps one agent further), and after how long without a turn or a question an agent is stopped.
   */
  public record AgentProcesses(int max, long idleStopMs) {
    public static final long DEFAULT_IDLE_STOP_MS = 10 * 60_000;

    /** One agent process per 512 MiB of the host's memory, at least 2 and at most 64. */
    public static int defaultMax() {
      long total = 0;
      if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
          instanceof com.sun.management.OperatingSystemMXBean os) {
        total = os.getTotalMemorySize(); // the container's limit where there is one
      }
      return (int) Math.max(2, Math.min(64, total / (512L << 20)));
    }

    public static AgentProcesses defaults() {
      return new AgentProcesses(defaultMax(), DEFAULT_IDLE_STOP_MS);
    }
  }

  /**
   * The HTTP listener. {@code port} 0 picks a free port. {@code sessionLifetimeMs}: how long a
   * browser login lasts (its cookie's Max-Age; the server ends it then too).
   */
  public record Http(String host, int port, List<String> allowedOrigins, boolean publicMetrics,
                     List<String> allowedHosts, long sessionLifetimeMs) {
    /** A login lasts a week unless {@code http.sessionLifetime} says otherwise. */
    public static final long DEFAULT_SESSION_LIFETIME_MS = 7L * 24 * 3600 * 1000;

    public Http {
      allowedOrigins = List.copyOf(allowedOrigins);
      allowedHosts = allowedHosts == null ? List.of() : List.copyOf(allowedHosts);
      if (sessionLifetimeMs <= 0) {
        throw new IllegalArgumentException("sessionLifetimeMs must be positive");
      }
    }

    /** Logins of the default lifetime. */
    public Http(String host, int port, List<String> allowedOrigins, boolean publicMetrics, List<String> allowedHosts) {
      this(host, port, allowedOrigins, publicMetrics, allowedHosts, DEFAULT_SESSION_LIFETIME_MS);
    }

    /** With no extra host names. */
    public Http(String host, int port, List<String> allowedOrigins, boolean publicMetrics) {
      this(host, port, allowedOrigins, publicMetrics, List.of());
    }
  }

  public enum LogFormat { TEXT, JSON }

  /**
   * Cluster mode (docs/operations.md, "Cluster"): this node's name and role, the address it binds
   * and announces for the cluster's membership ({@code port}) and the event bus ({@code busPort}),
   * the members to join, after how long without a heartbeat a member is declared gone, and how long
   * an agent node keeps its pending permission requests while no edge node (no surface) is a member.
   *
   * @param tlsDir this node's certificate folder (ca.crt, node.crt, node.key) for the event bus's mutual
   *     TLS; null only in benchmarks that measure the plain bus beside it
   */
  public record Cluster(String node, Role role, String host, int port, int busPort, List<String> members,
                        int memberTimeoutSeconds, int edgeGraceSeconds, java.nio.file.Path tlsDir) {
    /** Under the data directory unless {@code cluster.tlsDir} says otherwise. */
    public static final String DEFAULT_TLS_DIR = "cluster-tls";
    public static final int DEFAULT_PORT = 5701;
    public static final int DEFAULT_BUS_PORT = 5801;
    public static final int DEFAULT_MEMBER_TIMEOUT_SECONDS = 5;
    public static final int DEFAULT_EDGE_GRACE_SECONDS = 60;

    /** An agent node runs the store, permission, thread and agent rooms; an edge the web and plugin rooms. */
    public enum Role { AGENT, EDGE }

    public Cluster {
      members = List.copyOf(members);
      tlsDir = tlsDir == null ? null : tlsDir.toAbsolutePath().normalize();
    }

    public boolean runsAgents() {
      return role == Role.AGENT;
    }
  }

  /** Whether this JVM runs the agent side (the store, permission, thread and agent rooms). */
  public boolean runsAgents() {
    return cluster == null || cluster.runsAgents();
  }

  /** Whether this JVM runs the surfaces (the web and plugin rooms). */
  public boolean runsSurfaces() {
    return cluster == null || !cluster.runsAgents();
  }

  public Settings {
    dataDir = dataDir.toAbsolutePath().normalize();
    agents = List.copyOf(agents);
    plugins = List.copyOf(plugins);
    agentProcesses = agentProcesses == null ? AgentProcesses.defaults() : agentProcesses;
    projects = projects == null ? List.of() : List.copyOf(projects);
    attention = attention == null ? Attention.DEFAULT : attention;
    rules = rules == null ? List.of() : List.copyOf(rules);
    people = people == null ? People.DEFAULT : people;
  }

  public Optional<ProjectSpec> project(String id) {
    return projects.stream().filter(p -> p.id().equals(id)).findFirst();
  }

  /** Where the gateway keeps the threads' git worktrees: its own directory, outside every repository. */
  public Path worktreesDir() {
    return dataDir.resolve("worktrees");
  }

  /**
   * The gateway's own temporary files (git's scratch indexes, sqlite-jdbc's native library, the
   * JVM's temporary folder): inside the data directory, which no agent's sandbox shows, never the
   * host's shared temporary folder, where an agent could swap them (issue 42).
   */
  public Path tempDir() {
    return dataDir.resolve("tmp");
  }

  public Optional<AgentSpec> agent(String id) {
    return agents.stream().filter(a -> a.id().equals(id)).findFirst();
  }

  public Path databaseFile() {
    return dataDir.resolve("switchboard.db");
  }

  public Path tokenFile() {
    return dataDir.resolve("token");
  }
}
