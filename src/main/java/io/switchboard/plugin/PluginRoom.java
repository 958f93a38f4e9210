package io.switchboard.plugin;

import io.switchboard.bus.Addresses;
import io.switchboard.thread.ThreadEvent;
import io.switchboard.cluster.RouterClient;
import io.switchboard.config.AccessToken;
import io.switchboard.config.Limits;
import io.switchboard.config.PluginSpec;
import io.switchboard.config.Settings;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugin room: one supervisor per configured IM plugin. It routes each (plugin, chat) to a
 * thread, streams the thread's events to the chats attached to it, and delivers the plugins'
 * outbox (cards, their end states, system texts, final replies) in order, marking an output
 * delivered only when the plugin acknowledges it.
 */
public final class PluginRoom extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(PluginRoom.class);

  /**
   * Restart backoff, circuit breaker and heartbeat watchdog settings, and how long a plugin that
   * died may take to come back before its chats leave the pending permission requests.
   */
  public record Timings(long backoffBaseMs, long backoffCapMs, int breakerFailures, long breakerWindowMs,
                        long watchdogMs, long surfaceGraceMs) {
    public static final Timings DEFAULT = new Timings(1_000, 60_000, 5, 5 * 60_000, 90_000, 60_000);

    public Timings(long backoffBaseMs, long backoffCapMs, int breakerFailures, long breakerWindowMs, long watchdogMs) {
      this(backoffBaseMs, backoffCapMs, breakerFailures, breakerWindowMs, watchdogMs, DEFAULT.surfaceGraceMs());
    }
  }

  private final Settings settings;
  private final Limits limits;
  private final String version;
  private final Timings timings;
  private final Map<String, PluginSupervisor> plugins = new LinkedHashMap<>();
  private final Map<String, MessageConsumer<JsonObject>> threadConsumers = new HashMap<>();
  /** How this room reaches the agent side (the agent nodes, in a cluster). */
  private RouterClient nodes;
  /** The people behind chat accounts (their links live in this node's store). */
  private final ChatPeople people = new ChatPeople(this::ask);
  /** The codes /link showed, until a signed-in person enters one (sb.plugin.link.redeem). */
  private final LinkCodes linkCodes = new LinkCodes(System::currentTimeMillis);

  public PluginRoom(Settings settings, Limits limits, String version, Timings timings) {
    this.settings = settings;
    this.limits = limits;
    this.version = version;
    this.timings = timings;
  }

  @Override
  public Future<?> start() {
    var bus = vertx.eventBus();
    nodes = new RouterClient(vertx, settings.cluster() != null);
    for (PluginSpec spec : settings.plugins()) {
      plugins.put(spec.id(), new PluginSupervisor(this, context, spec, settings, limits, version, timings));
    }
    // A node whose thread facts were missed, or that was silent at the first list (paused, or a stranger
    // claiming the agent role) and answers now, is caught up as one that joined: its chats get their threads.
    Future<Void> nodesKnown = nodes.start(this::memberChanged, null, node -> catchUp(node, 60));
    return nodesKnown.compose(v -> nodes.ask(Addresses.THREAD_LIST, new JsonObject())).map(reply -> {
      // Routes survive restarts: a chat stays with the newest thread it is attached to.
      restoreRoutes(reply, true);
      bus.<JsonObject>consumer(Addresses.OUTBOX_READY, m -> {
        for (Object id : m.body().getJsonArray("pluginIds", new JsonArray())) {
          PluginSupervisor p = plugins.get((String) id);
          if (p != null) {
            p.deliver();
          }
        }
      });
      bus.<JsonObject>consumer(Addresses.PLUGIN_LINK_REDEEM, this::redeem);
      bus.<JsonObject>consumer(Addresses.PLUGIN_STATUS, m -> {
        JsonArray out = new JsonArray();
        plugins.values().forEach(p -> out.add(p.status()));
        m.reply(new JsonObject().put("plugins", out).put("knocks", new JsonArray(new ArrayList<>(knocks.values()))));
      });
      return null;
    }).compose(x -> people.migrate(settings.plugins()))
        .compose(x -> Future.join(plugins.values().stream().map(PluginSupervisor::restoreScopes).toList()))
        .map(x -> {
          plugins.values().forEach(PluginSupervisor::start);
          log.info("{} plugins starting", plugins.size());
          return null;
        });
  }

  /** Who wrote without being let in (plugins[].users), newest last, one entry per plugin and user. */
  private final java.util.Map<String, JsonObject> knocks = io.switchboard.common.Lru.map(MAX_KNOCKS, false);
  private static final int MAX_KNOCKS = 100;

  /** The characters kept of each field of a knock: 100 knocks stay small whatever a plugin sends. */
  private static final int KNOCK_FIELD_CHARS = 200;

  /** A stranger wrote: kept for the operator, who sees it in the web. */
  void knocked(JsonObject knock) {
    JsonObject kept = new JsonObject();
    knock.forEach(e -> kept.put(e.getKey(), e.getValue() instanceof String s && s.length() > KNOCK_FIELD_CHARS
        ? s.substring(0, KNOCK_FIELD_CHARS) + "…" : e.getValue()));
    String key = kept.getString("plugin") + "\u0000" + kept.getString("userId");
    knocks.remove(key);
    knocks.put(key, kept);
  }

  @Override
  public Future<?> stop() {
    List<Future<?>> stopping = new ArrayList<>();
    plugins.values().forEach(p -> stopping.add(p.stop()));
    return Future.join(stopping);
  }

  /** {@code replace}: a thread's route replaces the chat's; else only a chat without one takes it. */
  private void restoreRoutes(JsonObject threadList, boolean replace) {
    for (Object o : threadList.getJsonArray("threads")) {
      JsonObject t = (JsonObject) o;
      for (Object r : t.getJsonArray("routes")) {
        String surface = (String) r;
        int colon = surface.indexOf(':');
        PluginSupervisor p = colon > 0 ? plugins.get(surface.substring(0, colon)) : null;
        if (p != null && p.restoreRoute(surface.substring(colon + 1), t.getString("threadId"),
            t.getString("startedBy"), replace)) {
          follow(t.getString("threadId"));
        }
      }
    }
  }

  /**
   * Cluster mode: an agent node that joins (again) may have the threads of chats that had none while
   * it was away (it was down when this edge started), and outputs for them (cards, their end
   * states) that no read could reach; a node that merges back after a pause commits nothing that
   * would say so. Once its rooms answer, the chats get their threads back and the plugins read
   * their outbox again.
   */
  private void memberChanged(JsonObject member) {
    if (!"agent".equals(member.getString("role"))) {
      return;
    }
    String node = member.getString("node");
    if ("joined".equals(member.getString("event"))) {
      String before = incarnations.put(node, member.getString("incarnation"));
      plugins.values().forEach(p -> p.nodeBack(node, before != null && !before.equals(member.getString(
          "incarnation"))));
      catchUp(node, 60);
    } else if ("left".equals(member.getString("event")) && !nodes.isLive(node)) {
      // (a departure the router ignored — an earlier start's, heard after its successor joined — is not one)
      incarnations.put(node, member.getString("incarnation"));
      plugins.values().forEach(p -> p.nodeLeft(node));
    }
  }

  /** Cluster mode: the incarnation each agent node last joined as (a restart joins as a new one). */
  private final Map<String, String> incarnations = new HashMap<>();

  private void catchUp(String node, int tries) {
    if (!nodes.isLive(node)) {
      return;
    }
    nodes.askNode(node, Addresses.THREAD_LIST, new JsonObject(), io.switchboard.bus.Bus.quick()).onComplete(r -> {
      if (r.succeeded()) {
        restoreRoutes(r.result(), false);
        plugins.values().forEach(PluginSupervisor::deliver);
      } else if (tries > 1) {
        vertx.setTimer(1_000, t -> catchUp(node, tries - 1));
      }
    });
  }

  /** What the plugins ask the rooms: in a cluster, of the agent node that owns the thread or request. */
  Future<JsonObject> ask(String address, JsonObject body) {
    return nodes.ask(address, body);
  }

  /** For git work on a project (a new worktree and its setup, a merge): the project room's bounds, not 30 s. */
  Future<JsonObject> askSlow(String address, JsonObject body) {
    return nodes.ask(address, body, new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(12 * 60_000));
  }

  Settings settings() {
    return settings;
  }

  ChatPeople people() {
    return people;
  }

  LinkCodes linkCodes() {
    return linkCodes;
  }

  /**
   * {@code {code, personId}}: links the chat account a /link code names to that person (the page's
   * signed-in person), audited; the chat is told. A wrong or expired code is a bad request, nothing linked.
   */
  private void redeem(io.vertx.core.eventbus.Message<JsonObject> m) {
    String personId = m.body().getString("personId");
    LinkCodes.Account account = linkCodes.redeem(m.body().getValue("code") instanceof String c ? c : null);
    if (personId == null || account == null) {
      io.switchboard.bus.ErrorCode.BAD_REQUEST.fail(m, "no such link code, or it expired (a code lasts 2 minutes: "
          + "send /link in the chat again)");
      return;
    }
    String key = ChatPeople.key(account.pluginId(), account.userId());
    ask(Addresses.STORE_PEOPLE_LINK, new JsonObject().put("personId", personId).put("kind", "chat").put("key", key)
        .put("label", key).put("by", personId))
        .onSuccess(x -> {
          log.info("chat account {} linked to person {}", key, personId);
          PluginSupervisor p = plugins.get(account.pluginId());
          if (p != null) {
            p.linked(account.chatId(), m.body().getString("name", personId));
          }
          m.reply(new JsonObject().put("plugin", account.pluginId()).put("userId", account.userId()));
        })
        .onFailure(err -> (io.switchboard.bus.ErrorCode.of(err) == null ? io.switchboard.bus.ErrorCode.STORE_FAILED
            : io.switchboard.bus.ErrorCode.of(err)).fail(m, err.getMessage()));
  }

  /** Streams a thread's events to the plugins whose chats are attached to it. */
  void follow(String threadId) {
    threadConsumers.computeIfAbsent(threadId, id -> vertx.eventBus().<JsonObject>consumer(
        Addresses.threadEvents(id), m -> threadEvent(ThreadEvent.of(m.body()))));
  }

  /** The last event passed on of each followed thread, and what arrives while a gap is filled. */
  private final Map<String, Long> followedSeq = new HashMap<>();
  private final Map<String, List<ThreadEvent>> gapHeld = new HashMap<>();
  /** The most events fetched to fill one gap (a turn's reply rarely has more chunks). */
  private static final int GAP_FILL_LIMIT = 1000;

  /**
   * A live event goes to the plugins in order. Events numbered in between that never came (in a
   * cluster, a connection between nodes was lost) are fetched from the transcript first, which the
   * thread writes before it publishes: a chat's final reply is made of every chunk of its turn.
   */
  private void threadEvent(ThreadEvent e) {
    String threadId = e.threadId();
    List<ThreadEvent> held = gapHeld.get(threadId);
    if (held != null) {
      held.add(e);
      return;
    }
    Long last = followedSeq.get(threadId);
    long seq = e.seq();
    if (last == null || seq <= last + 1) {
      passOn(e);
      return;
    }
    log.info("thread {}: live events {}..{} did not arrive; fetching them from the transcript", threadId, last + 1,
        seq - 1);
    gapHeld.put(threadId, new ArrayList<>(List.of(e)));
    nodes.ask(Addresses.THREAD_HISTORY, new JsonObject().put("threadId", threadId).put("afterSeq", last)
            .put("limit", (int) Math.min(GAP_FILL_LIMIT, seq - 1 - last)))
        .onComplete(history -> {
          if (history.succeeded()) {
            history.result().getJsonArray("events").forEach(o -> passOn(ThreadEvent.inHistory(threadId,
                (JsonObject) o)));
          } else {
            log.warn("thread {}: the missed events could not be read: {}", threadId, history.cause().getMessage());
          }
          gapHeld.remove(threadId).forEach(this::passOn);
        });
  }

  private void passOn(ThreadEvent e) {
    if (e.seq() <= followedSeq.getOrDefault(e.threadId(), 0L)) {
      return; // fetched with the gap and live as well
    }
    followedSeq.put(e.threadId(), e.seq());
    plugins.values().forEach(p -> p.threadEvent(e));
  }

  static void ensureStateDir(java.nio.file.Path dir) throws java.io.IOException {
    AccessToken.ensurePrivateDirectory(dir);
  }
}
