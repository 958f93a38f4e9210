package io.switchboard.agent;

import io.switchboard.config.AgentSpec;
import io.switchboard.config.Limits;
import io.switchboard.jsonrpc.JsonRpcError;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.switchboard.jsonrpc.LineChannel;
import io.switchboard.jsonrpc.StdioProcess;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One spawn of an agent: its process, the JSON-RPC conversation over its pipes, and what it said
 * of itself in {@code initialize}. It serves one thread's session, or, for an agent with
 * {@code agents[].shareProcess}, the sessions of many threads: what the agent sends is routed by
 * its {@code sessionId}, and a session it names that it was not given is refused. Its generation
 * id travels on {@code sb.permission.register} and {@code sb.agent.exited}, so the permission room
 * ends its requests however the two race. Lives on the agent room's event loop.
 */
final class AgentProcess {
  private static final Logger log = LoggerFactory.getLogger(AgentProcess.class);

  final String generation;
  final AgentSpec spec;
  final boolean shared;
  final String tag;
  private final Context context;
  private final Limits limits;
  StdioProcess process;
  JsonRpcPeer peer;
  JsonObject capabilities = new JsonObject();
  JsonArray authMethods = new JsonArray();
  /** Read on worker threads too: a file call queued before the exit must not act after it. */
  volatile boolean exited;
  /** Spawned and initialized. */
  boolean ready;
  /** Whether the pool stopped it on purpose (idle, evicted, the gateway stopping). */
  boolean stopping;
  /** The size of the agent line being handled: what the events it becomes are charged to the backlog. */
  long lineBytes;
  /** Every session it serves, opening ones included: they hear its exit. */
  private final Set<AgentSession> attached = new LinkedHashSet<>();
  /** The sessions it serves by their ACP session id (shared processes route by it). */
  private final Map<String, AgentSession> bySessionId = new HashMap<>();
  /** ACP sessions this process has open: a thread that comes back to one needs no load. */
  private final Set<String> open = new HashSet<>();
  private final List<Runnable> exitListeners = new ArrayList<>();

  AgentProcess(Context context, AgentSpec spec, String generation, boolean shared, Limits limits) {
    this.context = context;
    this.limits = limits;
    this.spec = spec;
    this.generation = generation;
    this.shared = shared;
    this.tag = "agent " + spec.id() + (shared ? " (shared)" : "") + " #" + generation.substring(
        generation.lastIndexOf('/') + 1);
  }

  /** Methods the agent used that Switchboard does not handle: each is logged once (at most 32 named). */
  private final java.util.Set<String> unknownMethods = new java.util.HashSet<>();

  /**
   * Whether {@code method} is new here and may be logged. Only the first 100 characters of a name are
   * kept: a name is the agent's text, and 32 of them must not hold 32 lines' worth of bytes.
   */
  private boolean unknownOnce(String method) {
    String key = method.length() > 100 ? method.substring(0, 100) : method;
    return unknownMethods.size() < 32 && unknownMethods.add(key);
  }

