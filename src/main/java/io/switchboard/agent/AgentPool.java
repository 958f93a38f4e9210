package io.switchboard.agent;

import io.switchboard.config.AgentSpec;
import io.switchboard.config.Limits;
import io.switchboard.config.Settings;
import io.switchboard.process.Sandbox;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Agent processes as a bounded resource: the sessions of the room's threads, the processes that
 * serve them, and the slots those take. At most {@code agentProcesses.max} processes run at once,
 * and at most {@code agents[].maxProcesses} of one agent. A session that needs a process where
 * none is free stops the least recently used idle one (no turn, nothing queued, no open question)
 * to make room; if none is idle it waits in line, visibly, until one is (or its turn is stopped).
 * A session idle for {@code agentProcesses.idleStopSeconds} is closed and forgotten (its process
 * stopped, or left if it is shared); its thread's next prompt starts it again and resumes the
 * session. An agent with {@code shareProcess} runs one process for all its threads. Lives on the
 * agent room's event loop.
 */
final class AgentPool {
  private static final Logger log = LoggerFactory.getLogger(AgentPool.class);

  /** Why a session's wait for a slot ended without one: its turn was stopped, or it was closed. */
  static final class Withdrawn extends RuntimeException {
    Withdrawn() {
      super("stopped while waiting for a free agent slot", null, false, false);
    }
  }

  /** A session waiting for a slot. */
  private static final class Waiter {
    final AgentSession session;
    final Promise<Void> granted = Promise.promise();
    /** An idle process is being stopped to make room for it. */
    boolean makingRoom;

    Waiter(AgentSession session) {
      this.session = session;
    }
  }

  private final Context context;
  private final Settings.AgentProcesses limits;
  private final Limits memoryLimits;
  private final String owner;
  private final Path dataDir;
  private final Supplier<String> generationIds;
  private final long startTimeoutMs;
  /** Each thread's session, least recently used first. */
  private final Map<String, AgentSession> sessions = new LinkedHashMap<>(16, 0.75f, true);
  /** Processes holding a slot: from the grant to their exit. */
  private final Set<AgentProcess> running = new LinkedHashSet<>();
  /** The one process of each agent with {@code shareProcess}, while it starts or runs. */
  private final Map<String, Future<AgentProcess>> sharedProcesses = new HashMap<>();
  private final Map<AgentProcess, Long> lastUsed = new HashMap<>();
  private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();
  /** Threads whose last session is still closing: a new one starts after (the agent may still be saving it). */
  private final Map<String, Future<Void>> closing = new HashMap<>();
  private long idleStops;
  private long evictions;
  private long sweepTimer = -1;
  private boolean stopping;

  AgentPool(Context context, Settings settings, Limits memoryLimits, String owner, Supplier<String> generationIds,
            long startTimeoutMs) {
    this.context = context;
    this.memoryLimits = memoryLimits;
    this.limits = settings.agentProcesses();
    this.owner = owner;
    this.dataDir = settings.dataDir();
    this.generationIds = generationIds;
    this.startTimeoutMs = startTimeoutMs;
    long every = Math.max(100, Math.min(limits.idleStopMs() / 4, 30_000));
    sweepTimer = context.owner().setPeriodic(every, t -> stopIdle());
  }

  AgentSession session(String threadId) {
    return sessions.get(threadId);
  }

  AgentSession sessionFor(String threadId, Supplier<AgentSession> create) {
    return sessions.computeIfAbsent(threadId, id -> create.get());
  }

  /**
   * Forgets a thread's session and closes it (its own process stops); {@code deleting}: the thread
   * is being deleted, and so is the agent's session where it can.
   */
  Future<Void> remove(String threadId, boolean deleting) {
    AgentSession s = sessions.remove(threadId);
    return s == null ? Future.succeededFuture() : forget(s, deleting);
  }

  /** Closes a session the pool no longer holds; its thread's next session starts once this is done. */
  private Future<Void> forget(AgentSession s) {
    return forget(s, false);
  }

  private Future<Void> forget(AgentSession s, boolean deleting) {
    sessions.remove(s.threadId(), s);
    Future<Void> closed = s.close(deleting);
    closing.put(s.threadId(), closed);
    closed.onComplete(x -> closing.remove(s.threadId(), closed));
    return closed;
  }

  // ---- handing out processes ----

