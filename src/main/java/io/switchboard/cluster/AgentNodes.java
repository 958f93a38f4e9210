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
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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
      Addresses.STORE_OUTBOX_ENQUEUE, Addresses.PLUGIN_STATUS, Addresses.METRICS_SCRAPE,
      Addresses.STORE_PEOPLE_OWNER, Addresses.STORE_PEOPLE_SAVE, Addresses.STORE_PEOPLE_LIST,
      Addresses.STORE_PEOPLE_LINK, Addresses.STORE_PEOPLE_UNLINK, Addresses.STORE_PEOPLE_FIND,
      Addresses.STORE_AUDIT_APPEND, Addresses.STORE_AUDIT_LIST, Addresses.PLUGIN_LINK_REDEEM);

  private final Vertx vertx;
  private final boolean clustered;
  private final Members members;
  private final FactSequence permissionFacts = new FactSequence("permission");
  private final FactSequence threadFacts = new FactSequence("thread");
  private final Map<String, String> threadNode = new HashMap<>();
  /** Pending requests' owners (an entry goes when the request's end is heard). */
  private final Map<String, String> requestNode = new HashMap<>();
  /** Outputs read from an agent node's outbox and not acknowledged yet: outputId -> node. */
  private final Map<String, String> outputNode = new HashMap<>();

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
    this.members = new Members(vertx, lookUpMs);
  }

  public boolean clustered() {
    return clustered;
  }

  /** The agent nodes that are members now, by name. */
  public List<String> liveNodes() {
    return members.live();
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
    permissionFacts.onGap(onGap);
    threadFacts.onGap(onThreadGap);
    // A silent node that answers again may have shown cards and threads nobody heard: read both anew.
    members.onAnswers(node -> {
      onThreadGap.accept(node);
      onGap.accept(node);
    });
    var bus = vertx.eventBus();
    bus.<JsonObject>localConsumer(Addresses.CLUSTER_MEMBER, m -> members.member(m.body()).onSuccess(changed -> {
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
      threadFacts.heard(m.body());
    });
    bus.<JsonObject>consumer(Addresses.PERMISSION_SHOWN, m -> {
      owns(requestNode, m.body().getString("requestId"), m.body());
      owns(threadNode, m.body().getString("threadId"), m.body());
      permissionFacts.heard(m.body());
    });
    bus.<JsonObject>consumer(Addresses.PERMISSION_RESOLVED, m -> {
      requestNode.remove(m.body().getString("requestId"));
      permissionFacts.heard(m.body());
    });
    bus.<JsonObject>consumer(Addresses.PERMISSION_CANCELLED, m -> {
      requestNode.remove(m.body().getString("requestId"));
      permissionFacts.heard(m.body());
    });
    if (checksSequences) {
      DeliveryOptions bounded = new DeliveryOptions().setSendTimeout(lookUpMs);
      vertx.setPeriodic(sequenceCheckMs, t -> members.answering().forEach(node -> {
        members.send(node, Addresses.PERMISSION_STATUS, new JsonObject(), bounded)
            .onSuccess(status -> permissionFacts.compare(node, status));
        members.send(node, Addresses.THREAD_STATUS, new JsonObject(), bounded)
            .onSuccess(status -> threadFacts.compare(node, status));
      }));
    }
    return bus.<JsonObject>request(Addresses.CLUSTER_MEMBERS, new JsonObject(),
        new DeliveryOptions().setLocalOnly(true)).map(reply -> {
      members.known(reply.body());
      log.info("agent nodes in the cluster: {}", liveNodes().isEmpty() ? "none yet" : String.join(", ", liveNodes()));
      return null;
    });
  }

  /** What a reconciliation with a node's pending list has heard up to ({@code seq} of its reply). */
  public void heardUpTo(JsonObject pendingReply) {
    permissionFacts.heardUpTo(pendingReply);
  }

  /**
   * One agent node's threads, listed again (some of its thread facts were missed): the list, and
   * under {@code vanished} the threads this edge had of it that it no longer has (deleted unheard).
   */
  public Future<JsonObject> relistThreads(String node) {
    return send(node, Addresses.THREAD_LIST, new JsonObject(), new DeliveryOptions().setSendTimeout(lookUpMs))
        .map(reply -> {
          threadFacts.heardUpTo(reply);
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

  /** Whether the node is a member now (false for one that left and is not back). */
  public boolean isLive(String node) {
    return members.isLive(node);
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
        ? toThread(address, body, options).map(r -> MergedAnswers.ownRows(r, threadNode.get(body.getString("threadId"))))
        : requests(address, body, options);
    table.put(Addresses.PERMISSION_PENDING, pendingOrLedger);
    table.put(Addresses.STORE_LEDGER_LIST, pendingOrLedger);
    table.put(Addresses.PERMISSION_ANSWER, (address, body, options) -> toRequest(address, keyed(body),
        new DeliveryOptions(options).setSendTimeout(Math.min(options.getSendTimeout(), answerTryMs))));
    table.put(Addresses.STORE_LEDGER_GET, this::toRequest);
    table.put(Addresses.AGENT_STATUS, (address, body, options) -> all(address, body, options, true)
        .map(MergedAnswers::agentStatus));
    table.put(Addresses.PERMISSION_STATUS, (address, body, options) -> all(address, body, options, true)
        .map(MergedAnswers::permissionStatus));
    table.put(Addresses.STORE_HEALTH, (address, body, options) -> withEdgeStore(address, body, options, true)
        .map(r -> new JsonObject()));
    table.put(Addresses.STORE_OUTBOX_STATS, (address, body, options) -> withEdgeStore(address, body, options, false)
        .map(MergedAnswers::outboxStats));
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
    return members.send(node, address, body, options);
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
      if (tries > 1 && members.isLive(node) && err instanceof Members.NoReply) {
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
    if (liveNodes().isEmpty()) {
      return Future.failedFuture(members.noAgentNode());
    }
    return firstWith(Addresses.THREAD_GET, new JsonObject().put("threadId", threadId), r -> true)
        .compose(found -> {
          if (found.getKey() != null) {
            threadNode.put(threadId, found.getKey());
            return Future.succeededFuture(found.getKey());
          }
          return Future.failedFuture(found.getValue() != null || !members.noneGone()
              ? unavailable("no agent node that answers has thread "
              + threadId + (members.noneGone() ? "" : "; gone: " + members.goneNames()))
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
    if (liveNodes().isEmpty()) {
      return Future.failedFuture(members.noAgentNode());
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
      return Future.failedFuture(found.getValue() != null || !members.noneGone()
          ? unavailable("request " + requestId + " is on no agent node that answers"
              + (members.noneGone() ? "" : "; gone: " + members.goneNames()))
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
      if (!members.isLive(named)) {
        return Future.failedFuture(new ReplyException(ReplyFailure.RECIPIENT_FAILURE,
            members.isGone(named) ? ErrorCode.UNAVAILABLE.failureCode : ErrorCode.BAD_REQUEST.failureCode,
            members.whyNot(named)));
      }
      return created(named, send(named, Addresses.THREAD_CREATE, body.copy().put("node", (String) null), options));
    }
    if (liveNodes().isEmpty()) {
      return Future.failedFuture(members.noAgentNode());
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
   * Asks every agent node; {@code strict}: fails unless all answer (a status), else merges what the
   * nodes that answer say (a list: a node that is down is said by the member facts, not by an empty
   * page). A list waits at most the look-up bound for each node; one that does not answer in it is
   * silent, left out of later lists until it answers again ({@link Members#silent}).
   */
  private Future<Map<String, JsonObject>> all(String address, JsonObject body, DeliveryOptions options,
                                              boolean strict) {
    List<String> nodes = strict ? liveNodes() : members.answering();
    if (nodes.isEmpty()) {
      return strict ? Future.failedFuture(members.noAgentNode()) : Future.succeededFuture(Map.of());
    }
    DeliveryOptions asking = strict ? options
        : new DeliveryOptions(options).setSendTimeout(Math.min(options.getSendTimeout(), lookUpMs));
    List<Future<JsonObject>> asked = new ArrayList<>();
    nodes.forEach(n -> asked.add(send(n, address, body, asking)));
    return Future.join(asked).transform(x -> {
      Map<String, JsonObject> replies = new TreeMap<>();
      Throwable failure = null;
      for (int i = 0; i < nodes.size(); i++) {
        if (asked.get(i).succeeded()) {
          replies.put(nodes.get(i), asked.get(i).result());
        } else if (!strict && asked.get(i).cause() instanceof Members.NoReply silence) {
          members.silent(nodes.get(i), silence.getMessage());
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
    // linger a moment in the cluster, and a request to them waits for its timeout): all() bounds it.
    return Future.all(own, all(address, body, options, strict).recover(err ->
            liveNodes().isEmpty() || !strict ? Future.succeededFuture(Map.of()) : Future.failedFuture(err)))
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
      // The ledger lists the newest first, to a limit; so does the merge. Cards: the oldest first, all.
      boolean ledger = Addresses.STORE_LEDGER_LIST.equals(address);
      return new JsonObject().put("requests", MergedAnswers.ordered(rows, ledger,
          ledger ? body.getInteger("limit", rows.size()) : rows.size()));
    });
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
    return new JsonObject().put("outputs", MergedAnswers.ordered(rows, false, body.getInteger("limit", rows.size())));
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

  public static ReplyException unavailable(String reason) {
    return Members.unavailable(reason);
  }
}
