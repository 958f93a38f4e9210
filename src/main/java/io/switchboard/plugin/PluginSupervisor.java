package io.switchboard.plugin;

import io.switchboard.bus.Addresses;
import io.switchboard.config.Limits;
import io.switchboard.config.PluginSpec;
import io.switchboard.config.Settings;
import io.switchboard.jsonrpc.JsonRpcError;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One configured plugin: owns its chats' routes and wires its parts — the process generations
 * ({@link PluginProcess}), what its chats say ({@link ChatInbound}), its threads' events
 * ({@link TurnText}) and its outbox ({@link OutboxDelivery}). All of them live on the plugin room's
 * event loop; a generation's cleanup never touches its successor.
 */
final class PluginSupervisor {
  /** The parts log under this name too, as the plugin did before it was split: log filters keep working. */
  static final Logger log = LoggerFactory.getLogger(PluginSupervisor.class);

  final PluginRoom room;
  final Context context;
  final EventBus bus;
  final PluginSpec spec;
  final Dialect dialect;
  final Settings settings;
  final String tag;
  private final String version;
  private final Path stateDir;
  private final Map<String, Route> routes = new HashMap<>();
  private final OutboxDelivery outbox;
  private final ChatInbound inbound;
  private final TurnText turns;
  private final PluginProcess process;

  PluginSupervisor(PluginRoom room, Context context, PluginSpec spec, Settings settings, Limits limits,
                   String version, PluginRoom.Timings timings) {
    this.room = room;
    this.context = context;
    this.bus = context.owner().eventBus();
    this.spec = spec;
    this.dialect = Dialect.of(spec.dialect());
    this.settings = settings;
    this.version = version;
    this.stateDir = settings.dataDir().resolve("plugins").resolve(spec.id());
    this.tag = "plugin " + spec.id();
    this.outbox = new OutboxDelivery(this);
    this.inbound = new ChatInbound(this, outbox);
    this.turns = new TurnText(this, inbound, outbox, limits.replyChars());
    this.process = new PluginProcess(this, limits, timings, stateDir);
  }

  JsonObject status() {
    Generation gen = process.current();
    return new JsonObject().put("id", spec.id()).put("dialect", spec.dialect()).put("state", process.state().name())
        .put("generation", gen == null ? null : gen.number).put("pid", gen == null ? null : gen.process.pid())
        .put("restarts", process.restarts()).put("restartAt", process.restartAt())
        .put("redeliveries", outbox.redeliveries())
        .put("duplicateMessages", inbound.duplicates()).put("routes", routes.size())
        .put("queuedBytes", gen == null ? 0 : gen.process.queuedBytes());
  }

  // ---- the shared state: routes and the current generation ----

  /** The chat's route, made on first mention. */
  Route route(String chatId) {
    return routes.computeIfAbsent(chatId, c -> new Route(spec.id(), c));
  }

  /** The chat's route, or null when the chat was never heard of. */
  Route knownRoute(String chatId) {
    return routes.get(chatId);
  }

  Collection<Route> routes() {
    return routes.values();
  }

  /** The thread events' side: what the chats are streamed and the turns' final replies. */
  TurnText turns() {
    return turns;
  }

  /** The generation running now, or null while none is. */
  Generation current() {
    return process.current();
  }

  /** The kinds of this plugin's chats as saved (read once at start, before the plugin is spawned). */
  Future<Void> restoreScopes() {
    return room.ask(Addresses.STORE_CHAT_SCOPE_LIST, new JsonObject().put("pluginId", spec.id()))
        .onSuccess(m -> m.getJsonObject("scopes").forEach(e -> route(e.getKey()).scope = (String) e.getValue()))
        .<Void>mapEmpty()
        .recover(err -> {
          log.error("[{}] the kinds of its chats could not be read ({}); they count as groups", tag, err.getMessage());
          return Future.succeededFuture();
        });
  }

  /** The chat's thread after a restart; {@code replace} false: only for a chat without one. Whether it took it. */
  boolean restoreRoute(String chatId, String threadId, String startedBy, boolean replace) {
    Route r = route(chatId);
    if (!replace && r.threadId != null) {
      return false;
    }
    r.threadId = threadId;
    r.startedBy = startedBy;
    return true;
  }

  // ---- what the room asks ----

  void start() {
    process.start();
  }

  Future<?> stop() {
    return process.stop();
  }

  /** Sends what waits in the outbox to the current generation. */
  void deliver() {
    outbox.deliver();
  }

  void threadEvent(io.switchboard.thread.ThreadEvent e) {
    turns.threadEvent(e);
  }

  /** A /link code from this chat was entered on the page: the chat hears whom it answers as now. */
  void linked(String chatId, String name) {
    Route r = knownRoute(chatId);
    if (r != null) {
      outbox.say(r, "Linked: this chat account now answers as " + name + ".");
    }
  }

  void nodeLeft(String node) {
    outbox.nodeLeft(node);
  }

  void nodeBack(String node, boolean restarted) {
    outbox.nodeBack(node, restarted);
  }

  // ---- what the process says ----

  /** What a generation's plugin sends, each message to the part it concerns. */
  JsonRpcPeer.Handler speaking(Generation g) {
    return new JsonRpcPeer.Handler() {
      @Override
      public Future<Object> request(String method, Object params) {
        return serve(g, method, JsonRpcPeer.object(params));
      }

      @Override
      public void notification(String method, Object params) {
        heard(g, method, JsonRpcPeer.object(params));
      }
    };
  }

  /** A generation died: its outputs are settled (the process backs off and respawns by itself). */
  void died(Generation g) {
    outbox.died(g);
  }

  private Future<Object> serve(Generation g, String method, JsonObject params) {
    heardFrom(g, method);
    switch (method) {
      case "initialize" -> {
        process.initialized(g);
        context.runOnContext(v -> outbox.deliver());
        return Future.succeededFuture(dialect.initializeResult(spec, stateDir, version));
      }
      case "session/new" -> {
        return Future.succeededFuture(new JsonObject().put("sessionId", "switchboard-" + spec.id()));
      }
      case "session/prompt" -> {
        return inbound.prompt(g, params);
      }
      case "_va/heartbeat", "_switchboard/heartbeat" -> {
        process.heartbeat(g);
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
      case "session/cancel" -> inbound.cancel(params);
      case "_va/heartbeat", "_switchboard/heartbeat" -> process.heartbeat(g);
      case "_switchboard/ack" -> outbox.acknowledged(g, JsonRpcPeer.array(params.getValue("outputIds")));
      default -> log.debug("[{}] ignored notification {}", tag, method);
    }
  }

  /** A generation that can show outputs from now on gets what waits for it. */
  private void heardFrom(Generation g, String method) {
    if (process.heardFrom(g, method)) {
      context.runOnContext(v -> outbox.deliver());
    }
  }
}
