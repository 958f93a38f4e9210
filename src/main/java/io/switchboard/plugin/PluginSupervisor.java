package io.switchboard.plugin;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.permission.ChatApproval;
import io.switchboard.config.Limits;
import io.switchboard.config.PluginSpec;
import io.switchboard.config.Settings;
import io.switchboard.jsonrpc.JsonRpcError;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.switchboard.jsonrpc.StdioProcess;
import io.switchboard.process.ProcessTree;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One plugin: its process generations, restarts (exponential backoff with jitter, capped), a
 * circuit breaker that gives it up when it fails too often, a heartbeat watchdog, its chats
 * (routes) with their prompt lanes, and the delivery of its outbox. Lives on the plugin room's
 * event loop. A generation's cleanup never touches its successor.
 */
final class PluginSupervisor {
  private static final Logger log = LoggerFactory.getLogger(PluginSupervisor.class);
  private static final int DELIVERY_BATCH = 100;
  static final String REPLY_CUT = "\n\n[… the rest of this reply is too long for the chat; it is in the web chat]";
  private static final String HELP = "Commands: /new starts a new conversation, /stop stops the agent's current "
      + "turn, /status shows this chat's thread and agent, /help shows this text.";

  private enum State { STARTING, RUNNING, BACKING_OFF, GIVEN_UP, STOPPED }

  /**
   * The read receipt for plugins without acknowledgements: {@code terminal/release} is a standard ACP
   * client request, which an IM plugin (it runs no terminals) answers {@code {}} through its ACP
   * library, silently; an extension method would be logged as unhandled by VibeAround's SDK. Any
   * answer, an error included, proves everything written before it was read.
   */
  static Dialect.Out readReceipt() {
    return new Dialect.Out("terminal/release",
        new JsonObject().put("sessionId", "switchboard").put("terminalId", "switchboard-read-receipt"));
  }

  /** Who tapped, for the audit, when the dialect does not say and a group has many people. */

  /** One spawn of the plugin. */
  private final class Generation {
    final int number;
    final long startedAt = System.currentTimeMillis();
    StdioProcess process;
    JsonRpcPeer peer;
    /** It answered initialize. */
    boolean ready;
    /**
     * It can show what it is sent. An acp plugin can once it answered initialize; VibeAround's SDK
     * makes its renderer only after the platform answered (Telegram's getMe) and drops what comes
     * before, so a vibearound plugin can once it sent a heartbeat or a prompt (both start after the
     * renderer exists; docs/protocol-plugins.md).
     */
    boolean rendering;
    long watchdog = -1;
    /** Outputs written to this generation and not yet acknowledged. */
    final Set<String> sent = new HashSet<>();
    final Map<String, Promise<Void>> ackWaiters = new HashMap<>();
    /** chatId -> the thread this process was told the chat is in (_va/session_info). */
    final Map<String, String> toldSession = new HashMap<>();

    Generation(int number) {
      this.number = number;
    }
  }