  /** A started process for {@code session}: its own, or its agent's shared one; may wait for a slot. */
  Future<AgentProcess> processFor(AgentSession session) {
    Future<Void> before = closing.get(session.threadId());
    if (before != null) {
      return before.transform(x -> processFor(session));
    }
    AgentSpec spec = session.spec();
    if (stopping) {
      return Future.failedFuture(new AgentSession.StartFailure("The gateway is stopping."));
    }
    if (spec.shareProcess()) {
      Future<AgentProcess> shared = sharedProcesses.get(spec.id());
      if (shared == null || shared.succeeded() && (shared.result().exited || shared.result().stopping)) {
        Future<AgentProcess> started = slot(session).compose(v -> start(session, true));
        sharedProcesses.put(spec.id(), started);
        started.onFailure(err -> sharedProcesses.remove(spec.id(), started));
        shared = started;
      }
      // The wait was the first asker's: if that one stopped waiting, the others wait on their own.
      return shared.recover(err -> err instanceof Withdrawn && session.wantsProcess() ? processFor(session)
          : Future.failedFuture(err));
    }
    return slot(session).compose(v -> start(session, false));
  }

  private Future<AgentProcess> start(AgentSession session, boolean shared) {
    AgentSpec spec = session.spec();
    AgentProcess p = new AgentProcess(context, spec, generationIds.get(), shared, memoryLimits);
    running.add(p);
    lastUsed.put(p, System.currentTimeMillis());
    p.onExit(() -> release(p));
    Path workspaces = dataDir.resolve("workspaces");
    // A project's folder wins over the agent's own cwd (a shared process still starts among the workspaces).
    Path cwd = shared ? (spec.cwd() != null ? Path.of(spec.cwd()) : workspaces)
        : session.project() != null ? session.workspaceRoot() : spec.cwd() != null ? Path.of(spec.cwd()) : null;
    return p.start(() -> {
      if (shared) {
        // One process for many threads: it sees every workspace (not the token, the database or plugin state).
        Files.createDirectories(workspaces);
        return session.confinedHere() ? Sandbox.wrap(session.argv(), dataDir, workspaces, cwd,
            Sandbox.Writes.of(dataDir, SessionBootstrap.sandboxOwner(spec, session.threadId()), session.argv(),
                spec.env(), spec.writable()), Sandbox.Confinement.NONE) : session.argv();
      }
      Path dir = session.createWorkspace();
      return session.confined(session.argv(), cwd == null ? dir : cwd);
    }, cwd != null ? cwd : dataDir.resolve("workspaces").resolve(session.threadId()), owner, startTimeoutMs)
        .onFailure(err -> {
          if (p.process == null) {
            release(p); // never spawned: nothing will exit
          }
        })
        .map(p);
  }

  /** A slot for a new process of the session's agent: at once if one is free, else in line. */
  private Future<Void> slot(AgentSession session) {
    if (fits(session.spec())) {
      return Future.succeededFuture();
    }
    Waiter w = new Waiter(session);
    waiting.add(w);
    makeRoom(w);
    if (!w.granted.future().isComplete()) {
      session.waitingForSlot(waiting.size(), whyFull(session.spec()));
    }
    return w.granted.future();
  }

  private boolean fits(AgentSpec spec) {
    return running.size() < limits.max() && count(spec.id()) < perAgent(spec);
  }

  private int perAgent(AgentSpec spec) {
    return spec.maxProcesses() == null ? Integer.MAX_VALUE : spec.maxProcesses();
  }

  private long count(String agentId) {
    return running.stream().filter(p -> p.spec.id().equals(agentId)).count();
  }

  private String whyFull(AgentSpec spec) {
    if (count(spec.id()) >= perAgent(spec)) {
      return count(spec.id()) + " " + spec.name() + " agents are running, the most allowed (agents[].maxProcesses), "
          + "and each has a turn or a question open";
    }
    return running.size() + " agent processes are running, the most allowed (agentProcesses.max), and each has a "
        + "turn or a question open";
  }

  /** Its wait ends: the session's turn was stopped, or the session closed. */
  void withdraw(AgentSession session) {
    for (Waiter w : new ArrayList<>(waiting)) {
      if (w.session == session) {
        waiting.remove(w);
        w.granted.tryFail(new Withdrawn());
      }
    }
  }

  /**
   * Stops the least recently used idle process that frees a slot {@code w} can take (one of its
   * own agent when that agent is at its cap); its sessions are forgotten, to resume on their next prompt.
   */
  private void makeRoom(Waiter w) {
    if (w.makingRoom) {
      return;
    }
    AgentSpec spec = w.session.spec();
    boolean agentFull = count(spec.id()) >= perAgent(spec);
    Optional<AgentProcess> victim = running.stream()
        .filter(p -> !p.stopping && !p.exited && p.process != null)
        .filter(p -> !agentFull || p.spec.id().equals(spec.id()))
        .filter(p -> p.ready)
        .filter(p -> p.attached().stream().allMatch(AgentSession::idle))
        .min(Comparator.comparingLong(p -> lastUsed.getOrDefault(p, 0L)));
    if (victim.isEmpty()) {
      return;
    }
    AgentProcess p = victim.get();
    w.makingRoom = true;
    evictions++;
    log.info("[{}] stopped to make room for a prompt of {} (least recently used idle agent)", p.tag,
        w.session.threadId());
    stopProcess(p);
  }

