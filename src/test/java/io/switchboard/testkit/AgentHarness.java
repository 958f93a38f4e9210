package io.switchboard.testkit;

import static io.switchboard.testkit.PermissionHarness.await;

import io.switchboard.agent.AgentRoom;
import io.switchboard.bus.Addresses;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.Settings;
import io.switchboard.permission.PermissionRoom;
import io.switchboard.store.StoreRoom;
import io.switchboard.thread.ThreadRoom;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.File;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * The rooms that run agents (store, permission, thread, agent) on a real SQLite file, with every
 * thread event and permission card recorded, driven over the event bus like a surface would.
 */
public final class AgentHarness implements AutoCloseable {
  public final Vertx vertx;
  public final Path dataDir;
  private final List<AgentSpec> agents;
  private final AgentRoom.Timings timings;
  private final Deque<String> deployments = new ArrayDeque<>();
  private final List<MessageConsumer<?>> consumers = new ArrayList<>();
  public final List<JsonObject> events = new CopyOnWriteArrayList<>();
  public final List<JsonObject> cards = new CopyOnWriteArrayList<>();
  public final List<JsonObject> ended = new CopyOnWriteArrayList<>();

  public AgentHarness(Vertx vertx, Path dataDir, AgentRoom.Timings timings, AgentSpec... agents) {
    this.vertx = vertx;
    this.dataDir = dataDir;
    this.timings = timings;
    this.agents = List.of(agents);
    consumers.add(vertx.eventBus().<JsonObject>consumer(Addresses.PERMISSION_SHOWN, m -> cards.add(m.body())));
    consumers.add(vertx.eventBus().<JsonObject>consumer(Addresses.PERMISSION_RESOLVED, m -> ended.add(m.body())));
    consumers.add(vertx.eventBus().<JsonObject>consumer(Addresses.PERMISSION_CANCELLED, m -> ended.add(m.body())));
  }

  /** The agent room's limit on open permission questions. */
  public int maxQuestions = Integer.MAX_VALUE;
  /** When set, the agent room believes agents cannot be sandboxed here, for this reason. */
  public String sandboxProblem;

  /** How many agent processes may run and when idle ones stop (null: the defaults). */
  public Settings.AgentProcesses processes;

