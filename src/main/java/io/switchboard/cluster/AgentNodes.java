package io.switchboard.cluster;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BinaryOperator;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How an edge node's surface rooms (web, plugins, metrics) reach the agent side, through its one
 * {@link EdgeRouter}. In a cluster there may be several agent nodes, each with its own store,
 * ledger, threads and agents, serving its commands at its own addresses ({@link Addresses#onNode}):
 * a command about a thread or a permission request goes to the node that owns it (learned from the
 * {@code node} the facts, cards and thread lists carry, else looked up), a new thread to the node
 * the caller names or the first that runs its agent, and a question about all of them (thread
 * lists, pending cards, status) to every agent node, the answers merged. The edge's own data
 * (browser sessions, the plugins' chats and their outputs) is its own store's.
 *
 * <p>No cross-node request waits without a bound: each has the send timeout, and those waiting on a
 * node fail at once as {@code unavailable} when the node leaves (Vert.x would only fail them at
 * their timeout, docs/reliability.md). One per edge node, in its {@link EdgeRouter}, used on its
 * event loop; the surface rooms ask through a {@link RouterClient}.
 */
public final class AgentNodes {
  private static final Logger log = LoggerFactory.getLogger(AgentNodes.class);

  /** Addresses an edge's own store serves. */
  private static final Set<String> EDGE_LOCAL = Set.of(Addresses.STORE_WEB_SESSION_SAVE,
      Addresses.STORE_WEB_SESSION_FORGET, Addresses.STORE_WEB_SESSION_LIST, Addresses.STORE_INBOUND_SEEN,
      Addresses.STORE_INBOUND_MARK, Addresses.STORE_CHAT_SCOPE_SAVE, Addresses.STORE_CHAT_SCOPE_LIST,
      Addresses.STORE_OUTBOX_ENQUEUE, Addresses.PLUGIN_STATUS, Addresses.METRICS_SCRAPE);

  private final Vertx vertx;
  private final boolean clustered;
  /** The agent nodes that are members now: name -> incarnation (name order: the placement order). */
  private final Map<String, String> live = new TreeMap<>();
  /** Agent nodes that left: name -> why, until a node of that name joins again. */
  private final Map<String, String> gone = new HashMap<>();
  private final Map<String, String> threadNode = new HashMap<>();
  /** Pending requests' owners (an entry goes when the request's end is heard). */
  private final Map<String, String> requestNode = new HashMap<>();
  /** Outputs read from an agent node's outbox and not acknowledged yet: outputId -> node. */
  private final Map<String, String> outputNode = new HashMap<>();
  /** What waits for an answer from each node, failed at once when the node leaves. */
  private final Map<String, Set<Promise<?>>> asking = new HashMap<>();

  /** How long a look-up (which node has this thread or request?) waits for each node's answer. */
  static final long LOOK_UP_MS = 5_000;
  /**
   * How often an edge compares each node's fact count with what it heard: a gap is seen at the next
   * fact, and a lost last fact (nothing after it) at this check.
   */
  static final long SEQUENCE_CHECK_MS = 15_000;
  /**
   * How long one try of an answer waits for its node. An answer whose try gets no reply (a cut
   * connection lost the request or its reply) is sent again with the same key, up to
   * {@link #ANSWER_TRIES} times while its node is a member: one that had won learns so.
   */
  static final long ANSWER_TRY_MS = 10_000;
  static final int ANSWER_TRIES = 3;
  /** How soon a send that found no handler at a member's address is tried again. */
  static final long STARTING_RETRY_MS = 200;
  private final long lookUpMs;
  private final long sequenceCheckMs;
  private final long answerTryMs;
  private final io.switchboard.common.RandomIds ids = new io.switchboard.common.RandomIds();

  AgentNodes(Vertx vertx, boolean clustered) {
    this(vertx, clustered, LOOK_UP_MS, SEQUENCE_CHECK_MS, ANSWER_TRY_MS);
  }

  /** Tests shorten the bounds. */
  AgentNodes(Vertx vertx, boolean clustered, long lookUpMs, long sequenceCheckMs, long answerTryMs) {
    this.vertx = vertx;
    this.clustered = clustered;
    this.lookUpMs = lookUpMs;
    this.sequenceCheckMs = sequenceCheckMs;
    this.answerTryMs = answerTryMs;
  }

  public boolean clustered() {
    return clustered;
  }

  /** The agent nodes that are members now, by name. */
  public List<String> liveNodes() {
    return List.copyOf(live.keySet());
  }

  /**
   * Cluster mode: starts hearing the members and the facts that name owners; {@code onMember} hears
   * each member fact after this router took it in. Completes once the members now are known.
   */
  public Future<Void> start(Consumer<JsonObject> onMember) {
    return start(onMember, node -> { }, node -> { }, false);
  }

  /**
   * As {@link #start(Consumer)}; {@code onGap} hears the name of an agent node some of whose
   * permission facts this edge missed (their sequence skipped, or, checked every 15 s, the node
   * published more than was heard), to ask it what is pending; {@code onThreadGap} the same of its
   * thread facts, to list its threads again.
   */
  public Future<Void> start(Consumer<JsonObject> onMember, Consumer<String> onGap, Consumer<String> onThreadGap) {
    return start(onMember, onGap, onThreadGap, true);
  }

  private Future<Void> start(Consumer<JsonObject> onMember, Consumer<String> onGap, Consumer<String> onThreadGap,
                             boolean checksSequences) {
    if (!clustered) {
      return Future.succeededFuture();
    }
    var bus = vertx.eventBus();
    bus.<JsonObject>localConsumer(Addresses.CLUSTER_MEMBER, m -> member(m.body()).onSuccess(changed -> {
      if (changed) {
        onMember.accept(m.body());
      }
    }));
    bus.<JsonObject>consumer(Addresses.THREAD_CHANGED, m -> {
      if (m.body().getBoolean("deleted", false)) {
        threadNode.remove(m.body().getString("threadId")); // a deleted thread's owner is not kept
      } else {
        owns(threadNode, m.body().getString("threadId"), m.body());
      }
      sequence(heardThreads, m.body(), "thread", onThreadGap);
    });
    bus.<JsonObject>consumer(Addresses.PERMISSION_SHOWN, m -> {
      owns(requestNode, m.body().getString("requestId"), m.body());
      owns(threadNode, m.body().getString("threadId"), m.body());
      sequence(heard, m.body(), "permission", onGap);
    });
    bus.<JsonObject>consumer(Addresses.PERMISSION_RESOLVED, m -> {
      requestNode.remove(m.body().getString("requestId"));
      sequence(heard, m.body(), "permission", onGap);
    });
    bus.<JsonObject>consumer(Addresses.PERMISSION_CANCELLED, m -> {
      requestNode.remove(m.body().getString("requestId"));
      sequence(heard, m.body(), "permission", onGap);
    });
    if (checksSequences) {
      vertx.setPeriodic(sequenceCheckMs, t -> liveNodes().forEach(node -> {
        checkCount(node, Addresses.PERMISSION_STATUS, heard, "permission", onGap);
        checkCount(node, Addresses.THREAD_STATUS, heardThreads, "thread", onThreadGap);
      }));
    }
    return bus.<JsonObject>request(Addresses.CLUSTER_MEMBERS, new JsonObject(),
        new io.vertx.core.eventbus.DeliveryOptions().setLocalOnly(true)).map(reply -> {
      for (Object o : reply.body().getJsonArray("members")) {
        JsonObject m = (JsonObject) o;
        if ("agent".equals(m.getString("role")) && !gone.containsKey(m.getString("node"))) {
          live.putIfAbsent(m.getString("node"), m.getString("incarnation"));
        }
      }
      log.info("agent nodes in the cluster: {}", live.isEmpty() ? "none yet" : String.join(", ", live.keySet()));
      return null;
    });
  }

  /** The last fact of a kind heard of an agent node: its incarnation and sequence number. */
  private record Heard(String incarnation, long seq) {}

  /** Of each agent node, its permission facts and its thread facts (each kind numbered on its own). */
  private final Map<String, Heard> heard = new HashMap<>();
  private final Map<String, Heard> heardThreads = new HashMap<>();

  /** Compares the count a node's status reply gives with what this edge heard of that kind. */
  private void checkCount(String node, String address, Map<String, Heard> heard, String kind,
                          Consumer<String> onGap) {
    send(node, address, new JsonObject(), new DeliveryOptions().setSendTimeout(lookUpMs)).onSuccess(status -> {
      Long seq = status.getLong("seq");
      Heard last = heard.get(node);
      boolean missed = seq != null && (last == null || !last.incarnation().equals(status.getString("incarnation"))
          ? seq > 0 : seq > last.seq());
      if (missed) {
        log.warn("agent node {} published {} {} facts, this edge heard {}: asking it again", node, seq, kind,
            last == null ? "none" : last.seq());
        onGap.accept(node);
      }
    });
  }

  private void sequence(Map<String, Heard> heard, JsonObject fact, String kind, Consumer<String> onGap) {
    String node = fact.getString("node");
    Long seq = fact.getLong("seq");
    if (node == null || seq == null) {
      return;
    }
    Heard last = heard.get(node);
    String incarnation = fact.getString("incarnation");
    if (last == null || !last.incarnation().equals(incarnation) || seq > last.seq()) {
      heard.put(node, new Heard(incarnation, seq));
    }
    // Numbers start at 1 with each incarnation: a first one heard above 1 may follow lost ones too
    // (an asking costs one list; a lost card would stay open).
    long expected = last != null && last.incarnation().equals(incarnation) ? last.seq() + 1 : 1;
    if (seq > expected) {
      log.warn("missed {} {} facts of agent node {} (heard {} after {}): asking it again", seq - expected, kind,
          node, seq, expected - 1);
      onGap.accept(node);
    }
  }

  /** What a reconciliation with a node's pending list has heard up to ({@code seq} of its reply). */
  public void heardUpTo(JsonObject pendingReply) {
    heardUpTo(heard, pendingReply);
  }

  private static void heardUpTo(Map<String, Heard> heard, JsonObject reply) {
    String node = reply.getString("node");
    Long seq = reply.getLong("seq");
    Heard last = node == null ? null : heard.get(node);
    if (seq != null && (last == null || !last.incarnation().equals(reply.getString("incarnation"))
        || seq > last.seq())) {
      heard.put(node, new Heard(reply.getString("incarnation"), seq));
    }
  }

  /**
   * One agent node's threads, listed again (some of its thread facts were missed): the list, and
   * under {@code vanished} the threads this edge had of it that it no longer has (deleted unheard).
   */
  public Future<JsonObject> relistThreads(String node) {
    return send(node, Addresses.THREAD_LIST, new JsonObject(), new DeliveryOptions().setSendTimeout(lookUpMs))
        .map(reply -> {
          heardUpTo(heardThreads, reply);
          Set<String> listed = new HashSet<>();
          reply.getJsonArray("threads").forEach(o -> {
            JsonObject t = (JsonObject) o;
            listed.add(t.getString("threadId"));
            threadNode.put(t.getString("threadId"), node);
          });
          JsonArray vanished = new JsonArray();
          threadNode.entrySet().removeIf(e -> {
            boolean gone = node.equals(e.getValue()) && !listed.contains(e.getKey());
            if (gone) {
              vanished.add(e.getKey());
            }
            return gone;
          });
          return reply.put("vanished", vanished);
        });
  }

  private static void owns(Map<String, String> owners, String id, JsonObject fact) {
    if (id != null && fact.getString("node") != null) {
      owners.put(id, fact.getString("node"));
    }
  }

  /**
   * A member joined or left; completes with whether an agent node's presence changed (what the room
   * tells its pages and chats). A member that leaves while another of its name is still a member
   * changed nothing: a second node of that name, which stops when it finds the first (ClusterNode),
   * or an earlier start's departure heard after its successor joined.
   */
  private Future<Boolean> member(JsonObject fact) {
    if (!"agent".equals(fact.getString("role"))) {
      return Future.succeededFuture(false);
    }
    String node = fact.getString("node");
    String incarnation = fact.getString("incarnation");
    if (!"left".equals(fact.getString("event"))) {
      live.put(node, incarnation);
      gone.remove(node);
      return Future.succeededFuture(true);
    }
    if (live.containsKey(node) && incarnation != null && !incarnation.equals(live.get(node))) {
      return Future.succeededFuture(false); // an earlier start's departure, heard after its successor joined
    }
    String before = live.get(node);
    return vertx.eventBus().<JsonObject>request(Addresses.CLUSTER_MEMBERS, new JsonObject(),
        new io.vertx.core.eventbus.DeliveryOptions().setLocalOnly(true))
        .map(reply -> reply.body().getJsonArray("members").stream().map(o -> (JsonObject) o)
            .filter(m -> "agent".equals(m.getString("role")) && node.equals(m.getString("node"))
                && !java.util.Objects.equals(incarnation, m.getString("incarnation")))
            .map(m -> m.getString("incarnation")).findFirst().orElse(null))
        .otherwise((String) null)
        .map(remaining -> {
          if (!java.util.Objects.equals(before, live.get(node))) {
            return false; // a start of that node joined while the members were asked: it is here
          }
          if (remaining != null) {
            log.info("a second agent node named {} left; the first (incarnation {}) is still a member", node,
                remaining);
            live.put(node, remaining);
            gone.remove(node);
            return false;
          }
          String reason = "agent node " + node + " left the cluster: what it runs does not answer until it is back";
          live.remove(node);
          gone.put(node, reason);
          Set<Promise<?>> waiting = asking.remove(node);
          if (waiting != null) {
            new ArrayList<>(waiting).forEach(p -> p.tryFail(unavailable(reason)));
          }
          return true;
        });
  }

  /** Whether the node is a member now (false for one that left and is not back). */
  public boolean isLive(String node) {
    return live.containsKey(node);
  }

  /** The node that owns a thread, when known. */
  public String ownerOfThread(String threadId) {
    return threadNode.get(threadId);
  }

  /** A request whose end fact was missed ended (its node's ledger says so): its owner is not kept. */
  public void ended(String requestId) {
    requestNode.remove(requestId);
  }

  /** The node that owns a pending request, when known. */
  public String ownerOfRequest(String requestId) {
    return requestNode.get(requestId);
  }

  /** Asks one agent node's rooms (cluster mode). */
  public Future<JsonObject> askNode(String node, String address, JsonObject body, DeliveryOptions options) {
    return send(node, address, body, options);
  }

  public Future<JsonObject> ask(String address, JsonObject body) {
    return ask(address, body, new DeliveryOptions());
  }

  /** How one kind of command reaches the agent side in a cluster. */
  @FunctionalInterface
  private interface Route {
    Future<JsonObject> ask(String address, JsonObject body, DeliveryOptions options);
  }

  /**
   * The routing table (cluster mode): address -> how it is asked. Addresses not listed go to the
   * node of the body's {@code threadId} ({@link #byThread}).
   */
  private final Map<String, Route> routes = routes();

  private Map<String, Route> routes() {
    Map<String, Route> table = new HashMap<>();
    Route local = (address, body, options) ->
        vertx.eventBus().<JsonObject>request(address, body, options).map(Message::body);
    EDGE_LOCAL.forEach(address -> table.put(address, local));
    table.put(Addresses.THREAD_LIST, (address, body, options) -> all(address, body, options, false).map(replies -> {
      JsonArray threads = new JsonArray();
      replies.forEach((node, r) -> r.getJsonArray("threads").forEach(t -> {
        owns(threadNode, ((JsonObject) t).getString("threadId"), (JsonObject) t);
        threads.add(t);
      }));
      return new JsonObject().put("threads", threads);
    }));
    table.put(Addresses.THREAD_CREATE, (address, body, options) -> create(body, options));
    Route pendingOrLedger = (address, body, options) -> body.getString("threadId") != null
        ? toThread(address, body, options).map(r -> ownRows(r, threadNode.get(body.getString("threadId"))))
        : requests(address, body, options);
    table.put(Addresses.PERMISSION_PENDING, pendingOrLedger);
    table.put(Addresses.STORE_LEDGER_LIST, pendingOrLedger);
    table.put(Addresses.PERMISSION_ANSWER, (address, body, options) -> toRequest(address, keyed(body),
        new DeliveryOptions(options).setSendTimeout(Math.min(options.getSendTimeout(), answerTryMs))));
    table.put(Addresses.STORE_LEDGER_GET, this::toRequest);
    table.put(Addresses.AGENT_STATUS, (address, body, options) -> all(address, body, options, true)
        .map(AgentNodes::agentStatus));
    table.put(Addresses.PERMISSION_STATUS, (address, body, options) -> all(address, body, options, true)
        .map(AgentNodes::permissionStatus));
    table.put(Addresses.STORE_HEALTH, (address, body, options) -> withEdgeStore(address, body, options, true)
        .map(r -> new JsonObject()));
    table.put(Addresses.STORE_OUTBOX_STATS, (address, body, options) -> withEdgeStore(address, body, options, false)
        .map(AgentNodes::outboxStats));
    // A node that does not answer now holds back only its own outputs (read again when it is back).
    table.put(Addresses.STORE_OUTBOX_PENDING, (address, body, options) ->
        withEdgeStore(address, body, options, false).map(r -> outputs(r, body)));
    table.put(Addresses.STORE_OUTBOX_REOPEN, (address, body, options) ->
        withEdgeStore(address, body, options, false).map(r -> new JsonObject()));
    table.put(Addresses.STORE_OUTBOX_ACK, (address, body, options) -> acknowledge(body, options));
    return Map.copyOf(table);
  }

  /** The default route: the node that owns the body's thread. */
  private Future<JsonObject> byThread(String address, JsonObject body, DeliveryOptions options) {
    return body.getString("threadId") != null ? toThread(address, body, options)
        : Future.failedFuture(new IllegalArgumentException("no route in a cluster for " + address));
  }

  /** Asks the room that answers {@code address} for this body: see the class comment for which. */
  public Future<JsonObject> ask(String address, JsonObject body, DeliveryOptions options) {
    if (!clustered) {
      return vertx.eventBus().<JsonObject>request(address, body, options).map(Message::body);
    }
    return routes.getOrDefault(address, this::byThread).ask(address, body, options);
  }

  // ---- one node ----

  private Future<JsonObject> send(String node, String address, JsonObject body, DeliveryOptions options) {
    if (!live.containsKey(node)) {
      return Future.failedFuture(unavailable(gone.getOrDefault(node, "agent node " + node
          + " is not a member of the cluster")));
    }
    Promise<JsonObject> answer = Promise.promise();
    Set<Promise<?>> waiting = asking.computeIfAbsent(node, n -> new HashSet<>());
    waiting.add(answer);
    answer.future().onComplete(x -> waiting.remove(answer));
    attempt(node, address, body, options, answer, System.nanoTime() + lookUpMs * 1_000_000);
    return answer.future();
  }

  /**
   * One try of a send. No handler at the node's address means nothing was delivered: a node that
   * just joined registers its rooms' addresses after it is a member (and the cluster learns of each
   * a moment later), so the send is tried again for up to the look-up bound while the node is a
   * member, whatever the command.
   */
  private void attempt(String node, String address, JsonObject body, DeliveryOptions options,
                       Promise<JsonObject> answer, long deadline) {
    vertx.eventBus().<JsonObject>request(Addresses.onNode(node, address), body, options).onComplete(done -> {
      if (answer.future().isComplete()) {
        return; // failed meanwhile: its node left
      }
      if (done.succeeded()) {
        answer.complete(done.result().body());
      } else if (done.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS) {
        if (live.containsKey(node) && System.nanoTime() < deadline) {
          vertx.setTimer(Math.max(1, Math.min(STARTING_RETRY_MS, lookUpMs / 10)),
              t -> attempt(node, address, body, options, answer, deadline));
        } else {
          answer.tryFail(new NoReply("agent node " + node + " is starting: its rooms do not answer yet"));
        }
      } else if (done.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.TIMEOUT) {
        answer.tryFail(new NoReply("agent node " + node + " did not answer in time (" + re.getMessage() + ")"));
      } else {
        answer.tryFail(done.cause());
      }
    });
  }

  /** An answer with a key of its own (unless its surface gave one): the same on every try. */
  private JsonObject keyed(JsonObject body) {
    if (body.getValue("answerKey") != null) {
      return body;
    }
    return body.copy().put("answerKey", ids.next("ak_", 12));
  }

  /**
   * An answer to its owner; tried again with the same key while the owner is a member and no reply
   * came (nor a refusal): the request or its reply was lost (a cut connection), or the node is slow.
   */
  private Future<JsonObject> answer(String node, JsonObject body, DeliveryOptions options, int tries) {
    return send(node, Addresses.PERMISSION_ANSWER, body, options).recover(err -> {
      if (tries > 1 && live.containsKey(node) && err instanceof NoReply) {
        log.warn("an answer to request {} got no reply from agent node {} ({}): sending it again",
            body.getString("requestId"), node, err.getMessage());
        // A moment between tries (a node still registering its rooms was already given send's own retries).
        Promise<Void> pause = Promise.promise();
        vertx.setTimer(Math.max(1, answerTryMs / 10), t -> pause.complete());
        return pause.future().compose(x -> answer(node, body, options, tries - 1));
      }
      return Future.failedFuture(err);
    });
  }

  private Future<JsonObject> toThread(String address, JsonObject body, DeliveryOptions options) {
    String threadId = body.getString("threadId");
    String node = threadNode.get(threadId);
    return node != null ? send(node, address, body, options)
        : locate(threadId).compose(owner -> send(owner, address, body, options));
  }

  /** Asks every agent node for a thread nobody has named an owner of yet (a page with an old link). */
  private Future<String> locate(String threadId) {
    if (live.isEmpty()) {
      return Future.failedFuture(noAgentNode());
    }
    return firstWith(Addresses.THREAD_GET, new JsonObject().put("threadId", threadId), r -> true)
        .compose(found -> {
          if (found.getKey() != null) {
            threadNode.put(threadId, found.getKey());
            return Future.succeededFuture(found.getKey());
          }
          return Future.failedFuture(found.getValue() != null || !gone.isEmpty()
              ? unavailable("no agent node that answers has thread "
              + threadId + (gone.isEmpty() ? "" : "; gone: " + String.join(", ", gone.keySet())))
              : new ReplyException(ReplyFailure.RECIPIENT_FAILURE, ErrorCode.UNKNOWN_THREAD.failureCode,
                  "unknown thread " + threadId));
        });
  }

  private Future<JsonObject> toRequest(String address, JsonObject body, DeliveryOptions options) {
    String requestId = body.getString("requestId");
    String node = requestNode.get(requestId);
    if (node != null) {
      return toOwner(node, address, body, options);
    }
    // Not heard of (ended, or shown before this edge started): the node whose ledger has it.
    if (live.isEmpty()) {
      return Future.failedFuture(noAgentNode());
    }
    JsonObject lookup = new JsonObject().put("requestId", requestId);
    return firstWith(Addresses.STORE_LEDGER_GET, lookup, r -> r.getJsonObject("request") != null).compose(found -> {
      if (found.getKey() != null) {
        return address.equals(Addresses.STORE_LEDGER_GET) ? Future.succeededFuture(found.getValue())
            : toOwner(found.getKey(), address, body, options);
      }
      if (address.equals(Addresses.STORE_LEDGER_GET)) {
        return Future.succeededFuture(new JsonObject().putNull("request"));
      }
      // Not on a node that answers: unknown, unless a node that is gone (or did not answer) may have it.
      return Future.failedFuture(found.getValue() != null || !gone.isEmpty()
          ? unavailable("request " + requestId + " is on no agent node that answers"
              + (gone.isEmpty() ? "" : "; gone: " + String.join(", ", gone.keySet())))
          : new ReplyException(ReplyFailure.RECIPIENT_FAILURE, ErrorCode.UNKNOWN_REQUEST.failureCode,
              "unknown request " + requestId));
    });
  }

  private Future<JsonObject> toOwner(String node, String address, JsonObject body, DeliveryOptions options) {
    return address.equals(Addresses.PERMISSION_ANSWER) ? answer(node, body, options, ANSWER_TRIES)
        : send(node, address, body, options);
  }

  /**
   * Asks every agent node that is a member; completes as soon as one answers {@code has} (a node that
   * does not answer does not hold up one that does) with that node and its answer, else once all
   * have answered with a null node and, when some did not answer, a non-null value.
   */
  private Future<Map.Entry<String, JsonObject>> firstWith(String address, JsonObject body,
                                                           java.util.function.Predicate<JsonObject> has) {
    List<String> nodes = liveNodes();
    Promise<Map.Entry<String, JsonObject>> found = Promise.promise();
    int[] left = {nodes.size()};
    boolean[] someFailed = {false};
    for (String n : nodes) {
      send(n, address, body, new DeliveryOptions().setSendTimeout(lookUpMs)).onComplete(r -> {
        if (r.succeeded() && has.test(r.result())) {
          found.tryComplete(new java.util.AbstractMap.SimpleImmutableEntry<>(n, r.result()));
        } else if (r.failed() && ErrorCode.of(r.cause()) != ErrorCode.UNKNOWN_THREAD) {
          someFailed[0] = true;
        }
        if (--left[0] == 0) {
          found.tryComplete(new java.util.AbstractMap.SimpleImmutableEntry<>(null,
              someFailed[0] ? new JsonObject() : null));
        }
      });
    }
    return found.future();
  }

  /**
   * A new thread: on the node named in the body ({@code node}), else on the first agent node, by
   * name, that runs the thread's agent.
   */
  private Future<JsonObject> create(JsonObject body, DeliveryOptions options) {
    String named = body.getString("node");
    if (named != null) {
      if (!live.containsKey(named)) {
        return Future.failedFuture(new ReplyException(ReplyFailure.RECIPIENT_FAILURE,
            gone.containsKey(named) ? ErrorCode.UNAVAILABLE.failureCode : ErrorCode.BAD_REQUEST.failureCode,
            gone.getOrDefault(named, "no agent node named " + named + " in the cluster (agent nodes: "
                + (live.isEmpty() ? "none" : String.join(", ", live.keySet())) + ")")));
      }
      return created(named, send(named, Addresses.THREAD_CREATE, body.copy().put("node", (String) null), options));
    }
    if (live.isEmpty()) {
      return Future.failedFuture(noAgentNode());
    }
    return createOn(liveNodes(), 0, body, options, null);
  }

  private Future<JsonObject> createOn(List<String> nodes, int i, JsonObject body, DeliveryOptions options,
                                      Throwable refused) {
    if (i == nodes.size()) {
      return Future.failedFuture(refused);
    }
    return created(nodes.get(i), send(nodes.get(i), Addresses.THREAD_CREATE, body, options)).recover(err ->
        ErrorCode.of(err) == ErrorCode.BAD_REQUEST || ErrorCode.of(err) == ErrorCode.UNAVAILABLE
            ? createOn(nodes, i + 1, body, options, refused == null ? err : refused) : Future.failedFuture(err));
  }

  private Future<JsonObject> created(String node, Future<JsonObject> reply) {
    return reply.onSuccess(r -> threadNode.put(r.getString("threadId"), node));
  }

  // ---- every node ----

  /**
   * Asks every agent node; {@code strict}: fails unless all answer (a status), else merges what
   * answered (a list: a node that is down is said by the member facts, not by an empty page).
   */
  private Future<Map<String, JsonObject>> all(String address, JsonObject body, DeliveryOptions options,
                                              boolean strict) {
    List<String> nodes = liveNodes();
    if (nodes.isEmpty()) {
      return strict ? Future.failedFuture(noAgentNode()) : Future.succeededFuture(Map.of());
    }
    List<Future<JsonObject>> asked = new ArrayList<>();
    nodes.forEach(n -> asked.add(send(n, address, body, options)));
    return Future.join(asked).transform(x -> {
      Map<String, JsonObject> replies = new TreeMap<>();
      Throwable failure = null;
      for (int i = 0; i < nodes.size(); i++) {
        if (asked.get(i).succeeded()) {
          replies.put(nodes.get(i), asked.get(i).result());
        } else if (failure == null) {
          failure = asked.get(i).cause();
        }
      }
      return failure != null && (strict || replies.isEmpty()) ? Future.failedFuture(failure)
          : Future.succeededFuture(replies);
    });
  }

  /**
   * Every agent node and the edge's own store (its key is the empty name); {@code strict}: all must
   * answer, else the edge's store and the nodes that answered.
   */
  private Future<Map<String, JsonObject>> withEdgeStore(String address, JsonObject body, DeliveryOptions options,
                                                        boolean strict) {
    Future<JsonObject> own = vertx.eventBus().<JsonObject>request(address, body, options).map(Message::body);
    // What may go without a node is not held up by it for long (a restarted node's old registrations
    // linger a moment in the cluster, and a request to them waits for its timeout).
    DeliveryOptions bounded = strict ? options
        : new DeliveryOptions(options).setSendTimeout(Math.min(options.getSendTimeout(), lookUpMs));
    return Future.all(own, all(address, body, bounded, strict).recover(err ->
            live.isEmpty() || !strict ? Future.succeededFuture(Map.of()) : Future.failedFuture(err)))
        .map(x -> {
          Map<String, JsonObject> replies = new TreeMap<>(x.<Map<String, JsonObject>>resultAt(1));
          replies.put("", own.result());
          return replies;
        });
  }

  private Future<JsonObject> requests(String address, JsonObject body, DeliveryOptions options) {
    return all(address, body, options, false).map(replies -> {
      if (Addresses.PERMISSION_PENDING.equals(address)) {
        replies.values().forEach(this::heardUpTo); // what this list says is what the facts said so far
      }
      List<JsonObject> rows = new ArrayList<>();
      replies.forEach((node, r) -> r.getJsonArray("requests").forEach(o -> {
        JsonObject row = o instanceof JsonObject j ? j : JsonObject.mapFrom(o);
        row.put("node", node);
        if (Addresses.PERMISSION_PENDING.equals(address)) {
          requestNode.put(row.getString("requestId"), node);
          threadNode.put(row.getString("threadId"), node);
        }
        rows.add(row);
      }));
      if (Addresses.STORE_LEDGER_LIST.equals(address)) {
        // The ledger lists the newest first; so does the merge, to the same limit.
        rows.sort(Comparator.comparingLong((JsonObject r) -> r.getLong("createdAt", 0L)).reversed());
        int limit = body.getInteger("limit", rows.size());
        return new JsonObject().put("requests", new JsonArray(new ArrayList<>(rows.subList(0, Math.min(limit,
            rows.size())))));
      }
      rows.sort(Comparator.comparingLong((JsonObject r) -> r.getLong("createdAt", 0L)));
      return new JsonObject().put("requests", new JsonArray(new ArrayList<>(rows)));
    });
  }

  /** A node's rows (its ledger's, its cards) name it, as the merged lists' do. */
  private static JsonObject ownRows(JsonObject reply, String node) {
    if (node != null) {
      reply.getJsonArray("requests").forEach(o -> {
        if (o instanceof JsonObject row && row.getString("node") == null) {
          row.put("node", node);
        }
      });
    }
    return reply;
  }

  private JsonObject outputs(Map<String, JsonObject> replies, JsonObject body) {
    List<JsonObject> rows = new ArrayList<>();
    replies.forEach((node, r) -> r.getJsonArray("outputs").forEach(o -> {
      JsonObject row = (JsonObject) o;
      if (!node.isEmpty()) {
        outputNode.put(row.getString("outputId"), node);
        row.put("node", node); // whose request a card is: its chat is told when that node leaves
      }
      rows.add(row);
    }));
    // Each store's rows come in its order; across stores, in the order they were written.
    rows.sort(Comparator.comparingLong((JsonObject r) -> r.getLong("createdAt", 0L)));
    int limit = body.getInteger("limit", rows.size());
    return new JsonObject().put("outputs", new JsonArray(new ArrayList<>(rows.subList(0, Math.min(limit,
        rows.size())))));
  }

  private Future<JsonObject> acknowledge(JsonObject body, DeliveryOptions options) {
    Map<String, JsonArray> byNode = new TreeMap<>();
    for (Object id : body.getJsonArray("outputIds", new JsonArray())) {
      String node = id instanceof String s ? outputNode.remove(s) : null;
      byNode.computeIfAbsent(node == null ? "" : node, n -> new JsonArray()).add(id);
    }
    List<Future<JsonObject>> acks = new ArrayList<>();
    byNode.forEach((node, ids) -> {
      JsonObject part = body.copy().put("outputIds", ids);
      acks.add(node.isEmpty() ? vertx.eventBus().<JsonObject>request(Addresses.STORE_OUTBOX_ACK, part, options)
          .map(Message::body) : send(node, Addresses.STORE_OUTBOX_ACK, part, options));
    });
    return Future.all(acks).map(x -> new JsonObject());
  }

  // ---- merging the agent nodes' answers ----

  /** Counts add up, lists join; {@code nodes} keeps each node's own answer. */
  private static JsonObject agentStatus(Map<String, JsonObject> replies) {
    JsonObject merged = merge(replies);
    // A setting, not a count: the longest of the nodes' (each node's own is under "nodes").
    merged.put("idleStopSeconds", replies.values().stream().mapToLong(r -> r.getLong("idleStopSeconds", 0L)).max()
        .orElse(0));
    JsonObject nodes = new JsonObject();
    replies.forEach(nodes::put);
    return merged.put("nodes", nodes);
  }

  private static JsonObject permissionStatus(Map<String, JsonObject> replies) {
    JsonObject merged = merge(replies);
    merged.remove("seq"); // each node's own count: no sum means anything
    merged.remove("node");
    merged.remove("incarnation");
    Long oldest = replies.values().stream().map(r -> r.getLong("oldestCreatedAt")).filter(java.util.Objects::nonNull)
        .min(Long::compare).orElse(null);
    return merged.put("oldestCreatedAt", oldest)
        .put("closing", replies.values().stream().anyMatch(r -> r.getBoolean("closing", false)));
  }

  private static JsonObject outboxStats(Map<String, JsonObject> replies) {
    Map<String, JsonObject> byPlugin = new TreeMap<>();
    replies.values().forEach(r -> r.getJsonArray("plugins").forEach(o -> {
      JsonObject p = (JsonObject) o;
      byPlugin.merge(p.getString("pluginId"), p.copy(), (a, b) -> a
          .put("pending", a.getLong("pending") + b.getLong("pending"))
          .put("oldestCreatedAt", Math.min(a.getLong("oldestCreatedAt"), b.getLong("oldestCreatedAt"))));
    }));
    return new JsonObject().put("plugins", new JsonArray(new ArrayList<>(byPlugin.values())));
  }

  /** Numbers add up, lists join (each entry naming its node), other values: the first node's. */
  private static JsonObject merge(Map<String, JsonObject> replies) {
    JsonObject merged = new JsonObject();
    BinaryOperator<Object> add = (a, b) -> {
      if (a instanceof Number x && b instanceof Number y) {
        return x instanceof Double || y instanceof Double ? (Object) (x.doubleValue() + y.doubleValue())
            : (Object) (x.longValue() + y.longValue());
      }
      if (a instanceof JsonArray x && b instanceof JsonArray y) {
        return x.copy().addAll(y);
      }
      return a;
    };
    replies.forEach((node, r) -> r.forEach(e -> {
      Object value = e.getValue() instanceof JsonArray list ? tagged(list, node) : e.getValue();
      merged.put(e.getKey(), merged.containsKey(e.getKey()) ? add.apply(merged.getValue(e.getKey()), value) : value);
    }));
    return merged;
  }

  private static JsonArray tagged(JsonArray list, String node) {
    JsonArray out = new JsonArray();
    list.forEach(o -> out.add(o instanceof JsonObject j ? j.copy().put("node", node) : o));
    return out;
  }

  private ReplyException noAgentNode() {
    return unavailable("no agent node is a member of the cluster"
        + (gone.isEmpty() ? "" : " (gone: " + String.join(", ", gone.keySet()) + ")"));
  }

  public static ReplyException unavailable(String reason) {
    return new ReplyException(ReplyFailure.RECIPIENT_FAILURE, ErrorCode.UNAVAILABLE.failureCode, reason);
  }

  /** {@code unavailable} because no reply came from a member (not because it left): worth another try. */
  private static final class NoReply extends ReplyException {
    NoReply(String reason) {
      super(ReplyFailure.RECIPIENT_FAILURE, ErrorCode.UNAVAILABLE.failureCode, reason);
    }
  }
}
