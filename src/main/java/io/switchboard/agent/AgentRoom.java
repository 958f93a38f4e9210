package io.switchboard.agent;

import io.switchboard.agent.demo.DemoAgent;
import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.bus.NodeScope;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.Limits;
import io.switchboard.config.ProjectSpec;
import io.switchboard.config.Settings;
import io.switchboard.process.ProcessTree;
import io.switchboard.process.Sandbox;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.File;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent room: one ACP client ({@link AgentSession}) per thread, served by agent processes the
 * {@link AgentPool} hands out within its caps. It hears prompts and cancels for threads from the
 * thread room, and stops every agent when the gateway stops.
 */
public final class AgentRoom extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(AgentRoom.class);
  /** How long an agent may take to start, and to end a turn after {@code session/cancel}. */
  public record Timings(long startTimeoutMs, long cancelGraceMs) {
    public static final Timings DEFAULT = new Timings(60_000, 10_000);
  }

  private final Settings settings;
  private final Timings timings;
  private AgentPool pool;
  private final Turns turns = new Turns();
  private final Backlog backlog;
  private long generations;
  private final java.util.concurrent.Callable<String> sandboxProbe;
  /** What the room's sessions share; made at start, once the sandbox was tried. */
  private AgentSession.Shared shared;
  /** Why bwrap cannot run here (null: it can), found at start. */
  private String sandboxProblem;
  private final String owner;
  private final Limits limits;

  /** How many turns began and ended, across threads (read by /metrics). */
  static final class Turns {
    long started;
    long ended;
  }

  /** Without a limit on open permission questions (tests that do not need one). */
  public AgentRoom(Settings settings, Timings timings) {
    this(settings, timings, Integer.MAX_VALUE);
  }

  /** {@code maxQuestions}: the permission questions its agents may have open at once, in all. */
  public AgentRoom(Settings settings, Timings timings, int maxQuestions) {
    this(settings, timings, Limits.ofThisJvm(), maxQuestions, Sandbox::probe);
  }

  /**
   * {@code limits}: the memory bounds its agents are held to; {@code sandboxProbe}: why agents
   * cannot be sandboxed here (null: they can); blocking.
   */
  public AgentRoom(Settings settings, Timings timings, Limits limits, int maxQuestions,
                   java.util.concurrent.Callable<String> sandboxProbe) {
    this.sandboxProbe = sandboxProbe;
    this.settings = settings;
    this.timings = timings;
    this.limits = limits;
    this.backlog = new Backlog(maxQuestions, limits.terminalsBytes(), limits.promptImageBytes());
    this.owner = ProcessTree.ownerOf(settings.dataDir());
  }

  /** Where this room serves its commands (a cluster node's own addresses; see NodeScope). */
  private NodeScope scope = NodeScope.SINGLE;

  @Override
  public Future<?> start() {
    scope = NodeScope.of(config());
    // Whether agents can be sandboxed here is decided once, and said: never a silent fallback.
    return vertx.<String>executeBlocking(sandboxProbe, false).onSuccess(problem -> {
      sandboxProblem = problem;
      pool = new AgentPool(context, settings, limits, owner, () -> deploymentID() + "/" + (++generations),
          timings.startTimeoutMs());
      shared = new AgentSession.Shared(timings, limits, turns, backlog, pool, owner, settings.dataDir(), problem);
      boolean wanted = settings.agents().stream().anyMatch(a -> a.sandbox() != Sandbox.Mode.NONE);
      if (problem == null) {
        log.info("agents run in a bubblewrap sandbox (unless an agent's \"sandbox\" is \"none\")");
      } else if (wanted) {
        log.warn("agents cannot be sandboxed here: {}; agents with \"sandbox\": \"auto\" run unconfined, those "
            + "with \"bwrap\" will not start", problem);
      }
      listen();
    });
  }

  private void listen() {
    var bus = vertx.eventBus();
    scope.<JsonObject>serve(bus, Addresses.AGENT_PROMPT, this::prompt);
    scope.<JsonObject>serve(bus, Addresses.AGENT_CANCEL, m -> withThreadId(m, id -> {
      AgentSession s = pool.session(id);
      m.reply(new JsonObject().put("cancelled", s != null && s.cancel()));
    }));
    scope.<JsonObject>serve(bus, Addresses.AGENT_STOP, m -> withThreadId(m, id ->
        pool.remove(id, Boolean.TRUE.equals(m.body().getValue("delete"))).onComplete(x -> m.reply(new JsonObject()))));
    scope.<JsonObject>serve(bus, Addresses.AGENT_STATUS, this::status);
    scope.<JsonObject>serve(bus, Addresses.AGENT_SESSIONS, this::sessions);
    scope.<JsonObject>serve(bus, Addresses.AGENT_LOGOUT, this::logout);
    scope.<JsonObject>serve(bus, Addresses.AGENT_OPEN, m -> {
      AgentSession session = sessionFor(m, "acpSessionId", "opening a session");
      if (session == null) {
        return;
      }
      if (Boolean.TRUE.equals(m.body().getValue("importHistory"))) {
        session.importHistory();
      }
      session.ensureStarted().onSuccess(v -> m.reply(new JsonObject()))
          .onFailure(err -> ErrorCode.UNAVAILABLE.fail(m, err.getMessage()));
    });
    scope.<JsonObject>serve(bus, Addresses.AGENT_SET_MODE, this::setMode);
    scope.<JsonObject>serve(bus, Addresses.AGENT_SET_CONFIG, m -> {
      AgentSession session = sessionFor(m, "configId", "a setting change");
      if (session != null && m.body().getValue("value") instanceof String value) {
        session.options().setConfig(m.body().getString("configId"), value).onSuccess(v -> m.reply(new JsonObject()))
            .onFailure(err -> ErrorCode.BAD_REQUEST.fail(m, err.getMessage()));
      } else if (session != null) {
        ErrorCode.BAD_REQUEST.fail(m, "a setting change needs a value (a string)");
      }
    });
  }

  /** The thread's session switches mode: now if its agent runs, else when it next starts. */
  private void setMode(Message<JsonObject> m) {
    AgentSession session = sessionFor(m, "modeId", "a mode change");
    if (session != null) {
      session.options().setMode(m.body().getString("modeId")).onSuccess(v -> m.reply(new JsonObject()))
          .onFailure(err -> ErrorCode.BAD_REQUEST.fail(m, err.getMessage()));
    }
  }

  /**
   * The thread's session (made if it has none) for a command that names threadId, a configured
   * agentId, workspace and the string {@code field}; null when one is missing (the sender is told).
   */
  private AgentSession sessionFor(Message<JsonObject> m, String field, String what) {
    JsonObject b = m.body() == null ? new JsonObject() : m.body();
    String threadId = b.getValue("threadId") instanceof String s && !s.isEmpty() ? s : null;
    AgentSpec spec = b.getValue("agentId") instanceof String agentId ? settings.agent(agentId).orElse(null) : null;
    if (threadId == null || spec == null || !(b.getValue(field) instanceof String)
        || !(b.getValue("workspace") instanceof String)) {
      ErrorCode.BAD_REQUEST.fail(m, what + " needs threadId, a configured agentId, workspace and " + field);
      return null;
    }
    ProjectSpec project = b.getValue("projectId") instanceof String pid ? settings.project(pid).orElse(null) : null;
    if (b.getValue("projectId") != null && project == null) {
      ErrorCode.BAD_REQUEST.fail(m, what + " names project " + b.getValue("projectId") + ", which is not configured");
      return null;
    }
    AgentSession session = pool.sessionFor(threadId, () -> new AgentSession(context, spec, argv(spec),
        threadId, Path.of(b.getString("workspace")), b.getString("acpSessionId"), shared, project));
    if (b.getValue("modeId") instanceof String mode && !field.equals("modeId")) {
      session.options().prefer(mode); // the thread's chosen mode outlives its sessions (idle stops forget them)
    }
    if (b.getValue("config") instanceof JsonObject config) {
      session.options().preferConfig(config);
    }
    return session;
  }

  /** The sessions an agent keeps for a project's folder (ACP session/list), from a process of their own. */
  private void sessions(Message<JsonObject> m) {
    JsonObject b = m.body() == null ? new JsonObject() : m.body();
    AgentSpec spec = b.getValue("agentId") instanceof String id ? settings.agent(id).orElse(null) : null;
    ProjectSpec project = b.getValue("projectId") instanceof String id ? settings.project(id).orElse(null) : null;
    if (spec == null || project == null || !project.allows(spec.id())) {
      ErrorCode.BAD_REQUEST.fail(m, "listing sessions needs a configured agent and a project it may run in (got "
          + b.getValue("agentId") + " in " + b.getValue("projectId") + ")");
      return;
    }
    if (spec.isBuiltin()) {
      m.reply(new JsonObject().put("supported", false).put("sessions", new JsonArray()));
      return;
    }
    String cursor = b.getValue("cursor") instanceof String c ? c : null;
    SessionLister.list(context, spec, argv(spec), project, shared, deploymentID() + "/list-" + (++generations),
            cursor, timings.startTimeoutMs())
        .onSuccess(m::reply)
        .onFailure(err -> ErrorCode.UNAVAILABLE.fail(m, "the agent " + spec.name() + " could not list its sessions: "
            + err.getMessage()));
  }

  /** The agent logs out of its account, from a process of its own (its threads' processes go on as they are). */
  private void logout(Message<JsonObject> m) {
    JsonObject b = m.body() == null ? new JsonObject() : m.body();
    AgentSpec spec = b.getValue("agentId") instanceof String id ? settings.agent(id).orElse(null) : null;
    if (spec == null) {
      ErrorCode.BAD_REQUEST.fail(m, "logging out needs a configured agentId (got " + b.getValue("agentId") + ")");
      return;
    }
    if (spec.isBuiltin()) {
      m.reply(new JsonObject().put("supported", false).put("loggedOut", false));
      return;
    }
    SessionLister.logout(context, spec, argv(spec), shared, deploymentID() + "/logout-" + (++generations),
            timings.startTimeoutMs())
        .onSuccess(m::reply)
        .onFailure(err -> ErrorCode.UNAVAILABLE.fail(m, "the agent " + spec.name() + " could not log out: "
            + err.getMessage()));
  }

  /** Sessions, processes and their memory (read from /proc off the loop), queues, budgets. */
  private void status(Message<JsonObject> m) {
    JsonObject status = pool.status().put("agents", pool.sessionStatus())
        .put("turnsStarted", turns.started).put("turnsEnded", turns.ended)
        .put("backlogBytes", backlog.bytes()).put("permissionsAsked", backlog.asked())
        .put("pausedAgents", backlog.paused()).put("terminalOutputBytes", backlog.terminalOutputReserved())
        .put("sandbox", sandboxProblem == null ? "bwrap" : "unavailable: " + sandboxProblem);
    List<Long> pids = status.getJsonArray("running").stream().map(p -> ((JsonObject) p).getLong("pid"))
        .filter(java.util.Objects::nonNull).toList();
    vertx.executeBlocking(() -> pids.stream().mapToLong(ProcessTree::rssBytes).sum(), false)
        .onComplete(rss -> m.reply(status.put("rssBytes", rss.succeeded() ? rss.result() : 0L)));
  }

  @Override
  public Future<?> stop() {
    return pool == null ? Future.succeededFuture() : pool.close();
  }

  /** A command without a threadId is refused at once: its sender must not wait for a timeout. */
  private static void withThreadId(Message<JsonObject> m, java.util.function.Consumer<String> action) {
    if (!(m.body() != null && m.body().getValue("threadId") instanceof String id) || id.isEmpty()) {
      ErrorCode.BAD_REQUEST.fail(m, m.address() + " needs a threadId (a non-empty string)");
      return;
    }
    action.accept(id);
  }

  private void prompt(Message<JsonObject> m) {
    AgentSession session = sessionFor(m, "text", "a prompt");
    if (session == null) {
      return;
    }
    try {
      JsonArray images = m.body().getValue("images") instanceof JsonArray a ? a : new JsonArray();
      String promptedBy = m.body().getValue("promptedBy") instanceof String who ? who : null;
      m.reply(new JsonObject().put("ahead", session.enqueue(m.body().getString("text"), images, promptedBy)));
    } catch (IllegalArgumentException full) {
      ErrorCode.BUSY.fail(m, full.getMessage());
    } catch (IllegalStateException stopping) {
      ErrorCode.BUSY.fail(m, stopping.getMessage());
    }
  }

  /** The command line of an agent; the built-in demo agent runs from this jar in a JVM of its own. */
  static List<String> argv(AgentSpec spec) {
    if (!spec.isBuiltin()) {
      return spec.command();
    }
    String java = ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // Absolute entries: the agent runs in its thread's workspace, not in our working directory.
    String classpath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .map(entry -> Path.of(entry).toAbsolutePath().toString())
        .collect(Collectors.joining(File.pathSeparator));
    // No perf-data file: in its sandbox every demo agent is pid 2, and they would share /tmp/hsperfdata_<user>/2.
    return List.of(java, "-Xmx48m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-XX:-UsePerfData",
        "-cp", classpath, DemoAgent.class.getName());
  }
}
