package io.switchboard.cluster;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An edge's view of the agent nodes as members: which are members now, which left (and why), which
 * are members but do not answer (silent: a paused JVM, or a stranger that merely claims the agent
 * role), and the one way to ask one of them. Every ask is bounded; whatever waits on a node fails at
 * once when it leaves. A silent node is left out of the lists merged from every node (a page or a
 * chat is served by the nodes that answer) and asked again every {@link #SILENT_PROBE_MS}; when it
 * answers, {@code onAnswers} hears its name, to catch it up as one that joined. Used on the
 * router's event loop.
 */
final class Members {
  private static final Logger log = LoggerFactory.getLogger(Members.class);

  /** How soon a send that found no handler at a member's address is tried again. */
  static final long STARTING_RETRY_MS = 200;
  /** How often a silent node is asked whether it answers again. */
  static final long SILENT_PROBE_MS = 2_000;

  private final Vertx vertx;
  private final long lookUpMs;
  /** The agent nodes that are members now: name -> incarnation (name order: the placement order). */
  private final Map<String, String> live = new TreeMap<>();
  /** Agent nodes that left: name -> why, until a node of that name joins again. */
  private final Map<String, String> gone = new HashMap<>();
  /** Members that did not answer a list in time: name -> the probe's timer. */
  private final Map<String, Long> silent = new HashMap<>();
  /** What waits for an answer from each node, failed at once when the node leaves. */
  private final Map<String, Set<Promise<?>>> asking = new HashMap<>();
  private Consumer<String> onAnswers = node -> { };

  Members(Vertx vertx, long lookUpMs) {
    this.vertx = vertx;
    this.lookUpMs = lookUpMs;
  }

  /** Who hears the name of a silent node that answers again. */
  void onAnswers(Consumer<String> onAnswers) {
    this.onAnswers = onAnswers;
  }

  /** The agent nodes that are members now, by name. */
  List<String> live() {
    return List.copyOf(live.keySet());
  }

  /** The members now that answer (not silent), by name: those a merged list asks. */
  List<String> answering() {
    return live.keySet().stream().filter(n -> !silent.containsKey(n)).toList();
  }

  boolean isLive(String node) {
    return live.containsKey(node);
  }

  boolean isGone(String node) {
    return gone.containsKey(node);
  }

  boolean noneGone() {
    return gone.isEmpty();
  }

  String goneNames() {
    return String.join(", ", gone.keySet());
  }

  /** Why a named node cannot be asked: it left (the reason), or no member has that name. */
  String whyNot(String node) {
    return gone.getOrDefault(node, "no agent node named " + node + " in the cluster (agent nodes: "
        + (live.isEmpty() ? "none" : String.join(", ", live.keySet())) + ")");
  }

  /** The members known when the router starts (the cluster's own list). */
  void known(JsonObject members) {
    for (Object o : members.getJsonArray("members")) {
      JsonObject m = (JsonObject) o;
      if ("agent".equals(m.getString("role")) && !gone.containsKey(m.getString("node"))) {
        live.putIfAbsent(m.getString("node"), m.getString("incarnation"));
      }
    }
  }

  /**
   * A member joined or left; completes with whether an agent node's presence changed (what the rooms
   * tell their pages and chats). A member that leaves while another of its name is still a member
   * changed nothing: a second node of that name, which stops when it finds the first (ClusterNode),
   * or an earlier start's departure heard after its successor joined.
   */
  Future<Boolean> member(JsonObject fact) {
    if (!"agent".equals(fact.getString("role"))) {
      return Future.succeededFuture(false);
    }
    String node = fact.getString("node");
    String incarnation = fact.getString("incarnation");
    if (!"left".equals(fact.getString("event"))) {
      live.put(node, incarnation);
      gone.remove(node);
      answersAgain(node); // a node that joins is caught up as such
      return Future.succeededFuture(true);
    }
    if (live.containsKey(node) && incarnation != null && !incarnation.equals(live.get(node))) {
      return Future.succeededFuture(false); // an earlier start's departure, heard after its successor joined
    }
    String before = live.get(node);
    return vertx.eventBus().<JsonObject>request(Addresses.CLUSTER_MEMBERS, new JsonObject(),
            new DeliveryOptions().setLocalOnly(true))
        .map(reply -> reply.body().getJsonArray("members").stream().map(o -> (JsonObject) o)
            .filter(m -> "agent".equals(m.getString("role")) && node.equals(m.getString("node"))
                && !Objects.equals(incarnation, m.getString("incarnation")))
            .map(m -> m.getString("incarnation")).findFirst().orElse(null))
        .otherwise((String) null)
        .map(remaining -> {
          if (!Objects.equals(before, live.get(node))) {
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
          answersAgain(node); // not silent: gone (its return is a join)
          Set<Promise<?>> waiting = asking.remove(node);
          if (waiting != null) {
            new ArrayList<>(waiting).forEach(p -> p.tryFail(unavailable(reason)));
          }
          return true;
        });
  }

  /**
   * A member did not answer a list in time: later lists go on without it, and it is asked every
   * {@link #SILENT_PROBE_MS} whether it answers now.
   */
  void silent(String node, String why) {
    if (!live.containsKey(node) || silent.containsKey(node)) {
      return;
    }
    log.warn("agent node {} is a member but does not answer ({}): lists go on without it, and it is asked again "
        + "every {} s", node, why, SILENT_PROBE_MS / 1000);
    silent.put(node, -1L);
    probe(node);
  }

  /** Asks a silent node again after a pause, one probe at a time, until it answers or is no longer silent. */
  private void probe(String node) {
    silent.put(node, vertx.setTimer(SILENT_PROBE_MS, t -> send(node, Addresses.THREAD_STATUS, new JsonObject(),
        new DeliveryOptions().setSendTimeout(lookUpMs)).onComplete(status -> {
          if (!silent.containsKey(node)) {
            return; // left, or joined again, meanwhile
          }
          if (status.failed()) {
            probe(node);
            return;
          }
          answersAgain(node);
          log.info("agent node {} answers again: its threads and cards are read anew", node);
          onAnswers.accept(node);
        })));
  }

  private void answersAgain(String node) {
    Long probe = silent.remove(node);
    if (probe != null && probe >= 0) {
      vertx.cancelTimer(probe);
    }
  }

  /** Asks one member; fails at once as {@code unavailable} if it is not one, or when it leaves. */
  Future<JsonObject> send(String node, String address, JsonObject body, DeliveryOptions options) {
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

  ReplyException noAgentNode() {
    return unavailable("no agent node is a member of the cluster"
        + (gone.isEmpty() ? "" : " (gone: " + goneNames() + ")"));
  }

  static ReplyException unavailable(String reason) {
    return new ReplyException(ReplyFailure.RECIPIENT_FAILURE, ErrorCode.UNAVAILABLE.failureCode, reason);
  }

  /** {@code unavailable} because no reply came from a member (not because it left): worth another try. */
  static final class NoReply extends ReplyException {
    NoReply(String reason) {
      super(ReplyFailure.RECIPIENT_FAILURE, ErrorCode.UNAVAILABLE.failureCode, reason);
    }
  }
}
