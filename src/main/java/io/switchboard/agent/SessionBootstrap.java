package io.switchboard.agent;

import io.switchboard.bus.Addresses;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.ProjectSpec;
import io.switchboard.jsonrpc.JsonRpcError;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.switchboard.process.Sandbox;
import io.switchboard.project.GitLayout;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Starting the agent for one session: the sandbox check, a process from the {@link AgentPool}
 * (spawned and past {@code initialize} there), then this thread's ACP session on it — found open,
 * {@code session/resume}d, {@code session/load}ed with its replay hidden (the transcript has it), or
 * made with {@code session/new} (and {@code authenticate} once, when configured) — within the start
 * timeout. Lives on the agent room's event loop.
 */
final class SessionBootstrap {
  /** After {@code session/load} answers, replayed updates may still come: hidden until this long a silence. */
  static final long REPLAY_QUIET_MS = 150;
  /** ... but no longer than this after the answer. */
  static final long REPLAY_MAX_MS = 3_000;

  private final AgentSession session;
  private final Context context;
  private final AgentSpec spec;
  private final Workspace workspace;
  private final AgentPool pool;
  private final long startTimeoutMs;
  /** Hidden from the agent by its sandbox, but for its own workspace. */
  private final Path dataDir;
  /** Why bwrap cannot run here, or null when it can. */
  private final String sandboxProblem;
  private boolean toldUnconfined;
  private boolean replaying;
  /**
   * The thread was opened on a session begun elsewhere (ACP session/list): its history is not in the
   * transcript yet, so the next load's replay is kept, not hidden.
   */
  private boolean importHistory;
  /** While the tail of a replay is awaited: completes after {@link #REPLAY_QUIET_MS} without an update. */
  private Promise<Void> replayTail;
  private long replayQuietTimer = -1;
  private long replayDeadline;

  SessionBootstrap(AgentSession session, Context context, Workspace workspace, AgentSession.Shared shared) {
    this.session = session;
    this.context = context;
    this.spec = session.spec();
    this.workspace = workspace;
    this.pool = shared.pool();
    this.startTimeoutMs = shared.timings().startTimeoutMs();
    this.dataDir = shared.dataDir();
    this.sandboxProblem = shared.sandboxProblem();
  }

  /** A process for the session, with the thread's ACP session open on it. */
  Future<Void> start() {
    return checkSandbox().compose(v -> pool.processFor(session)).compose(this::attach);
  }

  void importHistory() {
    importHistory = true;
  }

  /** Whether this agent runs in the sandbox: its mode, and whether bwrap works here. */
  boolean confinedHere() {
    return spec.sandbox() == Sandbox.Mode.BWRAP || (spec.sandbox() == Sandbox.Mode.AUTO && sandboxProblem == null);
  }

  /** The argv of the agent or one of its terminals: inside the sandbox (docs/architecture.md) when it has one. */
  List<String> confined(List<String> command, Path cwd) {
    return confinedHere() ? Sandbox.wrap(command, dataDir, workspace.root(), cwd, writes(), projectConfinement())
        : command;
  }

  /**
   * What the agent may write besides its workspace, its terminals alike (they share its temporary
   * folder): found from the agent's own argv, whatever command a terminal runs.
   */
  private Sandbox.Writes writes() {
    return Sandbox.Writes.of(dataDir, sandboxOwner(spec, session.threadId()), session.argv(), spec.env(),
        spec.writable());
  }

  /**
   * Whose private temporary folder a thread's agent and terminals use: the thread's, or, when the
   * agent serves all its threads from one process, that process's.
   */
  static String sandboxOwner(AgentSpec spec, String threadId) {
    return spec.shareProcess() ? "shared-" + spec.id() : threadId;
  }