  private final PluginRoom room;
  private final Context context;
  private final EventBus bus;
  private final PluginSpec spec;
  private final Dialect dialect;
  private final Settings settings;
  private final String version;
  private final PluginRoom.Timings timings;
  private final Path stateDir;
  private final String tag;
  private final Map<String, Route> routes = new HashMap<>();
  /** Cluster mode: agent node -> the chats told it left (with cards of it open), until it is back. */
  private final Map<String, Set<String>> staleChats = new HashMap<>();
  /** threadId -> the agent text of its current turn, for the durable final reply. */
  private final Map<String, StringBuilder> turnText = new HashMap<>();
  /** threadId -> the generation that was current when its turn started. */
  private final Map<String, Integer> turnGeneration = new HashMap<>();
  private final ArrayDeque<Long> failures = new ArrayDeque<>();
  private State state = State.STARTING;
  private Generation gen;
  private int generations;
  private int restarts;
  private long restartTimer = -1;
  /** Runs while no generation answers: when it fires, the plugin's chats leave the pending requests. */
  private long surfaceGrace = -1;
  private boolean delivering;
  /** Output ids an earlier generation was sent (bounded): sending one again is a redelivery. */
  private final Set<String> sentBefore = java.util.Collections.newSetFromMap(
      new java.util.LinkedHashMap<String, Boolean>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
          return size() > 10_000;
        }
      });
  private long redeliveries;
  /** Platform messages that came again and were answered without a turn. */
  private long duplicates;
  /** Chat messages (chatId NUL messageId) in the lane or being checked: a copy arriving meanwhile is a duplicate. */
  private final Set<String> inboundInFlight = new HashSet<>();
  private boolean deliverAgain;
  private final Limits limits;
  /** The most of a turn's text kept for its durable final reply ({@code Limits#replyChars}). */
  private final int maxReplyChars;

  PluginSupervisor(PluginRoom room, Context context, PluginSpec spec, Settings settings, Limits limits,
                   String version, PluginRoom.Timings timings) {
    this.room = room;
    this.limits = limits;
    this.maxReplyChars = limits.replyChars();
    this.context = context;
    this.bus = context.owner().eventBus();
    this.spec = spec;
    this.dialect = Dialect.of(spec.dialect());
    this.settings = settings;
    this.version = version;
    this.timings = timings;
    this.stateDir = settings.dataDir().resolve("plugins").resolve(spec.id());
    this.tag = "plugin " + spec.id();
  }

  JsonObject status() {
    return new JsonObject().put("id", spec.id()).put("dialect", spec.dialect()).put("state", state.name())
        .put("generation", gen == null ? null : gen.number).put("pid", gen == null ? null : gen.process.pid())
        .put("restarts", restarts).put("redeliveries", redeliveries).put("duplicateMessages", duplicates).put("routes", routes.size())
        .put("queuedBytes", gen == null ? 0 : gen.process.queuedBytes());
  }

  /**
   * What a chat's message says of it (a direct message or a group), kept across restarts: a restored
   * chat of a dialect that cannot say who taps is a group until known otherwise.
   */
  private void noteScope(Route r, String scope) {
    if (!scope.equals(r.scope)) {
      r.scope = scope;
      room.ask(Addresses.STORE_CHAT_SCOPE_SAVE, new JsonObject().put("pluginId", spec.id()).put("chatId", r.chatId)
              .put("scope", scope))
          .onFailure(err -> log.error("[{}] the kind of chat {} could not be saved: {}", tag, r.chatId, err.getMessage()));
    }
  }

  /** The kinds of this plugin's chats as saved (read once at start, before the plugin is spawned). */
  Future<Void> restoreScopes() {
    return room.ask(Addresses.STORE_CHAT_SCOPE_LIST, new JsonObject().put("pluginId", spec.id()))
        .onSuccess(m -> m.getJsonObject("scopes").forEach(e -> routes.computeIfAbsent(e.getKey(),
            c -> new Route(spec.id(), c)).scope = (String) e.getValue()))
        .<Void>mapEmpty()
        .recover(err -> {
          log.error("[{}] the kinds of its chats could not be read ({}); they count as groups", tag, err.getMessage());
          return Future.succeededFuture();
        });
  }

  /** The chat's thread after a restart; {@code replace} false: only for a chat without one. Whether it took it. */
  boolean restoreRoute(String chatId, String threadId, String startedBy, boolean replace) {
    Route r = routes.computeIfAbsent(chatId, c -> new Route(spec.id(), c));
    if (!replace && r.threadId != null) {
      return false;
    }
    r.threadId = threadId;
    r.startedBy = startedBy;
    return true;
  }

  // ---- process lifecycle ----

  void start() {
    spawn();
  }

  Future<?> stop() {
    state = State.STOPPED;
    context.owner().cancelTimer(restartTimer);
    context.owner().cancelTimer(surfaceGrace);
    return gen == null ? Future.succeededFuture() : gen.process.stop();
  }

  private void spawn() {
    if (state == State.STOPPED || state == State.GIVEN_UP) {
      return;
    }
    state = State.STARTING;
    Generation g = new Generation(++generations);
    g.peer = new JsonRpcPeer(tag, line -> g.process == null ? Future.failedFuture("not started") : g.process.write(line));
    g.peer.handler(new JsonRpcPeer.Handler() {
      @Override
      public Future<Object> request(String method, Object params) {
        return serve(g, method, JsonRpcPeer.object(params));
      }

      @Override
      public void notification(String method, Object params) {
        heard(g, method, JsonRpcPeer.object(params));
      }
    });
    context.owner().<StdioProcess>executeBlocking(() -> {
      PluginRoom.ensureStateDir(stateDir);
      Map<String, String> env = new HashMap<>(spec.env());
      env.put(dialect.envStateDir(), stateDir.toString());
      Path cwd = spec.cwd() == null ? stateDir : Path.of(spec.cwd());
      return StdioProcess.spawn(context, spec.command(), env, cwd, tag, ProcessTree.ownerOf(settings.dataDir()),
          limits, g.peer.listener(bytes ->
          log.warn("[{}] dropped a line of {} bytes (limit {})", tag, bytes, limits.lineBytes())));
    }, false).onSuccess(process -> {
      g.process = process;
      gen = g;
      state = State.RUNNING;
      process.exited().onComplete(code -> exited(g, code.result()));
    }).onFailure(err -> {
      log.error("[{}] cannot start: {}", tag, err.getMessage());
      failed();
    });
  }

  private void exited(Generation g, Integer code) {
    g.peer.close("the plugin exited");
    context.owner().cancelTimer(g.watchdog);
    log.warn("[{}] generation {} exited with code {}", tag, g.number, code);
    // Nobody waits on this generation's acknowledgements any more: what it did not acknowledge stays
    // in the outbox and goes to the next process (a route waiting to answer its prompt moves on).
    List<Promise<Void>> waiting = List.copyOf(g.ackWaiters.values());
    g.ackWaiters.clear();
    waiting.forEach(Promise::tryComplete);
    if (gen == g) {
      routes.values().forEach(r -> {
        r.openCards.clear(); // they go to the next process, which has not shown them yet
        r.autoRejectable.clear();
      });
    }
    // The cards it showed died with it: the next process gets those still pending again.
    room.ask(Addresses.STORE_OUTBOX_REOPEN, new JsonObject().put("pluginId", spec.id()))
        .onSuccess(m -> log.info("[{}] {} cards of pending requests are due again", tag, m.getInteger("reopened")))
        .onFailure(err -> log.error("[{}] could not reopen its cards: {}", tag, err.getMessage()));
    if (gen != g) {
      return;
    }
    gen = null;
    if (state == State.STOPPED) {
      return;
    }
    // A restart is not the chats leaving: their cards stay answerable for a grace period.
    if (surfaceGrace < 0) {
      surfaceGrace = context.owner().setTimer(timings.surfaceGraceMs(), t -> {
        surfaceGrace = -1;
        if (gen == null || !gen.ready) {
          log.warn("[{}] not back within {} s: its chats leave the pending permission requests", tag,
              timings.surfaceGraceMs() / 1000);
          bus.publish(Addresses.SURFACE_CLOSED, new JsonObject().put("plugin", spec.id()));
        }
      });
    }
    failed();
  }

  /** A generation died or could not start: back off and try again, or give the plugin up. */
  private void failed() {
    long now = System.currentTimeMillis();
    failures.addLast(now);
    while (!failures.isEmpty() && failures.peekFirst() < now - timings.breakerWindowMs()) {
      failures.pollFirst();
    }
    if (failures.size() >= timings.breakerFailures()) {
      state = State.GIVEN_UP;
      context.owner().cancelTimer(surfaceGrace);
      surfaceGrace = -1;
      log.error("[{}] given up: it failed {} times within {} s; fix it and restart the gateway", tag,
          failures.size(), timings.breakerWindowMs() / 1000);
      // What only this plugin could answer ends now (cards raised while it was down included).
      bus.publish(Addresses.SURFACE_CLOSED, new JsonObject().put("plugin", spec.id()).put("givenUp", true));
      return;
    }
    long delay = Math.min(timings.backoffCapMs(), timings.backoffBaseMs() << Math.min(20, failures.size() - 1));
    delay = (long) (delay * (0.75 + ThreadLocalRandom.current().nextDouble() / 2));
    state = State.BACKING_OFF;
    restarts++;
    log.info("[{}] restarting in {} ms", tag, delay);
    restartTimer = context.owner().setTimer(Math.max(1, delay), t -> spawn());
  }

  private void heartbeat(Generation g) {
    context.owner().cancelTimer(g.watchdog);
    g.watchdog = context.owner().setTimer(timings.watchdogMs(), t -> {
      if (gen == g) {
        log.warn("[{}] no heartbeat for {} s: restarting it", tag, timings.watchdogMs() / 1000);
        g.process.stop();
      }
    });
  }

  // ---- what the plugin asks ----

  private Future<Object> serve(Generation g, String method, JsonObject params) {
    heardFrom(g, method);
    switch (method) {
      case "initialize" -> {
        g.ready = true;
        g.rendering = dialect.acknowledges();
        if (gen == g && surfaceGrace >= 0) {
          context.owner().cancelTimer(surfaceGrace); // back in time: its chats keep their cards
          surfaceGrace = -1;
        }
        context.runOnContext(v -> deliver());
        return Future.succeededFuture(dialect.initializeResult(spec, stateDir, version));
      }
      case "session/new" -> {
        return Future.succeededFuture(new JsonObject().put("sessionId", "switchboard-" + spec.id()));
      }
      case "session/prompt" -> {
        return prompt(g, params);
      }
      case "_va/heartbeat", "_switchboard/heartbeat" -> {
        heartbeat(g);
        return Future.succeededFuture(new JsonObject());
      }
      default -> {
        return Future.failedFuture(new JsonRpcError(JsonRpcError.METHOD_NOT_FOUND, "Method not found: " + method));
      }
    }
  }

  private void heard(Generation g, String method, JsonObject params) {
    heardFrom(g, method);
    switch (method) {
      case "session/cancel" -> {
        Route r = routes.get(dialect.cancelledChat(params));
        if (r != null && r.threadId != null) {
          room.ask(Addresses.THREAD_CANCEL, new JsonObject().put("threadId", r.threadId));
        }
      }
      case "_va/heartbeat", "_switchboard/heartbeat" -> heartbeat(g);
      case "_switchboard/ack" -> acknowledged(g, JsonRpcPeer.array(params.getValue("outputIds")));
      default -> log.debug("[{}] ignored notification {}", tag, method);
    }
  }

  /** A heartbeat or a prompt proves a vibearound plugin can show what it is sent (its renderer exists). */
  private void heardFrom(Generation g, String method) {
    if (!g.rendering && g.ready && (method.endsWith("heartbeat") || method.equals("session/prompt"))) {
      g.rendering = true;
      log.info("[{}] generation {} can show outputs now", tag, g.number);
      context.runOnContext(v -> deliver());
    }
  }

  /**
   * {@code _va/session_info} for a chat, once per process and thread, when the chat prompts (the SDK
   * shows it as a card, so a restart does not post it to every chat; it keeps the workspace path, from
   * which it sends the files an agent names).
   */
  private void tellSession(Generation g, Route r, boolean resumed) {
    String threadId = r.threadId;
    if (g == null || !g.rendering || threadId == null || threadId.equals(g.toldSession.get(r.chatId))
        || dialect.sessionInfo(r, new JsonObject(), "", resumed) == null) {
      return;
    }
    g.toldSession.put(r.chatId, threadId);
    room.ask(Addresses.THREAD_GET, new JsonObject().put("threadId", threadId)).onSuccess(thread -> {
      String agentName = settings.agents().stream().filter(a -> a.id().equals(thread.getString("agent")))
          .map(a -> a.name()).findFirst().orElse(thread.getString("agent"));
      if (gen == g) {
        send(g, dialect.sessionInfo(r, thread, agentName, resumed));
      }
    }).onFailure(err -> g.toldSession.remove(r.chatId, threadId)); // told next time
  }

  private Future<Object> prompt(Generation g, JsonObject params) {
    Dialect.Inbound in;
    try {
      in = dialect.prompt(params);
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS, e.getMessage()));
    }
    // Whenever this prompt is answered (its turn's end, a command's reply, a refusal), the SDK rejects
    // the chat's cards it still shows. Marked here, before the answer is written (the peer writes it
    // after this callback, on the same event loop), so no card slips in between.
    return prompt(g, in).onComplete(x -> {
      Route r = routes.get(in.chatId());
      if (r != null) {
        expectAutoRejects(r);
      }
    });
  }

  private Future<Object> prompt(Generation g, Dialect.Inbound in) {
    if (!spec.mayPrompt(in.senderId())) {
      return stranger(in);
    }
    Route r = routes.computeIfAbsent(in.chatId(), c -> new Route(spec.id(), c));
    if (r.current == null) {
      r.target = in.target(); // while a turn runs, its outputs keep replying to its own message
    }
    noteScope(r, in.scope());
    r.lastSender = in.senderId();
    // The SDK rejects the cards it shows in a chat when the chat's next prompt starts: not a person's answer.
    expectAutoRejects(r);
    String text = in.text().trim();
    if (text.isEmpty()) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS, "the prompt has no text"));
    }
    String key = in.messageId() == null ? null : in.chatId() + "\u0000" + in.messageId();
    if (key != null && inboundInFlight.contains(key)) {
      return duplicate(in); // a copy of a message waiting in the lane or being handled
    }
    if (text.startsWith("/")) {
      // Commands are taken once too: a redelivered /stop or /new must not act again.
      Future<Object> handled = seen(in).compose(before -> before ? duplicate(in)
          : command(r, text.split("\\s+")[0].toLowerCase()).onSuccess(x -> remember(in)));
      r.commands = handled;
      return handled;
    }
    if (r.lane.size() >= Route.LANE_CAPACITY) {
      // Not -32000: ACP reserves that for "authentication required", and a plugin would ask its user to log in.
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "route is busy: "
          + Route.LANE_CAPACITY + " messages of this chat are already waiting; wait, or send /stop"));
    }
    // Into the lane at once, in arrival order (its capacity counts it); whether the platform sent it
    // before is settled before its turn (pump).
    if (key != null) {
      inboundInFlight.add(key);
    }
    Promise<Object> done = Promise.promise();
    r.lane.add(new Route.Waiting(in, done, seen(in)));
    pump(r);
    return done.future().onComplete(x -> {
      if (key != null) {
        inboundInFlight.remove(key);
      }
    });
  }

  /**
   * Whether a platform message was taken before — the platform delivered it again after the plugin
   * crashed. Messages are remembered once their prompt is in the transcript (durably,
   * {@code plugin_inbound}), so one the gateway never recorded (it crashed first) runs when it comes
   * again: never lost, rarely twice.
   */
  private Future<Boolean> seen(Dialect.Inbound in) {
    return in.messageId() == null ? Future.succeededFuture(false)
        : room.ask(Addresses.STORE_INBOUND_SEEN, new JsonObject().put("pluginId", spec.id())
            .put("chatId", in.chatId()).put("messageId", in.messageId()))
            .map(m -> m.getBoolean("seen"))
            .otherwise(false); // a read that fails must not drop the message
  }

  /** The message is taken (in the transcript, or a command done): its redelivery will start nothing. */
  private void remember(Dialect.Inbound in) {
    if (in.messageId() != null) {
      room.ask(Addresses.STORE_INBOUND_MARK, new JsonObject().put("pluginId", spec.id())
              .put("chatId", in.chatId()).put("messageId", in.messageId()))
          .onFailure(err -> log.error("[{}] message {} of chat {} could not be remembered: {}", tag,
              in.messageId(), in.chatId(), err.getMessage()));
    }
  }

  /**
   * VibeAround's SDK answers the cards it shows in a chat with {@code reject_once} itself when the
   * chat's prompt ends or its next one starts: from now on, a rejection of a card open now is the
   * SDK's, not a person's (see {@link #tapped}).
   */
  private void expectAutoRejects(Route r) {
    if (!dialect.acknowledges()) {
      r.autoRejectable.addAll(r.openCards.keySet());
    }
  }

  private Future<Object> duplicate(Dialect.Inbound in) {
    duplicates++;
    log.info("[{}] message {} of chat {} came again (a redelivery): already taken, no second turn", tag,
        in.messageId(), in.chatId());
    return Future.succeededFuture(new JsonObject().put("stopReason", "end_turn"));
  }

  /**
   * Someone not on the plugin's list of users wrote: nothing starts. They are told their id and how
   * the operator admits them, and the knock is kept for the web to show (the operator sees who
   * asked); the prompt is answered {@code refusal}.
   */
  private Future<Object> stranger(Dialect.Inbound in) {
    String who = in.senderId() == null ? "(unknown)"
        : in.senderId().length() > 200 ? in.senderId().substring(0, 200) + "…" : in.senderId();
    log.warn("[{}] {} ({}) in chat {} may not prompt: not in plugins[{}].users", tag, who, in.senderName(),
        in.chatId(), spec.id());
    room.knocked(new JsonObject().put("plugin", spec.id()).put("userId", who).put("name", in.senderName())
        .put("chatId", in.chatId()).put("at", System.currentTimeMillis()));
    Route r = routes.computeIfAbsent(in.chatId(), c -> new Route(spec.id(), c));
    if (r.current == null) {
      r.target = in.target();
    }
    noteScope(r, in.scope());
    return say(r, "You cannot use this agent yet. Your id here is " + who + ". To let you in, the operator adds \""
        + who + "\" to plugins[" + spec.id() + "].users in the Switchboard config and restarts it.")
        .map(x -> new JsonObject().put("stopReason", "refusal"));
  }

  private Future<Object> command(Route r, String command) {
    String reply;
    switch (command) {
      case "/new" -> {
        if (r.threadId != null) {
          room.ask(Addresses.THREAD_DETACH, new JsonObject().put("threadId", r.threadId).put("surface", r.surface()))
              .onFailure(err -> log.error("[{}] chat {} could not leave thread {}: {}", tag, r.chatId, r.threadId,
                  err.getMessage()));
          // The chat leaves the old thread's questions too: a card there is no longer answerable from it
          // (one only it could answer ends surface-gone).
          bus.publish(Addresses.SURFACE_CLOSED, new JsonObject().put("surface", r.surface())
              .put("threadId", r.threadId));
        }
        r.threadId = null;
        leaveTurn(r);
        reply = "OK: your next message starts a new conversation.";
      }
      case "/stop", "/cancel" -> {
        if (r.threadId != null) {
          room.ask(Addresses.THREAD_CANCEL, new JsonObject().put("threadId", r.threadId));
        }
        reply = r.threadId == null ? "Nothing to stop." : "Stopping the agent's turn.";
      }
      case "/status" -> {
        return (r.threadId == null ? Future.succeededFuture(new JsonObject())
            : room.ask(Addresses.THREAD_GET, new JsonObject().put("threadId", r.threadId)))
            .map(t -> t.isEmpty() ? "No conversation yet: send a message to start one."
                : "Thread " + t.getString("threadId") + " with agent " + t.getString("agent")
                    + (t.getString("node") == null ? "" : " on " + t.getString("node"))
                    + (t.getBoolean("busy") ? ", working." : ", idle.") + " " + r.lane.size() + " messages waiting.")
            // In a cluster its agent node may be gone: the chat is told so, not left without an answer.
            .recover(err -> Future.succeededFuture("Thread " + r.threadId + " does not answer now: " + err.getMessage()))
            .compose(text -> say(r, text))
            .map(x -> new JsonObject().put("stopReason", "end_turn"));
      }
      case "/help" -> reply = HELP;
      default -> reply = "Unknown command " + command + ". " + HELP;
    }
    return say(r, reply).map(x -> new JsonObject().put("stopReason", "end_turn"));
  }

  /** A durable system text to a chat; completes once the plugin has it. */
  private Future<Void> say(Route r, String text) {
    return room.ask(Addresses.STORE_OUTBOX_ENQUEUE, new JsonObject().put("pluginId", spec.id())
            .put("chatId", r.chatId).put("kind", "system").put("body", new JsonObject().put("text", text)))
        .compose(m -> awaitAck(m.getString("outputId")));
  }

  private Future<Void> awaitAck(String outputId) {
    Generation g = gen;
    if (g == null) {
      return Future.succeededFuture(); // it goes out after the respawn; this prompt's answer cannot
    }
    return g.ackWaiters.computeIfAbsent(outputId, id -> Promise.promise()).future();
  }

  /** Runs the route's next prompt, one at a time. */
  private void pump(Route r) {
    if (r.current != null || r.lane.isEmpty()) {
      return;
    }
    Route.Waiting head = r.lane.peek();
    if (!head.seen().isComplete()) {
      head.seen().onComplete(x -> pump(r)); // settled in order: the head's turn comes first
      return;
    }
    r.lane.poll();
    if (head.seen().result()) {
      head.done().tryComplete(duplicate(head.inbound()).result());
      pump(r);
      return;
    }
    Route.Waiting w = head;
    r.current = w;
    r.target = w.inbound().target();
    r.turnsToWait = -1;
    r.turnEnds.clear();
    ensureThread(r, w.inbound())
        .compose(threadId -> room.ask(Addresses.THREAD_PROMPT, new JsonObject().put("threadId", threadId)
            .put("text", w.inbound().text()).put("surface", r.surface()).put("user", w.inbound().senderId())))
        .onSuccess(reply -> {
          remember(w.inbound()); // in the transcript now: the platform's redelivery of it starts nothing
          r.promptSeq = reply.getLong("seq");
          r.turnsToWait = reply.getInteger("ahead") + 1;
          checkTurnEnd(r);
        })
        .onFailure(err -> {
          r.current = null;
          w.done().tryFail(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, err.getMessage()));
          pump(r);
        });
  }

  private Future<String> ensureThread(Route r, Dialect.Inbound in) {
    if (r.threadId != null) {
      tellSession(gen, r, true);
      return Future.succeededFuture(r.threadId);
    }
    JsonObject create = new JsonObject().put("surface", r.surface()).put("startedBy", in.senderId());
    if (spec.agent() != null) {
      create.put("agent", spec.agent());
    }
    return room.ask(Addresses.THREAD_CREATE, create).map(m -> {
      r.threadId = m.getString("threadId");
      r.startedBy = in.senderId();
      room.follow(r.threadId);
      tellSession(gen, r, false);
      return r.threadId;
    });
  }

  // ---- the thread's events ----

  void threadEvent(JsonObject e) {
    String threadId = e.getString("threadId");
    List<Route> attached = routes.values().stream().filter(r -> threadId.equals(r.threadId)).toList();
    if (attached.isEmpty()) {
      return;
    }
    JsonObject event = e.getJsonObject("event");
    String kind = event.getString("kind");
    switch (kind) {
      case "turn_started" -> {
        turnText.put(threadId, new StringBuilder());
        // The process that gets the whole turn live may skip its durable final reply; none does if
        // no process can show output now (below: or misses a chunk later).
        turnGeneration.put(threadId, gen != null && gen.rendering ? gen.number : -1);
      }
      case "acp" -> {
        JsonObject update = event.getJsonObject("update");
        if ("agent_message_chunk".equals(update.getString("sessionUpdate"))) {
          // Agent output is read leniently: a content or text of another type adds nothing.
          Object text = Dialect.object(update, "content").getValue("text");
          StringBuilder reply = turnText.computeIfAbsent(threadId, t -> new StringBuilder());
          if (text instanceof String s && reply.length() < maxReplyChars) {
            // Bounded: an agent that talks without end costs the chat's final reply, not the heap.
            reply.append(s, 0, Math.min(s.length(), maxReplyChars - reply.length()));
            if (reply.length() == maxReplyChars) {
              reply.append(REPLY_CUT);
            }
          }
        }
        if (gen != null && gen.rendering) {
          attached.forEach(r -> send(gen, dialect.stream(r, update)));
        } else {
          turnGeneration.put(threadId, -1); // a chunk nobody saw live: the final reply goes out whole
        }
      }
      case "system" -> attached.forEach(r -> enqueueText(r, "system", event.getString("text")));
      case "agent_exited" -> attached.forEach(r -> enqueueText(r, "system",
          "The agent exited" + (event.getValue("code") == null ? "" : " with code " + event.getValue("code"))
              + ". Your next message starts it again."));
      default -> { }
    }
    if ("turn_ended".equals(kind) || "agent_exited".equals(kind)) {
      StringBuilder text = turnText.remove(threadId);
      Integer streamedTo = turnGeneration.remove(threadId);
      for (Route r : attached) {
        // The turn's final reply is durable: a chat that missed the stream (plugin restarting) gets it whole.
        Future<Void> written = text == null || text.length() == 0 ? Future.succeededFuture()
            : room.ask(Addresses.STORE_OUTBOX_ENQUEUE, new JsonObject().put("pluginId", spec.id())
                .put("chatId", r.chatId).put("kind", "final").put("body", new JsonObject().put("text", text.toString())
                    .put("threadId", threadId).put("streamedTo", streamedTo)))
                .compose(m -> awaitAck(m.getString("outputId")));
        if (r.current != null) {
          r.turnEnds.add(new JsonObject().put("seq", e.getLong("seq"))
              .put("stopReason", "agent_exited".equals(kind) ? "end_turn" : event.getString("stopReason", "end_turn")));
        }
        written.onComplete(x -> checkTurnEnd(r));
      }
    }
  }

  /** Answers the route's prompt once its own turn ended and that turn's outputs reached the plugin. */
  private void checkTurnEnd(Route r) {
    Route.Waiting w = r.current;
    if (w == null || r.turnsToWait < 0) {
      return;
    }
    List<JsonObject> ours = r.turnEnds.stream().filter(t -> t.getLong("seq") > r.promptSeq).toList();
    if (ours.size() < r.turnsToWait) {
      return;
    }
    String stopReason = ours.get(r.turnsToWait - 1).getString("stopReason");
    stopReason = "error".equals(stopReason) ? "end_turn" : stopReason;
    r.current = null;
    expectAutoRejects(r);
    w.done().tryComplete(new JsonObject().put("stopReason", stopReason));
    pump(r);
  }

  /**
   * The chat left its thread ({@code /new}) while a prompt of it was running: that prompt is answered
   * now ({@code cancelled} for the chat; the old thread's turn goes on without it), so the chat's
   * next message does not wait on a turn it no longer follows.
   */
  private void leaveTurn(Route r) {
    Route.Waiting w = r.current;
    if (w == null) {
      return;
    }
    r.current = null;
    r.turnEnds.clear();
    r.turnsToWait = -1;
    expectAutoRejects(r);
    w.done().tryComplete(new JsonObject().put("stopReason", "cancelled"));
    pump(r);
  }

  /**
   * Cluster mode: the agent node whose requests some of this plugin's chats have open cards of left
   * the cluster. Those chats are told at once (a tap on such a card is refused until it is back),
   * as the web chat marks its cards stale.
   */
  void nodeLeft(String node) {
    Set<String> told = staleChats.computeIfAbsent(node, n -> new HashSet<>());
    routes.values().forEach(r -> {
      if (r.openCards.values().stream().anyMatch(c -> node.equals(c.node())) && told.add(r.chatId)) {
        enqueueText(r, "system", "Agent node " + node + " left the cluster: the permission requests waiting in "
            + "this chat cannot be answered until it is back (a tap now is refused).");
      }
    });
  }

  /** The node is a member again: the chats told it left learn whether their requests still wait. */
  void nodeBack(String node, boolean restarted) {
    Set<String> told = staleChats.remove(node);
    if (told == null) {
      return;
    }
    told.forEach(chatId -> enqueueText(routes.computeIfAbsent(chatId, c -> new Route(spec.id(), c)), "system",
        restarted ? "Agent node " + node + " is back, restarted: the requests that waited here were voided."
            : "Agent node " + node + " is back: the requests waiting in this chat can be answered again."));
  }

  private void enqueueText(Route r, String kind, String text) {
    room.ask(Addresses.STORE_OUTBOX_ENQUEUE, new JsonObject().put("pluginId", spec.id()).put("chatId", r.chatId)
            .put("kind", kind).put("body", new JsonObject().put("text", text)))
        .onFailure(err -> log.error("[{}] a {} text for chat {} could not be written to the outbox: {}", tag, kind,
            r.chatId, err.getMessage()));
  }

  // ---- delivering the outbox ----

  /** Sends what waits in the outbox, in order, to the current generation. */
  void deliver() {
    Generation g = gen;
    if (g == null || !g.rendering) {
      return;
    }
    if (delivering) {
      deliverAgain = true; // outputs added while the last read was out: read again after it
      return;
    }
    delivering = true;
    deliverAgain = false;
    room.ask(Addresses.STORE_OUTBOX_PENDING, new JsonObject().put("pluginId", spec.id())
            .put("limit", DELIVERY_BATCH))
        .onComplete(reply -> {
          delivering = false;
          if (deliverAgain) {
            context.runOnContext(v -> deliver());
          }
          if (reply.failed() && gen == g && !deliverAgain) {
            // Nothing else may come to wake the delivery (in a cluster, a node's read timed out).
            log.warn("[{}] the outbox could not be read ({}); trying again in 2 s", tag, reply.cause().getMessage());
            context.owner().setTimer(2_000, t -> deliver());
          }
          if (reply.failed() || gen != g) {
            return;
          }
          JsonArray outputs = reply.result().getJsonArray("outputs");
          List<String> written = new java.util.ArrayList<>();
          List<Future<Void>> writes = new java.util.ArrayList<>();
          for (Object o : outputs) {
            JsonObject out = (JsonObject) o;
            String id = out.getString("outputId");
            if (g.sent.add(id)) {
              if (!sentBefore.add(id)) {
                redeliveries++;
              }
              written.add(id);
              writes.add(deliverOne(g, out));
            }
          }
          if (!dialect.acknowledges() && !written.isEmpty()) {
            // This dialect has no acknowledgement: the answer to a request written after them proves the
            // plugin read them (it reads its stdin in order). The request is a read receipt the SDK
            // answers without side effects or log lines (docs/protocol-plugins.md). Only an answer
            // counts: a failed write or a plugin that dies first leaves them for its next process.
            Future.all(writes).compose(x -> g.peer.request(readReceipt().method(), readReceipt().params())
                    .recover(err -> err instanceof JsonRpcError.Answered ? Future.succeededFuture() // read, all the same
                        : Future.failedFuture(err)))
                .onSuccess(x -> acknowledged(g, new JsonArray(written)))
                .onFailure(err -> log.warn("[{}] {} outputs not confirmed ({}); they go to its next process", tag,
                    written.size(), err.getMessage()));
          }
        });
  }

  /** Writes one output; the future is the write's (a card's answer comes later, as a tap). */
  private Future<Void> deliverOne(Generation g, JsonObject out) {
    String id = out.getString("outputId");
    Route r = routes.computeIfAbsent(out.getString("chatId"), c -> new Route(spec.id(), c));
    JsonObject body = out.getJsonObject("body");
    switch (out.getString("kind")) {
      case "card" -> {
        // A chat not known to be a direct message (a group, or one not heard from since a restart)
        // gets no card from a plugin that cannot say who taps, unless the plugin opted in.
        if (!dialect.acknowledges() && !"dm".equals(r.scope) && !spec.cardsInGroups()) {
          return send(g, dialect.text(r, id, "system", "A permission request is waiting: " + title(body)
              + ". This plugin cannot tell who taps in a group, so answer it in the web chat."));
        }
        Dialect.Out card = dialect.card(r, id, body);
        r.openCards.put(id, new Route.OpenCard(body.getString("requestId"), out.getString("node")));
        g.peer.request(card.method(), card.params()).onSuccess(response -> tapped(g, r, id, body,
            JsonRpcPeer.object(response)));
        return Future.succeededFuture();
      }
      case "card_end" -> {
        // Ended: its node's departure no longer concerns the chat (the card itself stays open until
        // the plugin answers it, for the SDK's own rejections).
        r.openCards.replaceAll((outputId, c) -> c.requestId() != null && c.requestId().equals(body.getString(
            "requestId")) ? new Route.OpenCard(c.requestId(), null) : c);
        Dialect.Out end = dialect.cardEnd(r, id, body);
        return end == null ? Future.succeededFuture() : send(g, end); // null: the card shows it already
      }
      case "final" -> {
        Integer streamedTo = body.getInteger("streamedTo");
        if (!dialect.acknowledges() && streamedTo != null && streamedTo == g.number) {
          return Future.succeededFuture(); // this generation got the whole turn live; the sync barrier acknowledges it
        }
        Dialect.Out text = dialect.text(r, id, "final", body.getString("text"));
        // A plugin that showed this turn live may skip the whole reply; one that missed it shows it.
        text.params().put("streamed", streamedTo != null && streamedTo == g.number);
        return send(g, text);
      }
      default -> {
        return send(g, dialect.text(r, id, out.getString("kind"), body.getString("text")));
      }
    }
  }

  private static String title(JsonObject card) {
    return card.getJsonObject("toolCall", new JsonObject()).getString("title", "a tool call");
  }

  /** A card's response: a tap (checked against the approvers), or the plugin giving up on it. */
  private void tapped(Generation g, Route r, String outputId, JsonObject card, JsonObject response) {
    acknowledged(g, new JsonArray().add(outputId));
    r.openCards.remove(outputId);
    boolean maybeAuto = r.autoRejectable.remove(outputId);
    JsonObject outcome = Dialect.object(response, "outcome");
    String requestId = card.getString("requestId");
    if (!"selected".equals(outcome.getValue("outcome")) || !(outcome.getValue("optionId") instanceof String)) {
      log.info("[{}] the card of {} in chat {} was dismissed by the plugin", tag, requestId, r.chatId);
      return;
    }
    if (maybeAuto && optionKind(card, outcome.getString("optionId")).startsWith("reject")) {
      // The SDK's own end-of-prompt rejection: nobody chose it. Nothing is recorded; a request still
      // waiting is shown again, for a person to answer.
      log.info("[{}] the SDK rejected the card of {} in chat {} at its prompt's end; not an answer", tag, requestId,
          r.chatId);
      // After the chat's command in flight (a /new that came with it moves the chat out of the thread).
      r.commands.transform(x -> stillPending(card)).onSuccess(pending -> {
        // Only to a chat still in the card's thread (after /new it no longer answers there).
        if (pending && gen == g && card.getString("threadId", "").equals(r.threadId)) {
          deliverOne(g, new JsonObject().put("outputId", outputId).put("chatId", r.chatId).put("kind", "card")
              .put("body", card));
        }
      });
      return;
    }
    String tapper = dialect.tapper(response);
    if (tapper == null && dialect.acknowledges()) {
      tapper = "unknown";
    }
    // A dialect that does not say who tapped, in a chat not known to be a direct message: one of
    // many people. An anonymous tap cannot be told from the SDK's own rejection either, so a
    // rejection of a card that was open at a prompt's end is never counted (above); an approval is.
    boolean anonymous = tapper == null && !"dm".equals(r.scope);
    if (tapper == null && !anonymous) {
      tapper = r.lastSender; // a direct message: the person the chat is with (null: its thread's starter)
    }
    // The permission room judges the tap against this plugin's approvers and the card's own thread.
    JsonObject answer = new JsonObject().put("requestId", requestId).put("optionId", outcome.getString("optionId"))
        .put("surface", r.surface()).put("user", tapper)
        .put("chat", new ChatApproval(spec.approvers(), spec.cardsInGroups(), anonymous).toJson());
    room.ask(Addresses.PERMISSION_ANSWER, answer).onFailure(err -> {
      ErrorCode code = ErrorCode.of(err);
      if (code == ErrorCode.ALREADY_ANSWERED) {
        alreadyEnded(r, card, outcome, requestId);
      } else if (code == ErrorCode.NOT_APPROVER) {
        log.warn("[{}] a tap on request {} in chat {} was refused: {}", tag, requestId, r.chatId, err.getMessage());
        enqueueText(r, "system", err.getMessage());
        if (gen == g) {
          deliverOne(g, new JsonObject().put("outputId", outputId).put("chatId", r.chatId).put("kind", "card")
              .put("body", card)); // ask again, for an approver: it still waits
        }
      } else {
        enqueueText(r, "system", "That answer was not taken: " + err.getMessage());
      }
    });
  }

  /** The kind of the card's option {@code optionId} ("allow_once", "reject_once", …), or "". */
  private static String optionKind(JsonObject card, String optionId) {
    return card.getJsonArray("options", new JsonArray()).stream()
        .filter(o -> o instanceof JsonObject opt && optionId.equals(opt.getString("optionId")))
        .map(o -> ((JsonObject) o).getString("kind", "")).findFirst().orElse("");
  }

  /** Whether the card's request still waits for an answer (its thread's pending list has it). */
  private Future<Boolean> stillPending(JsonObject card) {
    String requestId = card.getString("requestId");
    return room.ask(Addresses.PERMISSION_PENDING, new JsonObject().put("threadId", card.getString("threadId")))
        .map(m -> m.getJsonArray("requests").stream()
            .anyMatch(o -> o instanceof JsonObject c && requestId.equals(c.getString("requestId"))))
        .otherwise(true); // unsure: treat it as waiting (the permission room refuses a late answer anyway)
  }

  /**
   * A tap on a card whose request has ended: nothing is recorded after the end and the card is not
   * asked again. The chat is told, except for a rejection in a dialect that cannot tell a person's
   * tap from the SDK's own (VibeAround's SDK rejects every card still open when a turn ends).
   */
  private void alreadyEnded(Route r, JsonObject card, JsonObject outcome, String requestId) {
    if (!dialect.acknowledges() && optionKind(card, outcome.getString("optionId")).startsWith("reject")) {
      log.debug("[{}] a rejection of ended request {} in chat {} ignored", tag, requestId, r.chatId);
      return;
    }
    enqueueText(r, "system", "That request was already answered or ended; your tap changed nothing.");
  }

  private void acknowledged(Generation g, JsonArray outputIds) {
    JsonArray mine = new JsonArray();
    for (Object id : outputIds) {
      if (id instanceof String s) {
        mine.add(s);
        Promise<Void> waiter = g.ackWaiters.remove(s);
        if (waiter != null) {
          waiter.tryComplete();
        }
      }
    }
    if (!mine.isEmpty()) {
      room.ask(Addresses.STORE_OUTBOX_ACK, new JsonObject().put("pluginId", spec.id()).put("outputIds", mine))
          .onComplete(x -> deliver());
    }
  }

  private Future<Void> send(Generation g, Dialect.Out out) {
    return g.peer.notify(out.method(), out.params());
  }
}
