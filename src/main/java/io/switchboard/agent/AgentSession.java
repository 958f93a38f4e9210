package io.switchboard.agent;

import io.switchboard.common.BlockingLane;
import io.switchboard.config.ProjectSpec;
import io.switchboard.bus.Addresses;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.Limits;
import io.switchboard.jsonrpc.JsonRpcError;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ACP client for one thread: its session with an agent process ({@link AgentProcess}, its own
 * or one shared by the agent's threads, handed out by the {@link AgentPool}), and the per-thread
 * state its parts share: the prompt queue ({@link TurnQueue}), the start ({@link SessionBootstrap}),
 * modes and config options ({@link SessionOptions}), the client methods the agent may call
 * ({@link ClientMethods}) and its recent tool calls ({@link ToolCalls}). Lives on the agent room's
 * event loop.
 *
 * <p>A process that exits (or was stopped as idle) is started again by the next prompt, which
 * resumes the ACP session ({@code session/resume}, else {@code session/load} with its replay
 * hidden, else a new session).
 */
final class AgentSession {
  private static final Logger log = LoggerFactory.getLogger(AgentSession.class);
  static final int PROTOCOL_VERSION = 1;

  private enum State { STOPPED, STARTING, READY }

  private final Context context;
  private final EventBus bus;
  private final AgentSpec spec;
  private final List<String> argv;
  private final String threadId;
  private final Workspace workspace;
  /** The project the thread works in, or null (a scratch workspace). */
  private final ProjectSpec project;
  private final String tag;
  private final TurnQueue turns;
  private final SessionBootstrap bootstrap;
  private final SessionOptions options;
  private final ClientMethods clientMethods;
  private final ToolCalls toolCalls;
  private State state = State.STOPPED;
  private Future<Void> starting;
  /** The process serving this session while it is READY (or opening its session on it). */
  private AgentProcess current;
  /** This session's terminals on {@link #current}. */
  private Terminals terminals;
  private String acpSessionId;
  /** Permission questions of this session still open: it is not idle while one is. */
  private int asking;
  /** Since when it has had no turn, queued prompt or open question (0: busy). */
  private long idleSince = System.currentTimeMillis();
  private boolean closed;

  private final AgentRoom.Timings timings;
  private final AgentRoom.Turns turnCounts;
  private final Backlog backlog;
  private final Limits limits;
  private final AgentPool pool;
  /** The gateway's process mark (ProcessTree): whatever the agent starts carries it. */
  private final String owner;

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
    this(context, spec, argv, threadId, workspace, acpSessionId, shared, null);
  }

  /** {@code project}: the project the thread works in (its folder, sandbox and MCP servers), or null. */
  AgentSession(Context context, AgentSpec spec, List<String> argv, String threadId, Path workspace,
               String acpSessionId, Shared shared, ProjectSpec project) {
    this.pool = shared.pool();
    this.owner = shared.owner();
    this.timings = shared.timings();
    this.turnCounts = shared.turns();
    this.backlog = shared.backlog();
    this.limits = shared.limits();
    this.context = context;
    this.bus = context.owner().eventBus();
    this.spec = spec;
    this.argv = argv;
    this.threadId = threadId;
    this.project = project;
    this.workspace = new Workspace(workspace, limits.fileReadBytes(), project != null);
    this.acpSessionId = acpSessionId;
    this.tag = "agent " + spec.id() + " of " + threadId;
    this.turns = new TurnQueue(this, context, backlog);
    this.bootstrap = new SessionBootstrap(this, context, this.workspace, shared);
    this.options = new SessionOptions(this);
    this.clientMethods = new ClientMethods(this, bus, this.workspace, new BlockingLane(context.owner(), 1));
    this.toolCalls = new ToolCalls(limits.toolCallBytes());
  }

  // ---- what the room asks of it ----

  /**
   * Queues a prompt with its images (checked by the thread room); returns how many are ahead of it
   * (0: it runs now). The images are held, in bytes, against the room's budget until the turn ends.
   */
  int enqueue(String text, JsonArray images, String promptedBy) {
    if (closed) {
      throw new IllegalStateException("the agent of " + threadId + " is stopping");
    }
    int ahead = turns.add(text, images, promptedBy);
    idleSince = 0;
    turns.pump();
    return ahead;
  }

  /** Stops the current turn: {@code session/cancel}, and its pending permissions end cancelled. */
  boolean cancel() {
    TurnQueue.Turn t = turns.current();
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
        if (turns.current() == t && current != null) {
          log.warn("[{}] no end of turn {} ms after session/cancel; stopping the agent", tag, timings.cancelGraceMs());
          if (current.shared) {
            // Its other threads' turns go on: this turn ends here, and the session starts afresh.
            emit(system("The agent did not stop within " + timings.cancelGraceMs() / 1000 + " s of the cancel; the "
                + "turn was ended without it."));
            detach();
            state = State.STOPPED;
            turns.end(t, new JsonObject().put("stopReason", "cancelled"), null);
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
        .put("pid", current == null || current.process == null ? null : current.pid())
        .put("busy", turns.current() != null)
        .put("shared", current != null && current.shared)
        .put("queued", turns.queued()).put("acpSessionId", acpSessionId)
        .put("terminals", terminals == null ? 0 : terminals.count());
  }

  String threadId() {
    return threadId;
  }

  AgentSpec spec() {
    return spec;
  }

  /** Its modes and config options: what the agent offers, what a person chose. */
  SessionOptions options() {
    return options;
  }

  /** Whether it still waits for a process to start its turn on (not stopped, not closed). */
  boolean wantsProcess() {
    TurnQueue.Turn t = turns.current();
    return state == State.STARTING && t != null && !t.cancelling && !closed;
  }

  /** Since when it has had nothing to do (no turn, queued prompt or open question); 0 while it has. */
  long idleSince() {
    return idleSince;
  }

  /** Whether it may be stopped now without losing anything: no turn, nothing queued, no open question. */
  boolean idle() {
    return idleSince != 0;
  }

  /** Notes whether it has anything to do now; the pool hears when it just became idle. */
  void checkIdle() {
    boolean idle = turns.current() == null && turns.queued() == 0 && asking == 0 && state != State.STARTING;
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
    return close(false);
  }

  /**
   * The same; {@code deleting}: its thread is being deleted, so the agent is asked to delete the
   * session ({@code session/delete}) rather than only close it ({@code session/close}), where it can.
   */
  Future<Void> close(boolean deleting) {
    closed = true;
    turns.drop();
    pool.withdraw(this);
    AgentProcess p = current;
    boolean busy = turns.current() != null || asking > 0;
    if (p != null && p.shared && acpSessionId != null && busy) {
      // The process goes on serving others: this session's turn and questions end here.
      p.peer.notify("session/cancel", new JsonObject().put("sessionId", acpSessionId));
      publishSessionCancelled();
    }
    detach();
    if (p == null) {
      return Future.succeededFuture();
    }
    Future<Void> said = busy ? Future.succeededFuture() : p.endSession(acpSessionId, deleting);
    return p.shared ? said : said.eventually(() -> p.stop()).mapEmpty();
  }

  /** The login methods of the last process that served it: a failed start is explained after it left. */
  private JsonArray lastAuthMethods = new JsonArray();

  /** No longer served by {@link #current}: its terminals end. */
  private void detach() {
    if (current != null) {
      lastAuthMethods = current.authMethods;
      current.detach(this);
      current = null;
    }
    if (terminals != null) {
      terminals.killAll();
      terminals = null;
    }
  }

  // ---- what the pool asks of it ----

  /** Whether this agent runs in the sandbox: its mode, and whether bwrap works here. */
  boolean confinedHere() {
    return bootstrap.confinedHere();
  }

  /** The argv of the agent or one of its terminals: inside the sandbox (docs/architecture.md) when it has one. */
  ProjectSpec project() {
    return project;
  }

  /** The next session open keeps the agent's replay of a session begun elsewhere (its history). */
  void importHistory() {
    bootstrap.importHistory();
  }

  Path workspaceRoot() {
    return workspace.root();
  }

  List<String> confined(List<String> command, Path cwd) {
    return bootstrap.confined(command, cwd);
  }

  /** The thread's workspace, made if missing (blocking); the agent's working directory unless it has its own. */
  Path createWorkspace() throws java.io.IOException {
    return workspace.create();
  }

  List<String> argv() {
    return argv;
  }

  // ---- its process: started, attached, exited ----

  /** Its process, started with the thread's ACP session open on it: at once when READY, else once started. */
  Future<Void> ensureStarted() {
    if (state == State.READY) {
      return Future.succeededFuture();
    }
    if (state == State.STARTING) {
      return starting;
    }
    state = State.STARTING;
    Promise<Void> ready = Promise.promise();
    starting = ready.future();
    bootstrap.start().onComplete(ready);
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

  /** Served by {@code p} from now on (its session not open yet): it hears p's exit, and has terminals there. */
  void attachTo(AgentProcess p) {
    current = p;
    p.attach(this);
    terminals = new Terminals(context, workspace, tag, owner, backlog, limits.terminalBytes(), this::confined)
        .onExit(done -> emit(done.put("kind", "terminal_output")));
  }

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
    TurnQueue.Turn t = turns.take();
    state = State.STOPPED;
    detach();
    if (closed) {
      return;
    }
    if (t != null) {
      toolCalls.cancelUnfinished(t.toolCalls, this::emit);
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
    turns.pump();
    checkIdle();
  }

  /** A line the agent sent over the limit was dropped: said in the thread. */
  void lineDropped(long bytes) {
    emit(error("The agent sent a message of " + bytes + " bytes, over the " + (limits.lineBytes() >> 20)
        + " MiB limit; it was dropped."));
  }

  // ---- what the agent sends us ----

  /** What answers the agent's requests for this session (routed here by {@link AgentProcess}). */
  ClientMethods clientMethods() {
    return clientMethods;
  }

  /** A {@code session/update} for this session (routed here by {@link AgentProcess}). */
  void update(Object params) {
    if (bootstrap.replayed()) {
      return;
    }
    JsonObject p = JsonRpcPeer.object(params);
    if (!(p.getValue("update") instanceof JsonObject update)) {
      log.warn("[{}] ignored a session/update without an update object", tag);
      return;
    }
    Object kind = update.getValue("sessionUpdate");
    options.heard(kind, update);
    if (("tool_call".equals(kind) || "tool_call_update".equals(kind))
        && update.getValue("toolCallId") instanceof String toolCallId) {
      toolCalls.heard(toolCallId, update, current == null ? 0 : current.lineBytes);
      TurnQueue.Turn t = turns.current();
      if (t != null) {
        t.toolCalls.add(toolCallId);
      }
    }
    emit(new JsonObject().put("kind", "acp").put("update", update));
    if ("usage_update".equals(kind) && update.getValue("cost") instanceof JsonObject cost) {
      costReported(cost);
    }
  }

  /** A session's running cost, as the agent reports it: the store keeps what it adds, per thread and per day. */
  private void costReported(JsonObject cost) {
    if (!(cost.getValue("amount") instanceof Number amount) || !(cost.getValue("currency") instanceof String currency)
        || !currency.matches("[A-Za-z]{3}")) {
      return; // not a cost this gateway can add up (the page still shows what the agent said)
    }
    String upper = currency.toUpperCase(java.util.Locale.ROOT);
    bus.<JsonObject>request(Addresses.STORE_USAGE_COST, new JsonObject().put("threadId", threadId)
            .put("agentId", spec.id()).put("currency", upper).put("total", amount))
        .onSuccess(m -> bus.publish(Addresses.USAGE_COST, new JsonObject().put("threadId", threadId)
            .put("agentId", spec.id()).put("currency", upper).put("added", m.body().getValue("added"))))
        .onFailure(err -> log.warn("[{}] its cost report could not be kept: {}", tag, err.getMessage()));
  }

  // ---- what its parts share ----

  /** The process serving it (READY, or opening its session on it); null when none. */
  AgentProcess process() {
    return current;
  }

  /** Its process when READY with its ACP session open: what a mode or setting is sent to now; else null. */
  AgentProcess ready() {
    return state != State.READY || current == null || acpSessionId == null ? null : current;
  }

  /** Its terminals, for a request of process {@code g}: null unless g serves it now. */
  Terminals terminalsOf(AgentProcess g) {
    return current == g ? terminals : null;
  }

  String acpSessionId() {
    return acpSessionId;
  }

  /** The agent opened a new ACP session for the thread. */
  void acpSessionId(String id) {
    acpSessionId = id;
  }

  boolean closed() {
    return closed;
  }

  /** The person whose prompt the turn in progress answers (null: none running, or not named). */
  String promptedBy() {
    TurnQueue.Turn t = turns.current();
    return t == null ? null : t.promptedBy;
  }

  /** Whether the person stopped the turn in progress. */
  boolean cancelling() {
    return turns.cancelling();
  }

  ToolCalls toolCalls() {
    return toolCalls;
  }

  EventBus bus() {
    return bus;
  }

  String tag() {
    return tag;
  }

  /** The agent of {@code g} asked a permission question: until answered, it counts against the room and this is not idle. */
  void asked(AgentProcess g) {
    backlog.asked(g.process);
    asking++;
    idleSince = 0;
  }

  /** A permission question ended. */
  void answered() {
    backlog.answered();
    asking--;
    checkIdle();
  }

  /**
   * After a request the agent refused for want of authentication ({@code -32000}): {@code authenticate}
   * with the configured authMethod and the request {@code again}, once; any other failure stands.
   */
  <T> Future<T> authenticateAndRetry(Throwable err, Supplier<Future<T>> again) {
    if (err instanceof JsonRpcError e && e.code() == JsonRpcError.AUTH_REQUIRED && spec.authMethod() != null) {
      return current.peer.request("authenticate", new JsonObject().put("methodId", spec.authMethod()))
          .compose(v -> again.get());
    }
    return Future.failedFuture(err);
  }

  void publishSessionCancelled() {
    if (acpSessionId != null) {
      bus.publish(Addresses.SESSION_CANCELLED, new JsonObject().put("threadId", threadId)
          .put("sessionId", acpSessionId));
    }
  }

  /** An event of the thread: recorded in its transcript, and only then published. */
  void emit(JsonObject event) {
    String kind = event.getString("kind");
    if ("turn_started".equals(kind)) {
      turnCounts.started++;
    } else if ("turn_ended".equals(kind) || ("agent_exited".equals(kind) && turnCounts.started > turnCounts.ended)) {
      turnCounts.ended++;
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

  static JsonObject system(String text) {
    return new JsonObject().put("kind", "system").put("text", text);
  }

  static JsonObject error(String text) {
    return system(text).put("level", "error");
  }

  /** A failure as the thread is told it. */
  String describe(Throwable err) {
    if (err instanceof StartFailure) {
      return err.getMessage();
    }
    if (err instanceof JsonRpcError e) {
      if (e.code() == JsonRpcError.AUTH_REQUIRED) {
        return "The agent " + spec.name() + " needs you to log in first (" + e.getMessage() + "). " + howToLogIn();
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

  /**
   * The agent's ways to log in, in words a person can act on: a {@code terminal} method as the exact
   * command line to run on this host (the agent's own command with the method's arguments and
   * environment); one the agent runs itself as the {@code agents[].authMethod} that picks it.
   */
  String howToLogIn() {
    List<String> terminal = new java.util.ArrayList<>();
    for (Object o : terminalLogins()) {
      terminal.add(((JsonObject) o).getString("name") + ": " + ((JsonObject) o).getString("command"));
    }
    List<String> agent = new java.util.ArrayList<>();
    for (Object m : authMethods()) {
      if (m instanceof JsonObject o && o.getValue("id") instanceof String id && !isTerminalLogin(o)) {
        // What the method itself says it needs (Codex's API key login: "requires CODEX_API_KEY"), and the
        // variables an env_var method names: an authMethod alone is not enough for those.
        StringBuilder said = new StringBuilder(o.getValue("name") instanceof String n && !n.isBlank() ? n : id);
        if (o.getValue("description") instanceof String d && !d.isBlank()) {
          said.append(": ").append(d.length() > 200 ? d.substring(0, 200) + "\u2026" : d.strip());
        }
        List<String> vars = new java.util.ArrayList<>();
        if (o.getValue("varName") instanceof String v) {
          vars.add(v);
        }
        JsonRpcPeer.array(o.getValue("vars")).forEach(v -> {
          if (v instanceof JsonObject vo && vo.getValue("name") instanceof String name) {
            vars.add(name);
          }
        });
        agent.add(id + " (" + said + ")" + (vars.isEmpty() ? "" : ", with " + String.join(" and ", vars)
            + " set in agents[].env"));
      }
    }
    if (terminal.isEmpty() && agent.isEmpty()) {
      return "Log in with the agent's own command line first, then send your message again.";
    }
    StringBuilder how = new StringBuilder();
    if (!terminal.isEmpty()) {
      how.append("Run this on the host where Switchboard runs, as the user it runs as, then send your message "
          + "again: ").append(String.join("; or ", terminal)).append('.');
    }
    if (!agent.isEmpty()) {
      how.append(terminal.isEmpty() ? "" : " Or: ").append("set agents[].authMethod to ")
          .append(String.join(" or ", agent)).append(" in the config, for the agent to log in by itself.");
    }
    return how.toString();
  }

  /** The agent's terminal logins: {@code [{name, command}]}, each the command line to run on the host. */
  JsonArray terminalLogins() {
    JsonArray out = new JsonArray();
    for (Object m : authMethods()) {
      if (!(m instanceof JsonObject o) || !isTerminalLogin(o)) {
        continue;
      }
      StringBuilder line = new StringBuilder();
      if (o.getValue("env") instanceof JsonObject env) {
        env.forEach(v -> line.append(v.getKey()).append('=').append(shellWord(String.valueOf(v.getValue()))).append(' '));
      }
      List<String> argv = new java.util.ArrayList<>(spec.command());
      JsonRpcPeer.array(o.getValue("args")).forEach(a -> argv.add(String.valueOf(a)));
      line.append(String.join(" ", argv.stream().map(AgentSession::shellWord).toList()));
      String id = o.getString("id");
      out.add(new JsonObject().put("name", o.getValue("name") instanceof String n && !n.isBlank() ? n : id)
          .put("command", line.toString()));
    }
    return out;
  }

  private boolean isTerminalLogin(JsonObject method) {
    return "terminal".equals(method.getValue("type")) && method.getValue("id") instanceof String
        && !spec.command().isEmpty();
  }

  /**
   * A failed turn as the thread shows it: its words, and for a login the agent demands, the command
   * lines to run ({@code login: [{name, command}]}: the page offers each with a copy button).
   */
  JsonObject failure(Throwable err) {
    JsonObject event = error(describe(err));
    if (err instanceof JsonRpcError e && e.code() == JsonRpcError.AUTH_REQUIRED && !terminalLogins().isEmpty()) {
      event.put("login", terminalLogins());
    }
    return event;
  }

  /** A word as a POSIX shell reads it back unchanged: bare when safe, else in single quotes. */
  static String shellWord(String word) {
    return word.matches("[A-Za-z0-9_./:=@%+,-]+") ? word : "'" + word.replace("'", "'\\''") + "'";
  }

  private JsonArray authMethods() {
    return current != null ? current.authMethods : lastAuthMethods;
  }

  /** A failed start explained in full: shown as it is. */
  static final class StartFailure extends RuntimeException {
    StartFailure(String message) {
      super(message, null, false, false);
    }
  }
}