  /**
   * A project thread's extra walls: in a worktree, the person's own checkout hidden and every git
   * file (the repository's {@code .git}, the worktree's pointer) read-only; in a shared project folder,
   * its {@code .git} read-only. Blocking (reads the repository's layout).
   */
  private Sandbox.Confinement projectConfinement() {
    ProjectSpec project = session.project();
    if (project == null) {
      return Sandbox.Confinement.NONE;
    }
    GitLayout layout;
    try {
      layout = GitLayout.of(project.path());
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot read the repository of project " + project.id() + ": "
          + e.getMessage(), e);
    }
    if (layout == null) {
      return Sandbox.Confinement.NONE;
    }
    if (!project.perThread() || workspace.root().equals(project.path())) {
      // The project's own folder (shared, or a session begun there and continued here).
      return new Sandbox.Confinement(List.of(), List.of(layout.commonDir()));
    }
    return new Sandbox.Confinement(List.of(project.path()),
        List.of(layout.commonDir(), workspace.root().resolve(".git")));
  }

  /**
   * Whether a {@code session/update} belongs to a replay the thread already has (it is then hidden);
   * while its tail is awaited, the silence awaited starts again.
   */
  boolean replayed() {
    if (!replaying) {
      return false;
    }
    if (replayTail != null) {
      replayQuiet(); // still replaying: wait for the silence again
    }
    return true;
  }

  /** Opens (or resumes, or finds open) this thread's ACP session on {@code p}, within the start timeout. */
  private Future<Void> attach(AgentProcess p) {
    if (p.exited) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the agent exited"));
    }
    session.attachTo(p);
    String acpSessionId = session.acpSessionId();
    if (acpSessionId != null && p.isOpen(acpSessionId)) {
      p.bind(acpSessionId, session); // a shared process that still has it: nothing to load
      return Future.succeededFuture();
    }
    return openSession(p).timeout(startTimeoutMs, TimeUnit.MILLISECONDS)
        .recover(err -> Future.failedFuture(err instanceof TimeoutException
            ? new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the agent did not open a session within "
            + startTimeoutMs / 1000 + " s") : err))
        .onSuccess(v -> p.opened(session.acpSessionId()));
  }

  /**
   * Before a start: an agent that must be sandboxed where bwrap cannot run is refused; one that
   * would be sandboxed if it could runs without, and the thread is told so once.
   */
  private Future<Void> checkSandbox() {
    if (spec.sandbox() == Sandbox.Mode.BWRAP && sandboxProblem != null) {
      return Future.failedFuture(new AgentSession.StartFailure("The agent " + spec.name() + " must run in a sandbox "
          + "(agents[].sandbox is \"bwrap\"), but " + sandboxProblem + "."));
    }
    if (spec.sandbox() == Sandbox.Mode.AUTO && sandboxProblem != null && !toldUnconfined) {
      toldUnconfined = true;
      session.emit(AgentSession.system("The agent " + spec.name() + " runs without a sandbox: " + sandboxProblem
          + ". It can read whatever your user can, this gateway's token and database included. Install "
          + "bubblewrap, or set agents[].sandbox to \"none\" to run it unconfined knowingly."));
    }
    return Future.succeededFuture();
  }

  private Future<Void> openSession(AgentProcess p) {
    String acpSessionId = session.acpSessionId();
    if (acpSessionId == null) {
      return freshSession(p, null);
    }
    JsonObject params = sessionParams().put("sessionId", acpSessionId);
    JsonObject capabilities = p.capabilities;
    JsonObject sessionCaps = capabilities.getValue("sessionCapabilities") instanceof JsonObject c ? c : new JsonObject();
    boolean canLoad = Boolean.TRUE.equals(capabilities.getValue("loadSession"));
    if (importHistory && canLoad) {
      // Loading replays the conversation, which the new thread shows; resuming would not.
      importHistory = false;
      p.bind(acpSessionId, session);
      replaying = false;
      return p.request("session/load", params, startTimeoutMs)
          .compose(result -> session.options().apply(p, result))
          .recover(err -> freshSession(p, "The agent could not open that session (" + session.describe(err)
              + "); a new one was started."));
    }
    if (importHistory) {
      importHistory = false;
      session.emit(AgentSession.system("This agent resumes sessions without replaying them: the conversation so "
          + "far is not shown here, but the agent remembers it."));
    }
    if (sessionCaps.getValue("resume") != null && !Boolean.FALSE.equals(sessionCaps.getValue("resume"))) {
      p.bind(acpSessionId, session);
      return p.request("session/resume", params, startTimeoutMs)
          .compose(result -> session.options().apply(p, result))
          .recover(err -> freshSession(p, "The agent could not resume the previous session ("
              + session.describe(err) + "); a new one was started."));
    }
    if (canLoad) {
      p.bind(acpSessionId, session);
      replaying = true; // the agent replays the history, which the transcript already has
      return p.request("session/load", params, startTimeoutMs)
          .compose(result -> replayTail().compose(v -> session.options().apply(p, result)), err -> {
            replaying = false;
            return Future.failedFuture(err);
          })
          .recover(err -> freshSession(p, "The agent could not load the previous session ("
              + session.describe(err) + "); a new one was started."));
    }
    return freshSession(p, "This agent cannot restore a previous session, so a new one was started: it does not "
        + "remember the conversation above.");
  }

  /**
   * What {@code session/new}, {@code session/load} and {@code session/resume} all say: where (a
   * project's folder wins over the agent's own cwd), and the project's MCP servers (none without one).
   */
  private JsonObject sessionParams() {
    ProjectSpec project = session.project();
    if (project != null) {
      return new JsonObject().put("cwd", workspace.root().toString()).put("mcpServers", project.mcpServers().copy());
    }
    String cwd = (spec.cwd() == null ? workspace.root() : Path.of(spec.cwd()).toAbsolutePath()).toString();
    return new JsonObject().put("cwd", cwd).put("mcpServers", new JsonArray());
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
    JsonObject params = sessionParams();
    return p.request("session/new", params, startTimeoutMs)
        .recover(err -> session.authenticateAndRetry(err, () -> p.request("session/new", params, startTimeoutMs)))
        .compose(result -> {
          Object id = JsonRpcPeer.object(result).getValue("sessionId");
          if (!(id instanceof String s) || s.isEmpty()) {
            return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR,
                "the agent answered session/new without a sessionId"));
          }
          AgentSession holder = p.boundTo(s);
          if (holder != null && holder != session) {
            // A shared process must keep its threads apart: one id for two threads would mix them.
            return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the agent answered "
                + "session/new with the session id of another thread's session (" + s + ")"));
          }
          session.acpSessionId(s);
          p.bind(s, session);
          if (note != null) {
            session.emit(AgentSession.system(note));
          }
          return session.bus().request(Addresses.THREAD_SESSION, new JsonObject().put("threadId", session.threadId())
              .put("acpSessionId", s)).compose(x -> session.options().apply(p, result));
        });
  }
}