  /**
   * Spawns it ({@code argv} is computed on a worker thread: it may create the workspace and resolve
   * links) and says {@code initialize}; fails, with the last lines of its stderr when it died, if it
   * is not ready within {@code timeoutMs}.
   */
  Future<Void> start(Callable<List<String>> argv, Path cwd, String owner, long timeoutMs) {
    peer = new JsonRpcPeer(tag, line -> process == null ? Future.failedFuture("not started") : process.write(line));
    peer.handler(new JsonRpcPeer.Handler() {
      @Override
      public Future<Object> request(String method, Object params) {
        return request(method, params, Promise.<Void>promise().future());
      }

      @Override
      public Future<Object> request(String method, Object params, Future<Void> withdrawn) {
        if (!ClientMethods.KNOWN.contains(method)) {
          if (unknownOnce(method)) {
            log.info("[{}] answered the agent's {} request method-not-found (Switchboard does not offer it)", tag,
                method);
          }
          return Future.failedFuture(new JsonRpcError(JsonRpcError.METHOD_NOT_FOUND, "Method not found: " + method));
        }
        AgentSession session = route(params);
        if (session == null) {
          return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS,
              "no session of this client is named " + JsonRpcPeer.object(params).getValue("sessionId")));
        }
        return session.clientMethods().serve(AgentProcess.this, method, params, withdrawn);
      }

      @Override
      public void notification(String method, Object params) {
        if (method.equals("session/update")) {
          AgentSession session = route(params);
          if (session != null) {
            session.update(params);
          } else {
            log.warn("[{}] ignored an update for a session it was not given", tag);
          }
        } else if (method.equals("elicitation/complete")) {
          // Scoped to this process: an id the agent chose ends only a question this process asked.
          Object id = JsonRpcPeer.object(params).getValue("elicitationId");
          if (id instanceof String s && !s.isEmpty()) {
            context.owner().eventBus().send(io.switchboard.bus.Addresses.PERMISSION_COMPLETE,
                new io.vertx.core.json.JsonObject().put("generation", generation).put("elicitationId", s));
          }
        } else if (unknownOnce(method)) {
          // A notification of a newer protocol (or a stray one): nothing to answer; said once per method.
          log.info("[{}] ignored the agent's {} notification (Switchboard does not handle it)", tag, method);
        }
      }
    });
    LineChannel.Listener lines = peer.listener(bytes -> {
      log.warn("[{}] dropped a line of {} bytes (limit {})", tag, bytes, limits.lineBytes());
      new ArrayList<>(attached).forEach(s -> s.lineDropped(bytes));
    });
    Future<Void> started = context.owner().executeBlocking(() -> StdioProcess.spawn(context, argv.call(), spec.env(),
        cwd, tag, owner, limits, new LineChannel.Listener() {
          @Override
          public void line(String line) {
            lineBytes = line.length();
            try {
              lines.line(line);
            } finally {
              lineBytes = 0;
            }
          }

          @Override
          public void oversize(long bytes) {
            lines.oversize(bytes);
          }

          @Override
          public void closed() {
            lines.closed();
          }
        }), false).compose(p -> {
          process = p;
          p.exited().onComplete(code -> exited(code.result()));
          if (stopping) {
            // Stopped (the gateway stopping) while it was being spawned: it must not outlive the room.
            p.stop();
            return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the gateway is stopping"));
          }
          return initialize();
        }).onSuccess(v -> ready = true);
    return started.timeout(timeoutMs, TimeUnit.MILLISECONDS).recover(err -> {
      if (err instanceof java.util.concurrent.TimeoutException) {
        err = new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the agent did not finish starting within "
            + timeoutMs / 1000 + " s");
      }
      return startFailure(err);
    });
  }

  /**
   * A request the gateway waits for at most {@code timeoutMs}: then it abandons it, and tells the
   * agent so ({@code $/cancel_request}), rather than leave the agent working for nobody.
   */
  Future<Object> request(String method, Object params, long timeoutMs) {
    io.vertx.core.Promise<Void> giveUp = io.vertx.core.Promise.promise();
    long timer = context.owner().setTimer(timeoutMs, t -> giveUp.tryComplete());
    return peer.request(method, params, giveUp.future())
        .onComplete(x -> context.owner().cancelTimer(timer))
        .recover(err -> Future.failedFuture(giveUp.future().isComplete()
            ? new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the agent did not answer " + method + " within "
                + Math.max(1, timeoutMs / 1000) + " s")
            : err));
  }

  private Future<Void> initialize() {
    JsonObject params = new JsonObject().put("protocolVersion", AgentSession.PROTOCOL_VERSION)
        .put("clientCapabilities", new JsonObject()
            .put("fs", new JsonObject().put("readTextFile", true).put("writeTextFile", true))
            .put("terminal", true)
            // Questions: a form the page draws (chats answer its choices), or a URL to open.
            .put("elicitation", new JsonObject().put("form", new JsonObject()).put("url", new JsonObject()))
            // A terminal login is shown to the person as the command to run on the host (AgentSession.howToLogIn).
            .put("auth", new JsonObject().put("terminal", true)))
        .put("clientInfo", new JsonObject().put("name", "switchboard").put("title", "Switchboard")
            .put("version", version()));
    return peer.request("initialize", params).compose(result -> {
      JsonObject r = JsonRpcPeer.object(result);
      Object version = r.getValue("protocolVersion");
      if (!(version instanceof Number n) || n.intValue() != AgentSession.PROTOCOL_VERSION) {
        return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the agent speaks ACP protocol "
            + "version " + version + "; Switchboard speaks version " + AgentSession.PROTOCOL_VERSION));
      }
      capabilities = r.getValue("agentCapabilities") instanceof JsonObject c ? c : new JsonObject();
      authMethods = JsonRpcPeer.array(r.getValue("authMethods"));
      return Future.succeededFuture();
    });
  }

  /** A start that failed because the process died says so, with the last lines it wrote to stderr; it is stopped. */
  private Future<Void> startFailure(Throwable err) {
    if (process == null) {
      return Future.failedFuture(err);
    }
    Future<Void> explained = process.exited().timeout(500, TimeUnit.MILLISECONDS)
        .compose(code -> process.lastWords().compose(words -> {
          StringBuilder text = new StringBuilder("The agent " + spec.name() + " failed to start: it exited with code "
              + code + " before it was ready.");
          if (!words.isEmpty()) {
            text.append(" The last lines it wrote to stderr:");
            words.forEach(w -> text.append("\n    ").append(w));
          }
          return Future.<Void>failedFuture(new AgentSession.StartFailure(text.toString()));
        }), alive -> Future.failedFuture(err));
    return explained.onFailure(x -> stop());
  }

  /** Whether the agent said in {@code initialize} that prompts may carry {@code kind} blocks (image, audio). */
  boolean takes(String kind) {
    return capabilities.getValue("promptCapabilities") instanceof JsonObject c && Boolean.TRUE.equals(c.getValue(kind));
  }

  /**
   * Which session a message of the agent belongs to: by the session it names, never by "the process
   * has one": a request naming none (ACP's request-scoped {@code elicitation/create}) has no thread
   * to be shown in and is refused. A process of one thread takes the ids it names as its own (its
   * session may speak before {@code session/new}'s answer binds the id); a shared one only those bound.
   */
  private AgentSession route(Object params) {
    if (!(JsonRpcPeer.object(params).getValue("sessionId") instanceof String id) || id.isEmpty()) {
      return null;
    }
    if (!shared) {
      return attached.isEmpty() ? null : attached.iterator().next();
    }
    return bySessionId.get(id);
  }

  void attach(AgentSession session) {
    attached.add(session);
  }

  /** {@code session} now answers to {@code acpSessionId} here (before a load: the replay is routed to it). */
  void bind(String acpSessionId, AgentSession session) {
    bySessionId.put(acpSessionId, session);
  }

  /** The session answering to {@code acpSessionId} here, if any. */
  AgentSession boundTo(String acpSessionId) {
    return bySessionId.get(acpSessionId);
  }

  /** How long an agent may take to close or delete a session before it is stopped anyway. */
  static final long END_SESSION_MS = 2_000;

  /**
   * Tells the agent a session it has open is done, where it says it can hear it: {@code session/delete}
   * when its thread is deleted, else {@code session/close} (an idle stop, an eviction, the gateway
   * stopping). Never fails, and waits {@link #END_SESSION_MS} at most: a stop must not hang on it.
   */
  Future<Void> endSession(String acpSessionId, boolean deleting) {
    JsonObject caps = capabilities.getValue("sessionCapabilities") instanceof JsonObject c ? c : new JsonObject();
    String method = deleting && supports(caps, "delete") ? "session/delete"
        : supports(caps, "close") ? "session/close" : null;
    if (method == null || acpSessionId == null || exited || !open.contains(acpSessionId)) {
      return Future.succeededFuture();
    }
    open.remove(acpSessionId);
    return request(method, new JsonObject().put("sessionId", acpSessionId), END_SESSION_MS)
        .onSuccess(x -> log.info("[{}] {} of session {} answered", tag, method, acpSessionId))
        .onFailure(err -> log.info("[{}] {} of session {} failed: {}", tag, method, acpSessionId, err.getMessage()))
        .<Void>mapEmpty().otherwiseEmpty();
  }

  private static boolean supports(JsonObject caps, String what) {
    return caps.getValue(what) != null && !Boolean.FALSE.equals(caps.getValue(what));
  }

  /** The agent has {@code acpSessionId} open: a session that attaches to it again needs no load. */
  void opened(String acpSessionId) {
    open.add(acpSessionId);
  }

  boolean isOpen(String acpSessionId) {
    return open.contains(acpSessionId);
  }

  void detach(AgentSession session) {
    attached.remove(session);
    bySessionId.values().removeIf(s -> s == session);
  }

  Set<AgentSession> attached() {
    return attached;
  }

  /** Runs once it has exited (at once if it has). */
  void onExit(Runnable listener) {
    if (exited) {
      listener.run();
    } else {
      exitListeners.add(listener);
    }
  }

  Future<Integer> stop() {
    stopping = true;
    return process == null ? Future.succeededFuture() : process.stop();
  }

  long pid() {
    return process == null ? -1 : process.pid();
  }

  private void exited(Integer code) {
    exited = true;
    log.info("[{}] exited with code {}{}", tag, code, stopping || process.stopping() ? " (stopped by Switchboard)" : "");
    // The sessions take their turns first: closing the peer fails the prompts, and this exit is what ends them.
    for (AgentSession s : new ArrayList<>(attached)) {
      s.processExited(this, code);
    }
    peer.close("the agent exited");
    attached.clear();
    bySessionId.clear();
    exitListeners.forEach(Runnable::run);
    exitListeners.clear();
  }

  private static String version() {
    String v = AgentProcess.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }
}
