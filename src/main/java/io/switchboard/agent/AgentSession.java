package io.switchboard.agent;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.Bus;
import io.switchboard.bus.ErrorCode;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.Limits;
import io.switchboard.jsonrpc.JsonRpcError;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.switchboard.jsonrpc.StdioProcess;
import io.switchboard.process.Sandbox;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ACP client for one thread: its session with an agent process ({@link AgentProcess}, its own
 * or one shared by the agent's threads, handed out by the {@link AgentPool}), the thread's prompt
 * queue (FIFO, one turn at a time), its terminals, and the client methods the agent may call.
 * Lives on the agent room's event loop.
 *
 * <p>A process that exits (or was stopped as idle) is started again by the next prompt, which
 * resumes the ACP session ({@code session/resume}, else {@code session/load} with its replay
 * hidden, else a new session).
 */
final class AgentSession {
  private static final Logger log = LoggerFactory.getLogger(AgentSession.class);
  static final int PROTOCOL_VERSION = 1;
  static final int MAX_QUEUED = 16;
  private static final int TOOL_CALLS_KEPT = 256;

  private enum State { STOPPED, STARTING, READY }

  /** The turn in progress. */
  private static final class Turn {
    boolean cancelling;
    long graceTimer = -1;
    /** Tool calls announced in this turn, in order: those unfinished when it ends are marked cancelled. */
    final java.util.Set<String> toolCalls = new java.util.LinkedHashSet<>();
  }

  /** After {@code session/load} answers, replayed updates may still come: hidden until this long a silence. */
  static final long REPLAY_QUIET_MS = 150;
  /** ... but no longer than this after the answer. */
  static final long REPLAY_MAX_MS = 3_000;

  private final Context context;
  private final EventBus bus;
  private final AgentSpec spec;
  private final List<String> argv;
  private final String threadId;
  private final Workspace workspace;
  /** This session's file calls: one at a time, never behind another session's. */
  private final BlockingLane files;
  private final String tag;
  private final ArrayDeque<Prompt> queue = new ArrayDeque<>();

  /** A prompt waiting for its turn: its text, its images ({@code [{mimeType, data}]}) and their decoded size. */
  private record Prompt(String text, JsonArray images, long imageBytes) {}
  /** What the thread was last told of the agent taking images (null: nothing yet). */
  private Boolean announcedImages;
  /**
   * What the agent said of its recent tool calls (merged updates), to show with a permission request
   * that only names one. Least recently used first; bounded by count and by the bytes of the lines
   * they came in ({@link Limits#toolCallBytes()}): a tool call holds whole diffs.
   */
  private final Map<String, JsonObject> toolCalls = new LinkedHashMap<>(64, 0.75f, true);
  private final Map<String, Long> toolCallBytes = new java.util.HashMap<>();
  private long toolCallBytesKept;
  private State state = State.STOPPED;
  private Future<Void> starting;
  /** The process serving this session while it is READY (or opening its session on it). */
  private AgentProcess current;
  /** This session's terminals on {@link #current}. */
  private Terminals terminals;
  private String acpSessionId;
  /** Permission questions of this session still open: it is not idle while one is. */
  private int asking;
  /** The session modes the agent offers ({currentModeId, availableModes}), once it said; null before. */
  private JsonObject modes;
  /** The mode a person chose: applied now, or when the agent next starts (a resumed session forgets it). */
  private String wantedMode;
  /** The session config options the agent offers (ACP configOptions), once it said; null before. */
  private JsonArray configOptions;
  /** The config values a person chose, set again at every start as modes are. */
  private final Map<String, String> wantedConfig = new java.util.LinkedHashMap<>();
  /** Since when it has had no turn, queued prompt or open question (0: busy). */
  private long idleSince = System.currentTimeMillis();
  private boolean replaying;
  /** While the tail of a replay is awaited: completes after {@link #REPLAY_QUIET_MS} without an update. */
  private Promise<Void> replayTail;
  private long replayQuietTimer = -1;
  private long replayDeadline;
  private Turn turn;
  private boolean closed;

  private final AgentRoom.Timings timings;
  private final AgentRoom.Turns turns;
  private final Backlog backlog;
  private final Limits limits;
  private final AgentPool pool;
  /** The gateway's process mark (ProcessTree): whatever the agent starts carries it. */
  private final String owner;
  /** Hidden from the agent by its sandbox, but for its own workspace. */
  private final Path dataDir;
  /** Why bwrap cannot run here, or null when it can. */
  private final String sandboxProblem;
  private boolean toldUnconfined;

  /**
   * What every session of one agent room shares: its timings, turn counts and back-pressure, the
   * pool of agent processes, the gateway's process mark, the data directory the sandbox hides,
   * and why the sandbox cannot run here (null when it can).
   */
  record Shared(AgentRoom.Timings timings, Limits limits, AgentRoom.Turns turns, Backlog backlog, AgentPool pool,
                String owner,
                Path dataDir, String sandboxProblem) {}

  AgentSession(Context context, AgentSpec spec, List<String> argv, String threadId, Path workspace,
               String acpSessionId, Shared shared) {
    this.pool = shared.pool();
    this.dataDir = shared.dataDir();
    this.sandboxProblem = shared.sandboxProblem();
    this.owner = shared.owner();
    this.timings = shared.timings();
    this.turns = shared.turns();
    this.backlog = shared.backlog();
    this.limits = shared.limits();
    this.context = context;
    this.bus = context.owner().eventBus();
    this.spec = spec;
    this.argv = argv;
    this.threadId = threadId;
    this.workspace = new Workspace(workspace, limits.fileReadBytes());
    this.files = new BlockingLane(context.owner(), 1);
    this.acpSessionId = acpSessionId;
    this.tag = "agent " + spec.id() + " of " + threadId;
  }

  // ---- what the room asks of it ----

  /**
   * Queues a prompt with its images (checked by the thread room); returns how many are ahead of it
   * (0: it runs now). The images are held, in bytes, against the room's budget until the turn ends.
   */
  int enqueue(String text, JsonArray images) {
    if (closed) {
      throw new IllegalStateException("the agent of " + threadId + " is stopping");
    }
    if (queue.size() >= MAX_QUEUED) {
      throw new IllegalArgumentException("thread " + threadId + " already has " + MAX_QUEUED + " prompts waiting");
    }
    long imageBytes = 0;
    for (Object image : images) {
      imageBytes += ((JsonObject) image).getString("data").length(); // held as base64 text
    }
    if (!backlog.reserveImages(imageBytes)) {
      throw new IllegalArgumentException("the gateway already holds as many images for agents as its memory allows; "
          + "send this one when a turn has ended");
    }
    int ahead = queue.size() + (turn == null ? 0 : 1);
    queue.add(new Prompt(text, images, imageBytes));
    idleSince = 0;
    pump();
    return ahead;
  }

  /** Stops the current turn: {@code session/cancel}, and its pending permissions end cancelled. */
  boolean cancel() {
    Turn t = turn;
    if (t == null) {
      return false;
    }
    if (!t.cancelling) {
      t.cancelling = true;
      if (state == State.STARTING) {
        pool.withdraw(this); // waiting for a free agent slot: it waits no more
      }
      if (state == State.READY && acpSessionId != null) {
        current.peer.notify("session/cancel", new JsonObject().put("sessionId", acpSessionId));
      }
      publishSessionCancelled();
      // An agent that does not end the turn after a cancel is stopped: nobody waits on it forever.
      t.graceTimer = context.owner().setTimer(timings.cancelGraceMs(), id -> {
        if (turn == t && current != null) {
          log.warn("[{}] no end of turn {} ms after session/cancel; stopping the agent", tag, timings.cancelGraceMs());
          if (current.shared) {
            // Its other threads' turns go on: this turn ends here, and the session starts afresh.
            emit(system("The agent did not stop within " + timings.cancelGraceMs() / 1000 + " s of the cancel; the "
                + "turn was ended without it."));
            detach();
            state = State.STOPPED;
            endTurn(t, new JsonObject().put("stopReason", "cancelled"), null);
          } else {
            emit(system("The agent did not stop within " + timings.cancelGraceMs() / 1000 + " s of the cancel, so it "
                + "was stopped. The next prompt starts it again."));
            current.stop();
          }
        }
      });
    }
    return true;
  }

  JsonObject status() {
    return new JsonObject().put("threadId", threadId).put("agentId", spec.id()).put("state", state.name())
        .put("pid", current == null || current.process == null ? null : current.pid()).put("busy", turn != null)
        .put("shared", current != null && current.shared)
        .put("queued", queue.size()).put("acpSessionId", acpSessionId)
        .put("terminals", terminals == null ? 0 : terminals.count());
  }

  String threadId() {
    return threadId;
  }

  AgentSpec spec() {
    return spec;
  }

  /** Whether it still waits for a process to start its turn on (not stopped, not closed). */
  boolean wantsProcess() {
    return state == State.STARTING && turn != null && !turn.cancelling && !closed;
  }

  /** Since when it has had nothing to do (no turn, queued prompt or open question); 0 while it has. */
  long idleSince() {
    return idleSince;
  }

  /** Whether it may be stopped now without losing anything: no turn, nothing queued, no open question. */
  boolean idle() {
    return idleSince != 0;
  }

  private void checkIdle() {
    boolean idle = turn == null && queue.isEmpty() && asking == 0 && state != State.STARTING;
    if (idle && idleSince == 0) {
      idleSince = System.currentTimeMillis();
      pool.becameIdle(this);
    } else if (!idle) {
      idleSince = 0;
    }
  }

  /** Told by the pool while it waits for a free agent slot: visible in the thread, with its place. */
  void waitingForSlot(int place, String why) {
    emit(system("Waiting for a free agent slot (place " + place + " in line): " + why + ". Stop cancels the wait.")
        .put("queuedForSlot", place));
  }

  /**
   * Leaves its process for good (evicted, idle, the gateway stopping); the queue is dropped. Its
   * own process is stopped; a shared one goes on serving the others.
   */
  Future<Void> close() {
    closed = true;
    queue.forEach(p -> backlog.releaseImages(p.imageBytes()));
    queue.clear();
    pool.withdraw(this);
    AgentProcess p = current;
    if (p != null && p.shared && acpSessionId != null && (turn != null || asking > 0)) {
      // The process goes on serving others: this session's turn and questions end here.
      p.peer.notify("session/cancel", new JsonObject().put("sessionId", acpSessionId));
      publishSessionCancelled();
    }
    detach();
    return p == null || p.shared ? Future.succeededFuture() : p.stop().mapEmpty();
  }

  /** No longer served by {@link #current}: its terminals end. */
  private void detach() {
    if (current != null) {
      current.detach(this);
      current = null;
    }
    if (terminals != null) {
      terminals.killAll();
      terminals = null;
    }
  }

  // ---- turns ----

  private void pump() {
    if (turn != null || queue.isEmpty() || closed) {
      return;
    }
    Prompt next = queue.poll();
    Turn t = new Turn();
    turn = t;
    emit(new JsonObject().put("kind", "turn_started"));
    ensureStarted()
        .compose(v -> t.cancelling ? Future.succeededFuture(new JsonObject().put("stopReason", "cancelled"))
            : prompt(next, true))
        .onComplete(x -> backlog.releaseImages(next.imageBytes()))
        // Stopped while it waited for a free agent slot: a cancelled turn, not a failure.
        .recover(err -> t.cancelling && err instanceof AgentPool.Withdrawn
            ? Future.succeededFuture(new JsonObject().put("stopReason", "cancelled")) : Future.failedFuture(err))
        .onComplete(done -> endTurn(t, done.succeeded() ? done.result() : null, done.cause()));
  }

  /** Whether the agent said in {@code initialize} that prompts may carry {@code kind} blocks (image, audio). */
  private static boolean takes(AgentProcess p, String kind) {
    return p.capabilities.getValue("promptCapabilities") instanceof JsonObject c && Boolean.TRUE.equals(c.getValue(kind));
  }

  private Future<Object> prompt(Prompt p, boolean mayAuthenticate) {
    JsonArray blocks = new JsonArray();
    if (!p.text().isBlank()) {
      blocks.add(new JsonObject().put("type", "text").put("text", p.text()));
    }
    if (!p.images().isEmpty() && !takes(current, "image")) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS, "this agent does not take images (its "
          + "promptCapabilities leave image out), so the message was not sent; send it as text"));
    }
    for (Object image : p.images()) {
      blocks.add(((JsonObject) image).copy().put("type", "image"));
    }
    JsonObject params = new JsonObject().put("sessionId", acpSessionId).put("prompt", blocks);
    return current.peer.request("session/prompt", params).recover(err -> {
      if (mayAuthenticate && isAuthRequired(err) && spec.authMethod() != null) {
        return authenticate().compose(v -> prompt(p, false));
      }
      return Future.failedFuture(err);
    });
  }

  private void endTurn(Turn t, Object result, Throwable failure) {
    if (turn != t) {
      return; // already ended (the agent exited)
    }
    turn = null;
    if (t.graceTimer >= 0) {
      context.owner().cancelTimer(t.graceTimer);
    }
    if (failure == null) {
      Object reason = JsonRpcPeer.object(result).getValue("stopReason");
      // After a cancel some agents answer end_turn: any result after a cancel ends the turn.
      String stopReason = reason instanceof String s ? s : "end_turn";
      if (t.cancelling || !"end_turn".equals(stopReason)) {
        cancelUnfinishedToolCalls(t);
      }
      emit(new JsonObject().put("kind", "turn_ended").put("stopReason", stopReason));
    } else {
      cancelUnfinishedToolCalls(t);
      emit(error(describe(failure)));
      emit(new JsonObject().put("kind", "turn_ended").put("stopReason", "error"));
    }
    pump();
    checkIdle();
  }

  // ---- starting the agent ----

  private Future<Void> ensureStarted() {
    if (state == State.READY) {
      return Future.succeededFuture();
    }
    if (state == State.STARTING) {
      return starting;
    }
    state = State.STARTING;
    Promise<Void> ready = Promise.promise();
    starting = ready.future();
    checkSandbox().compose(v -> pool.processFor(this)).compose(this::attach).onComplete(ready);
    ready.future().onComplete(done -> {
      if (done.succeeded() && current != null && !closed) {
        state = State.READY;
        log.info("[{}] ready, ACP session {} on pid {}", tag, acpSessionId, current.pid());
        return;
      }
      if (!(done.cause() instanceof AgentPool.Withdrawn)) {
        log.warn("[{}] failed to start: {}", tag, done.cause() == null ? "it exited" : done.cause().getMessage());
      }
      AgentProcess p = current;
      detach();
      if (p != null && !p.shared) {
        p.stop();
      }
      state = State.STOPPED;
      checkIdle();
    });
    return starting;
  }

  /** Opens (or resumes, or finds open) this thread's ACP session on {@code p}, within the start timeout. */
  private Future<Void> attach(AgentProcess p) {
    if (p.exited) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the agent exited"));
    }
    current = p;
    p.attach(this);
    terminals = new Terminals(context, workspace, tag, owner, backlog, limits.terminalBytes(), this::confined)
        .onExit(done -> emit(done.put("kind", "terminal_output")));
    if (acpSessionId != null && p.isOpen(acpSessionId)) {
      p.bind(acpSessionId, this); // a shared process that still has it: nothing to load
      return Future.succeededFuture();
    }
    return openSession(p).timeout(timings.startTimeoutMs(), java.util.concurrent.TimeUnit.MILLISECONDS)
        .recover(err -> Future.failedFuture(err instanceof java.util.concurrent.TimeoutException
            ? new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the agent did not open a session within "
            + timings.startTimeoutMs() / 1000 + " s") : err))
        .onSuccess(v -> p.opened(acpSessionId));
  }

  /** Whether this agent runs in the sandbox: its mode, and whether bwrap works here. */
  boolean confinedHere() {
    return spec.sandbox() == Sandbox.Mode.BWRAP || (spec.sandbox() == Sandbox.Mode.AUTO && sandboxProblem == null);
  }

  /** The argv of the agent or one of its terminals: inside the sandbox (docs/architecture.md) when it has one. */
  List<String> confined(List<String> command, Path cwd) {
    return confinedHere() ? Sandbox.wrap(command, dataDir, workspace.root(), cwd) : command;
  }

  /** The thread's workspace, made if missing (blocking); the agent's working directory unless it has its own. */
  Path createWorkspace() throws java.io.IOException {
    return workspace.create();
  }

  List<String> argv() {
    return argv;
  }

  /**
   * Before a start: an agent that must be sandboxed where bwrap cannot run is refused; one that
   * would be sandboxed if it could runs without, and the thread is told so once.
   */
  private Future<Void> checkSandbox() {
    if (spec.sandbox() == Sandbox.Mode.BWRAP && sandboxProblem != null) {
      return Future.failedFuture(new StartFailure("The agent " + spec.name() + " must run in a sandbox "
          + "(agents[].sandbox is \"bwrap\"), but " + sandboxProblem + "."));
    }
    if (spec.sandbox() == Sandbox.Mode.AUTO && sandboxProblem != null && !toldUnconfined) {
      toldUnconfined = true;
      emit(system("The agent " + spec.name() + " runs without a sandbox: " + sandboxProblem + ". It can read "
          + "whatever your user can, this gateway's token and database included. Install bubblewrap, or set "
          + "agents[].sandbox to \"none\" to run it unconfined knowingly."));
    }
    return Future.succeededFuture();
  }

  /** A failed start explained in full: shown as it is. */
  static final class StartFailure extends RuntimeException {
    StartFailure(String message) {
      super(message, null, false, false);
    }
  }

  /** A line the agent sent over the limit was dropped: said in the thread. */
  void lineDropped(long bytes) {
    emit(error("The agent sent a message of " + bytes + " bytes, over the " + (limits.lineBytes() >> 20)
        + " MiB limit; it was dropped."));
  }

  private Future<Void> openSession(AgentProcess p) {
    JsonObject params = new JsonObject().put("cwd", workspaceCwd()).put("mcpServers", new JsonArray());
    if (acpSessionId != null) {
      JsonObject capabilities = p.capabilities;
      JsonObject sessionCaps = capabilities.getValue("sessionCapabilities") instanceof JsonObject c ? c : new JsonObject();
      if (sessionCaps.getValue("resume") != null && !Boolean.FALSE.equals(sessionCaps.getValue("resume"))) {
        p.bind(acpSessionId, this);
        return p.peer.request("session/resume", params.copy().put("sessionId", acpSessionId))
            .compose(result -> applySessionState(p, result))
            .recover(err -> freshSession(p, "The agent could not resume the previous session (" + describe(err)
                + "); a new one was started."));
      }
      if (Boolean.TRUE.equals(capabilities.getValue("loadSession"))) {
        p.bind(acpSessionId, this);
        replaying = true; // the agent replays the history, which the transcript already has
        return p.peer.request("session/load", params.copy().put("sessionId", acpSessionId))
            .compose(result -> replayTail().compose(v -> applySessionState(p, result)), err -> {
              replaying = false;
              return Future.failedFuture(err);
            })
            .recover(err -> freshSession(p, "The agent could not load the previous session (" + describe(err)
                + "); a new one was started."));
      }
      return freshSession(p, "This agent cannot restore a previous session, so a new one was started: it does not "
          + "remember the conversation above.");
    }
    return freshSession(p, null);
  }

  /**
   * Some agents (Gemini CLI) answer {@code session/load} before they finish replaying: the rest of
   * the replay would be stored as events of the next turn. Wait for the updates to go quiet first.
   */
  private Future<Void> replayTail() {
    replayTail = Promise.promise();
    replayDeadline = System.nanoTime() + REPLAY_MAX_MS * 1_000_000;
    replayQuiet();
    return replayTail.future().onComplete(x -> {
      replaying = false;
      replayTail = null;
    });
  }

  private void replayQuiet() {
    context.owner().cancelTimer(replayQuietTimer);
    long left = Math.max(1, (replayDeadline - System.nanoTime()) / 1_000_000);
    Promise<Void> tail = replayTail;
    replayQuietTimer = context.owner().setTimer(Math.min(REPLAY_QUIET_MS, left), t -> tail.tryComplete());
  }

  private Future<Void> freshSession(AgentProcess p, String note) {
    JsonObject params = new JsonObject().put("cwd", workspaceCwd()).put("mcpServers", new JsonArray());
    return p.peer.request("session/new", params)
        .recover(err -> isAuthRequired(err) && spec.authMethod() != null
            ? authenticate().compose(v -> p.peer.request("session/new", params))
            : Future.failedFuture(err))
        .compose(result -> {
          Object id = JsonRpcPeer.object(result).getValue("sessionId");
          if (!(id instanceof String s) || s.isEmpty()) {
            return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR,
                "the agent answered session/new without a sessionId"));
          }
          AgentSession holder = p.boundTo(s);
          if (holder != null && holder != this) {
            // A shared process must keep its threads apart: one id for two threads would mix them.
            return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the agent answered "
                + "session/new with the session id of another thread's session (" + s + ")"));
          }
          acpSessionId = s;
          p.bind(s, this);
          if (note != null) {
            emit(system(note));
          }
          return bus.request(Addresses.THREAD_SESSION, new JsonObject().put("threadId", threadId)
              .put("acpSessionId", s)).compose(x -> applySessionState(p, result));
        });
  }

  // ---- session modes ----

  /**
   * What an opened session says of its modes goes to the thread (the page offers them); a mode the
   * person chose earlier is set again (an agent that was stopped as idle starts in its default).
   */
  private Future<Void> applySessionState(AgentProcess p, Object result) {
    // Whether the page may offer to attach images: said once per session, again only if it changed.
    boolean images = takes(p, "image");
    if (announcedImages == null || announcedImages != images) {
      announcedImages = images;
      emit(new JsonObject().put("kind", "prompt_capabilities").put("image", images));
    }
    if (JsonRpcPeer.object(result).getValue("configOptions") instanceof JsonArray options) {
      configOptions = options.copy();
      emit(new JsonObject().put("kind", "session_config").put("configOptions", options));
    }
    return applyModes(p, result).compose(v -> applyConfig(p));
  }

  private Future<Void> applyModes(AgentProcess p, Object result) {
    if (JsonRpcPeer.object(result).getValue("modes") instanceof JsonObject m
        && m.getValue("availableModes") instanceof JsonArray) {
      modes = m.copy();
      emit(new JsonObject().put("kind", "session_modes").put("modes", m));
    }
    String current = modes == null ? null : modes.getString("currentModeId");
    if (wantedMode == null || wantedMode.equals(current) || acpSessionId == null) {
      return Future.succeededFuture();
    }
    String mode = wantedMode;
    return p.peer.request("session/set_mode", new JsonObject().put("sessionId", acpSessionId).put("modeId", mode))
        .<Void>map(x -> {
          modeChanged(mode);
          return null;
        })
        .recover(err -> {
          emit(error("The agent could not switch back to the mode " + mode + ": " + describe(err)));
          return Future.succeededFuture();
        });
  }

  /** The config values chosen for the thread that the agent does not have yet, set one after another. */
  private Future<Void> applyConfig(AgentProcess p) {
    Future<Void> done = Future.succeededFuture();
    for (Map.Entry<String, String> wanted : wantedConfig.entrySet()) {
      if (wanted.getValue().equals(configValue(wanted.getKey())) || acpSessionId == null) {
        continue;
      }
      done = done.compose(v -> setConfigOption(p, wanted.getKey(), wanted.getValue()).recover(err -> {
        emit(error("The agent could not take the setting " + wanted.getKey() + " = " + wanted.getValue() + ": "
            + describe(err)));
        return Future.succeededFuture();
      }));
    }
    return done;
  }

  private String configValue(String id) {
    if (configOptions == null) {
      return null;
    }
    return configOptions.stream().filter(o -> o instanceof JsonObject c && id.equals(c.getString("id")))
        .map(o -> String.valueOf(((JsonObject) o).getValue("currentValue"))).findFirst().orElse(null);
  }

  private Future<Void> setConfigOption(AgentProcess p, String id, String value) {
    return p.peer.request("session/set_config_option", new JsonObject().put("sessionId", acpSessionId)
            .put("configId", id).put("value", value))
        .map(result -> {
          // Every page learns the settings, in ACP's own shape (the answer carries all of them).
          JsonArray now = JsonRpcPeer.object(result).getValue("configOptions") instanceof JsonArray a ? a : null;
          if (now != null) {
            configOptions = now.copy();
            emit(new JsonObject().put("kind", "acp").put("update", new JsonObject()
                .put("sessionUpdate", "config_option_update").put("configOptions", now)));
          }
          return null;
        });
  }

  /** The thread's chosen config values, for a session made after they were chosen. */
  void preferConfig(JsonObject values) {
    values.forEach(e -> wantedConfig.putIfAbsent(e.getKey(), String.valueOf(e.getValue())));
  }

  /** A person chose a config value: set now if the agent runs, else when it next starts. */
  Future<Void> setConfig(String id, String value) {
    wantedConfig.put(id, value);
    if (state != State.READY || current == null || acpSessionId == null) {
      return Future.succeededFuture();
    }
    return setConfigOption(current, id, value).recover(err -> Future.failedFuture(describe(err)));
  }

  /** The thread's chosen mode, for a session made after it was chosen: set when the agent starts. */
  void prefer(String modeId) {
    if (wantedMode == null) {
      wantedMode = modeId;
    }
  }

  /** A person chose a mode: set now if the agent runs, else when it next starts. */
  Future<Void> setMode(String modeId) {
    if (modes != null && modes.getValue("availableModes") instanceof JsonArray available && available.stream()
        .noneMatch(o -> o instanceof JsonObject mode && modeId.equals(mode.getString("id")))) {
      return Future.failedFuture("the agent " + spec.name() + " has no mode \"" + modeId + "\" (its modes: "
          + available.stream().map(o -> o instanceof JsonObject mode ? mode.getString("id") : "?").toList() + ")");
    }
    wantedMode = modeId;
    if (state != State.READY || current == null || acpSessionId == null) {
      return Future.succeededFuture(); // applied when the agent next starts
    }
    return current.peer.request("session/set_mode", new JsonObject().put("sessionId", acpSessionId)
            .put("modeId", modeId))
        .<Void>map(x -> {
          modeChanged(modeId);
          return null;
        })
        .recover(err -> Future.failedFuture(describe(err)));
  }

  /** Every page learns the mode changed, in ACP's own shape. */
  private void modeChanged(String modeId) {
    if (modes != null) {
      modes.put("currentModeId", modeId);
    }
    emit(new JsonObject().put("kind", "acp").put("update", new JsonObject()
        .put("sessionUpdate", "current_mode_update").put("currentModeId", modeId)));
  }

  private Future<Void> authenticate() {
    return current.peer.request("authenticate", new JsonObject().put("methodId", spec.authMethod())).mapEmpty();
  }

  private String workspaceCwd() {
    return (spec.cwd() == null ? workspace.root() : Path.of(spec.cwd()).toAbsolutePath()).toString();
  }

  // ---- the agent's process ended ----

  /** The process serving this session exited (whoever stopped it): its questions end, and so does the turn. */
  void processExited(AgentProcess p, Integer code) {
    boolean byUs = p.stopping || p.process.stopping();
    // Whatever it asked and was not answered yet ends now, or when its register arrives.
    bus.publish(Addresses.AGENT_EXITED, new JsonObject().put("threadId", threadId).put("sessionId", acpSessionId)
        .put("generation", p.generation).put("code", code));
    if (current != p) {
      return; // a process this session already left
    }
    if (state == State.STARTING) {
      // It died before the session was open: the failed start ends the turn, saying why.
      detach();
      return;
    }
    // Take the turn first: closing the peer fails the prompt, and this exit is what ends the turn.
    Turn t = turn;
    turn = null;
    state = State.STOPPED;
    detach();
    if (t != null && t.graceTimer >= 0) {
      context.owner().cancelTimer(t.graceTimer);
    }
    if (closed) {
      return;
    }
    if (t != null) {
      cancelUnfinishedToolCalls(t);
    }
    if (!byUs) {
      JsonObject event = new JsonObject().put("kind", "agent_exited").put("code", code);
      if (code != null && code > 128) {
        event.put("signal", code == 137 ? "SIGKILL" : code == 143 ? "SIGTERM" : "signal " + (code - 128));
      }
      emit(event);
    } else if (t != null) {
      emit(new JsonObject().put("kind", "turn_ended").put("stopReason", "cancelled"));
    }
    pump();
    checkIdle();
  }

  // ---- what the agent asks of us ----

  /** A request of the agent for this session (routed here by {@link AgentProcess}). */
  Future<Object> serve(AgentProcess g, String method, Object params) {
    JsonObject p = JsonRpcPeer.object(params);
    Terminals mine = terminals;
    if (method.startsWith("terminal/") && (mine == null || current != g)) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the session is closed"));
    }
    return switch (method) {
      case "session/request_permission" -> {
        backlog.asked(g.process);
        asking++;
        idleSince = 0;
        yield permission(g, p).onComplete(x -> {
          backlog.answered();
          asking--;
          checkIdle();
        });
      }
      case "fs/read_text_file" -> files.run(() -> (Object) new JsonObject().put("content",
          alive(g).read(p.getValue("path"), integer(p.getValue("line")), integer(p.getValue("limit")))));
      case "fs/write_text_file" -> files.run(() -> {
        alive(g).write(p.getValue("path"), p.getValue("content"));
        return (Object) null;
      });
      case "terminal/create" -> mine.create(p);
      case "terminal/output" -> mine.output(p);
      case "terminal/wait_for_exit" -> mine.waitForExit(p);
      case "terminal/kill" -> mine.kill(p);
      case "terminal/release" -> mine.release(p);
      default -> Future.failedFuture(new JsonRpcError(JsonRpcError.METHOD_NOT_FOUND, "Method not found: " + method));
    };
  }

  /** The workspace, for a process still running: a dead agent's queued file call does nothing. */
  private Workspace alive(AgentProcess g) {
    if (g.exited) {
      throw new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the agent exited");
    }
    return workspace;
  }

  private Future<Object> permission(AgentProcess g, JsonObject p) {
    JsonObject asked = p.getValue("toolCall") instanceof JsonObject tc ? tc : new JsonObject();
    Object id = asked.getValue("toolCallId");
    String toolCallId = id instanceof String s && !s.isEmpty() ? s : "permission-" + System.nanoTime();
    // Some agents announce the tool call first, others only here: show what is known of it.
    JsonObject toolCall = toolCalls.getOrDefault(toolCallId, new JsonObject()).copy().mergeIn(asked)
        .put("toolCallId", toolCallId);
    toolCall.remove("sessionUpdate");
    // The session is the one this gateway opened, never the id the agent writes: a request under a
    // foreign id must still end with this session's cancel.
    String sessionId = acpSessionId != null ? acpSessionId : "unopened";
    boolean afterCancel = turn != null && turn.cancelling;
    return bus.<JsonObject>request(Addresses.THREAD_GET, new JsonObject().put("threadId", threadId))
        .compose(thread -> {
          JsonObject request = new JsonObject().put("threadId", threadId).put("sessionId", sessionId)
              .put("agentId", spec.id()).put("generation", g.generation).put("toolCall", toolCall).put("options", p.getValue("options"))
              .put("eligible", thread.body().getJsonArray("routes", new JsonArray()))
              .put("startedBy", thread.body().getString("startedBy"));
          Future<JsonObject> outcome = bus.<JsonObject>request(Addresses.PERMISSION_REGISTER, request,
              Bus.untilEnded()).map(m -> m.body().getJsonObject("outcome"));
          if (afterCancel) {
            publishSessionCancelled(); // asked after the user stopped the turn: it ends cancelled too
          }
          return outcome;
        })
        .map(outcome -> {
          JsonObject answer = "selected".equals(outcome.getString("outcome"))
              ? new JsonObject().put("outcome", "selected").put("optionId", outcome.getString("optionId"))
              : new JsonObject().put("outcome", "cancelled");
          return (Object) new JsonObject().put("outcome", answer);
        })
        .recover(err -> {
          if (ErrorCode.of(err) == ErrorCode.BAD_REQUEST) {
            emit(error("The agent asked for permission in a form Switchboard cannot show (" + err.getMessage()
                + "); it was answered cancelled."));
          } else {
            log.error("[{}] permission request failed", tag, err);
          }
          return Future.succeededFuture(new JsonObject().put("outcome", new JsonObject().put("outcome", "cancelled")));
        });
  }

  /** A {@code session/update} for this session (routed here by {@link AgentProcess}). */
  void update(Object params) {
    if (replaying) {
      if (replayTail != null) {
        replayQuiet(); // still replaying: wait for the silence again
      }
      return;
    }
    JsonObject p = JsonRpcPeer.object(params);
    if (!(p.getValue("update") instanceof JsonObject update)) {
      log.warn("[{}] ignored a session/update without an update object", tag);
      return;
    }
    Object kind = update.getValue("sessionUpdate");
    if ("config_option_update".equals(kind) && update.getValue("configOptions") instanceof JsonArray options) {
      configOptions = options.copy();
    }
    if ("current_mode_update".equals(kind) && modes != null && update.getValue("currentModeId") instanceof String m) {
      modes.put("currentModeId", m); // the agent switched itself (Claude into plan mode): the page shows it
    }
    if (("tool_call".equals(kind) || "tool_call_update".equals(kind))
        && update.getValue("toolCallId") instanceof String toolCallId) {
      toolCalls.computeIfAbsent(toolCallId, k -> new JsonObject()).mergeIn(update);
      long size = Math.max(256, current == null ? 0 : current.lineBytes);
      toolCallBytes.merge(toolCallId, size, Long::sum);
      toolCallBytesKept += size;
      forgetOldToolCalls(toolCallId);
      if (turn != null) {
        turn.toolCalls.add(toolCallId);
      }
    }
    emit(new JsonObject().put("kind", "acp").put("update", update));
  }

  /**
   * The turn ended without finishing some of its tool calls (cancelled, failed, its agent gone): they
   * will never finish, so they are marked cancelled rather than left "pending" for ever (as Zed does;
   * ACP leaves it to the client).
   */
  private void cancelUnfinishedToolCalls(Turn t) {
    for (String id : t.toolCalls) {
      JsonObject known = toolCalls.get(id);
      Object status = known == null ? null : known.getValue("status");
      if (known != null && !"completed".equals(status) && !"failed".equals(status)) {
        JsonObject update = new JsonObject().put("sessionUpdate", "tool_call_update").put("toolCallId", id)
            .put("status", "cancelled");
        known.put("status", "cancelled");
        emit(new JsonObject().put("kind", "acp").put("update", update));
      }
    }
  }

  /** Drops the least recently used tool calls (never {@code keep}) while over the count or the bytes. */
  private void forgetOldToolCalls(String keep) {
    var eldest = toolCalls.keySet().iterator();
    while ((toolCalls.size() > TOOL_CALLS_KEPT || toolCallBytesKept > limits.toolCallBytes()) && eldest.hasNext()) {
      String id = eldest.next();
      if (id.equals(keep)) {
        continue;
      }
      eldest.remove();
      Long bytes = toolCallBytes.remove(id);
      toolCallBytesKept -= bytes == null ? 0 : bytes;
    }
  }

  // ---- helpers ----

  private void publishSessionCancelled() {
    if (acpSessionId != null) {
      bus.publish(Addresses.SESSION_CANCELLED, new JsonObject().put("threadId", threadId)
          .put("sessionId", acpSessionId));
    }
  }

  private void emit(JsonObject event) {
    String kind = event.getString("kind");
    if ("turn_started".equals(kind)) {
      turns.started++;
    } else if ("turn_ended".equals(kind) || ("agent_exited".equals(kind) && turns.started > turns.ended)) {
      turns.ended++;
    }
    // Charged to the backlog until the transcript has it: an agent that outruns the store is paused.
    long cost = Math.max(256, current == null ? 0 : current.lineBytes);
    if (current != null) {
      current.lineBytes = 0; // charged once
    }
    backlog.add(cost, current == null ? null : current.process);
    bus.request(Addresses.THREAD_RECORD, new JsonObject().put("threadId", threadId).put("event", event))
        .onComplete(x -> backlog.done(cost));
  }

  private static JsonObject system(String text) {
    return new JsonObject().put("kind", "system").put("text", text);
  }

  private static JsonObject error(String text) {
    return system(text).put("level", "error");
  }

  private boolean isAuthRequired(Throwable err) {
    return err instanceof JsonRpcError e && e.code() == JsonRpcError.AUTH_REQUIRED;
  }

  private String describe(Throwable err) {
    if (err instanceof StartFailure) {
      return err.getMessage();
    }
    if (err instanceof JsonRpcError e) {
      if (e.code() == JsonRpcError.AUTH_REQUIRED) {
        return "The agent " + spec.name() + " needs you to authenticate first (" + e.getMessage() + "). "
            + (authMethods().isEmpty() ? "Log in with the agent's own command line first."
            : "Log in with the agent's own command line, or set agents[].authMethod to one of "
            + authMethods().stream().map(m -> m instanceof JsonObject o ? o.getString("id") : String.valueOf(m)).toList()
            + ".");
      }
      // Agents explain themselves in error.data ("OPENAI_API_KEY is not set"): show it, not just the code.
      return "The agent " + spec.name() + " failed: " + e.getMessage() + explanation(e.data()) + " (code " + e.code() + ")";
    }
    return "The agent " + spec.name() + " failed: " + err.getMessage();
  }

  /** What an error's {@code data} says, read leniently and cut short: ": <text>", or nothing. */
  static String explanation(Object data) {
    Object text = data;
    if (data instanceof JsonObject o) {
      text = o.getValue("details") instanceof String s ? s : o.getValue("message") instanceof String s ? s
          : o.getValue("error") instanceof String s ? s : o.isEmpty() ? null : o.encode();
    } else if (data instanceof JsonArray a) {
      text = a.isEmpty() ? null : a.encode();
    }
    if (text == null || String.valueOf(text).isBlank()) {
      return "";
    }
    String s = String.valueOf(text).strip();
    return ": " + (s.length() > 500 ? s.substring(0, 500) + "…" : s);
  }

  private JsonArray authMethods() {
    return current == null ? new JsonArray() : current.authMethods;
  }

  private static Integer integer(Object value) {
    return value instanceof Number n ? n.intValue() : null;
  }
}