  /** Stops a process and forgets the sessions it served (they resume on their next prompt). */
  private void stopProcess(AgentProcess p) {
    for (AgentSession s : new ArrayList<>(p.attached())) {
      forget(s);
    }
    p.stop();
  }

  /** A process exited: its slot goes to whoever waits and fits, in order. */
  private void release(AgentProcess p) {
    if (!running.remove(p)) {
      return;
    }
    lastUsed.remove(p);
    Future<AgentProcess> shared = sharedProcesses.get(p.spec.id());
    if (shared != null && shared.succeeded() && shared.result() == p) {
      sharedProcesses.remove(p.spec.id());
    }
    waiting.forEach(w -> w.makingRoom = false);
    grant();
  }

  private void grant() {
    for (Waiter w : new ArrayList<>(waiting)) {
      if (fits(w.session.spec())) {
        waiting.remove(w);
        w.granted.tryComplete();
      } else {
        makeRoom(w);
      }
    }
  }

  /** A session has nothing left to do: a waiter may take its process's place. */
  void becameIdle(AgentSession session) {
    AgentProcess p = processOf(session);
    if (p != null) {
      lastUsed.put(p, System.currentTimeMillis());
    }
    if (!waiting.isEmpty()) {
      context.runOnContext(v -> grant()); // after the turn's end was emitted
    }
  }

  private AgentProcess processOf(AgentSession session) {
    for (AgentProcess p : running) {
      if (p.attached().contains(session)) {
        return p;
      }
    }
    return null;
  }

  // ---- idle stops ----

  /** Closes the sessions idle for longer than the limit; a shared process with none left stops. */
  private void stopIdle() {
    long now = System.currentTimeMillis();
    for (AgentSession s : new ArrayList<>(sessions.values())) {
      long since = s.idleSince();
      if (since != 0 && now - since >= limits.idleStopMs()) {
        AgentProcess p = processOf(s);
        if (p != null) {
          idleStops++;
          log.info("[agent {} of {}] idle for {} s: stopped; the next prompt starts it again", s.spec().id(),
              s.threadId(), (now - since) / 1000);
        }
        forget(s);
      }
    }
    for (AgentProcess p : new ArrayList<>(running)) {
      if (p.shared && p.attached().isEmpty() && !p.stopping && p.ready
          && now - lastUsed.getOrDefault(p, now) >= limits.idleStopMs()) {
        idleStops++;
        log.info("[{}] no thread has used it for {} s: stopped", p.tag, (now - lastUsed.get(p)) / 1000);
        p.stop();
      }
    }
  }

  // ---- status and shutdown ----

  /** What runs and waits: for the agent status, /metrics and the page. Pids to measure come with it. */
  JsonObject status() {
    JsonArray processes = new JsonArray();
    for (AgentProcess p : running) {
      processes.add(new JsonObject().put("agentId", p.spec.id()).put("pid", p.process == null ? null : p.pid())
          .put("shared", p.shared).put("sessions", p.attached().size())
          .put("idle", p.attached().stream().allMatch(AgentSession::idle)));
    }
    return new JsonObject().put("processes", (long) running.size()).put("maxProcesses", limits.max())
        .put("idleStopSeconds", limits.idleStopMs() / 1000).put("running", processes)
        .put("queuedPrompts", waiting.size()).put("idleStops", idleStops).put("evictions", evictions)
        .put("sessions", sessions.size());
  }

  JsonArray sessionStatus() {
    JsonArray agents = new JsonArray();
    sessions.values().forEach(s -> agents.add(s.status()));
    return agents;
  }

  /** Every process stopped (the gateway stops). */
  Future<Void> close() {
    stopping = true;
    context.owner().cancelTimer(sweepTimer);
    List<Future<?>> stops = new ArrayList<>();
    for (AgentSession s : new ArrayList<>(sessions.values())) {
      stops.add(s.close());
    }
    sessions.clear();
    for (Waiter w : new ArrayList<>(waiting)) {
      w.granted.tryFail(new Withdrawn());
    }
    waiting.clear();
    for (AgentProcess p : new ArrayList<>(running)) {
      stops.add(p.stop());
    }
    return Future.join(stops).mapEmpty();
  }
}