  public Settings settings() {
    return new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false), dataDir, agents.get(0).id(), agents,
        List.of(), Settings.LogFormat.TEXT, processes);
  }

  public AgentHarness start() {
    Settings settings = settings();
    deployments.push(await(vertx.deployVerticle(new StoreRoom(settings.databaseFile()))));
    deployments.push(await(vertx.deployVerticle(new PermissionRoom())));
    deployments.push(await(vertx.deployVerticle(new ThreadRoom(settings))));
    deployments.push(await(vertx.deployVerticle(sandboxProblem == null ? new AgentRoom(settings, timings, maxQuestions)
        : new AgentRoom(settings, timings, io.switchboard.config.Limits.ofThisJvm(), maxQuestions, () -> sandboxProblem))));
    await(vertx.eventBus().request(Addresses.PERMISSION_ANNOUNCE_VOIDED, new JsonObject()));
    return this;
  }

  /** Stops every room as the gateway does: pending permissions first, then agents, then the rest. */
  public void stop() {
    await(vertx.eventBus().request(Addresses.PERMISSION_SHUTDOWN, new JsonObject()));
    while (!deployments.isEmpty()) {
      await(vertx.undeploy(deployments.pop()));
    }
  }

  /** The built-in demo agent, fast. */
  public static AgentSpec demo() {
    return new AgentSpec("demo", "Demo agent", "demo", null, Map.of("DEMO_AGENT_DELAY_MS", "2"), null, null);
  }

  public static AgentSpec command(String id, List<String> argv) {
    return new AgentSpec(id, id, null, argv, Map.of(), null, null);
  }

  /** A test-side class with a main method, run as an agent process on this JVM's class path. */
  public static AgentSpec javaMain(String id, Class<?> main, String... args) {
    return command(id, javaArgv(main, args));
  }

  /** The argv that runs a test-side main class in a JVM of its own. */
  public static List<String> javaArgv(Class<?> main, String... args) {
    List<String> argv = new ArrayList<>(List.of(
        ProcessHandle.current().info().command().orElse("java"), "-Xmx64m", "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC", "-cp", absoluteClassPath(), main.getName())); // the demo agent's flags: a start's CPU
    argv.addAll(List.of(args));
    return argv;
  }

  private static String absoluteClassPath() {
    List<String> entries = new ArrayList<>();
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      entries.add(Path.of(e).toAbsolutePath().toString());
    }
    return String.join(File.pathSeparator, entries);
  }

  /** Creates a thread attached to the given surface and records its events. */
  public String thread(String agentId, String surface) {
    String id = unrecordedThread(agentId, surface);
    consumers.add(vertx.eventBus().<JsonObject>consumer(Addresses.threadEvents(id), m -> events.add(m.body())));
    return id;
  }

  /** Records the events of a thread made before (by an earlier gateway on the same data directory). */
  public void follow(String threadId) {
    consumers.add(vertx.eventBus().<JsonObject>consumer(Addresses.threadEvents(threadId), m -> events.add(m.body())));
  }

  /**
   * Creates a thread whose events are not recorded: for benchmarks, which count their own (the
   * recorded list copies itself at every event, seconds of a core for 20,000 of them).
   */
  public String unrecordedThread(String agentId, String surface) {
    JsonObject t = await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_CREATE,
        new JsonObject().put("agent", agentId).put("surface", surface))).body();
    return t.getString("threadId");
  }

  public JsonObject prompt(String threadId, String text) {
    return await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_PROMPT,
        new JsonObject().put("threadId", threadId).put("text", text).put("surface", "web"))).body();
  }

  public JsonObject cancel(String threadId) {
    return await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_CANCEL,
        new JsonObject().put("threadId", threadId))).body();
  }

  public JsonObject answer(String requestId, String optionId) {
    return await(vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_ANSWER,
        new JsonObject().put("requestId", requestId).put("optionId", optionId).put("surface", "web"))).body();
  }

  /** Events of a thread, in order, as {@code {seq, event}}. */
  public List<JsonObject> events(String threadId) {
    return events.stream().filter(e -> e.getString("threadId").equals(threadId)).toList();
  }

  public List<JsonObject> eventsOfKind(String threadId, String kind) {
    return events(threadId).stream().map(e -> e.getJsonObject("event"))
        .filter(e -> kind.equals(e.getString("kind"))).toList();
  }

  public JsonObject awaitEvent(String threadId, Predicate<JsonObject> which, String what) {
    PermissionHarness.waitFor(() -> events(threadId).stream().map(e -> e.getJsonObject("event")).anyMatch(which),
        what + " on " + threadId + "; seen: " + summary(threadId));
    return events(threadId).stream().map(e -> e.getJsonObject("event")).filter(which).findFirst().orElseThrow();
  }

  /** Waits for the n-th (1-based) turn_ended event of a thread and returns its stop reason. */
  public String awaitTurnEnd(String threadId, int n) {
    PermissionHarness.waitFor(() -> eventsOfKind(threadId, "turn_ended").size() >= n,
        "turn " + n + " to end on " + threadId + "; seen: " + summary(threadId));
    return eventsOfKind(threadId, "turn_ended").get(n - 1).getString("stopReason");
  }

  public JsonObject awaitCard(String threadId, int n) {
    PermissionHarness.waitFor(() -> cards.stream().filter(c -> c.getString("threadId").equals(threadId)).count() >= n,
        "permission card " + n + " on " + threadId + "; seen: " + summary(threadId));
    return cards.stream().filter(c -> c.getString("threadId").equals(threadId)).skip(n - 1).findFirst().orElseThrow();
  }

  /** The agent text of a thread, all chunks joined. */
  public String text(String threadId) {
    StringBuilder sb = new StringBuilder();
    for (JsonObject e : eventsOfKind(threadId, "acp")) {
      JsonObject u = e.getJsonObject("update");
      if ("agent_message_chunk".equals(u.getString("sessionUpdate"))) {
        sb.append(u.getJsonObject("content", new JsonObject()).getString("text", ""));
      }
    }
    return sb.toString();
  }

  /** What a scripted agent reported of its own view as a {@code REPORT:<json>} line in its text. */
  public JsonObject report(String threadId) {
    String text = text(threadId);
    int at = text.indexOf("REPORT:");
    if (at < 0) {
      throw new AssertionError("no report in: " + text);
    }
    return new JsonObject(text.substring(at + "REPORT:".length(), text.indexOf('\n', at)));
  }

  public String summary(String threadId) {
    List<String> kinds = new ArrayList<>();
    for (JsonObject e : events(threadId)) {
      JsonObject ev = e.getJsonObject("event");
      String kind = ev.getString("kind");
      if (kind.equals("acp")) {
        kind = ev.getJsonObject("update").getString("sessionUpdate");
      } else if (kind.equals("system")) {
        kind = "system(" + ev.getString("text") + ")";
      } else if (kind.equals("turn_ended")) {
        kind = "turn_ended(" + ev.getString("stopReason") + ")";
      }
      kinds.add(kind);
    }
    return String.join(", ", kinds);
  }

  public JsonArray history(String threadId, long afterSeq) {
    return await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_HISTORY,
        new JsonObject().put("threadId", threadId).put("afterSeq", afterSeq))).body().getJsonArray("events");
  }

  /** The agent room's whole status: its agents, turns, and what its back-pressure holds. */
  public JsonObject roomStatus() {
    return await(vertx.eventBus().<JsonObject>request(Addresses.AGENT_STATUS, new JsonObject())).body();
  }

  public JsonObject agentStatus(String threadId) {
    JsonArray agents = roomStatus().getJsonArray("agents");
    return agents.stream().map(a -> (JsonObject) a).filter(a -> a.getString("threadId").equals(threadId))
        .findFirst().orElse(null);
  }

  @Override
  public void close() {
    if (!deployments.isEmpty()) {
      stop();
    }
    consumers.forEach(c -> await(c.unregister()));
  }
}
