package io.switchboard.cluster;

import io.switchboard.bus.Addresses;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * How a surface room (web, plugins, metrics) asks the agent side. Not clustered: the plain
 * addresses, as ever. In a cluster: through this node's {@link EdgeRouter} (see {@link AgentNodes}
 * for where each command goes), which bounds every ask and fails at once what waits on a node that
 * leaves; the agent nodes that are members are kept here from the router's facts. One per room,
 * used on its event loop.
 */
public final class RouterClient {
  private final Vertx vertx;
  private final boolean clustered;
  /** The agent nodes that are members now, by name, as the router last said. */
  private final Set<String> live = new TreeSet<>();

  public RouterClient(Vertx vertx, boolean clustered) {
    this.vertx = vertx;
    this.clustered = clustered;
  }

  public boolean clustered() {
    return clustered;
  }

  /**
   * Cluster mode: hears the router's member changes ({@code onMember}, after this client took them
   * in); completes once the members now are known.
   */
  public Future<Void> start(Consumer<JsonObject> onMember) {
    return start(onMember, null, null);
  }

  /**
   * As {@link #start(Consumer)}; {@code onGap} hears the name of an agent node some of whose
   * permission facts this edge missed, {@code onThreadGap} the same of its thread facts.
   */
  public Future<Void> start(Consumer<JsonObject> onMember, Consumer<String> onGap, Consumer<String> onThreadGap) {
    if (!clustered) {
      return Future.succeededFuture();
    }
    var bus = vertx.eventBus();
    bus.<JsonObject>localConsumer(Addresses.EDGE_MEMBER, m -> {
      liveAre(m.body().getJsonArray("live"));
      onMember.accept(m.body());
    });
    if (onGap != null || onThreadGap != null) {
      bus.<JsonObject>localConsumer(Addresses.EDGE_GAP, m -> {
        Consumer<String> heard = "thread".equals(m.body().getString("kind")) ? onThreadGap : onGap;
        if (heard != null) {
          heard.accept(m.body().getString("node"));
        }
      });
    }
    return bus.<JsonObject>request(Addresses.EDGE_NODES, new JsonObject(), here())
        .map(reply -> {
          liveAre(reply.body().getJsonArray("live"));
          return null;
        });
  }

  private void liveAre(JsonArray nodes) {
    live.clear();
    nodes.forEach(n -> live.add((String) n));
  }

  /** The agent nodes that are members now, by name. */
  public List<String> liveNodes() {
    return new ArrayList<>(live);
  }

  /** Whether the node is a member now (false for one that left and is not back). */
  public boolean isLive(String node) {
    return live.contains(node);
  }

  public Future<JsonObject> ask(String address, JsonObject body) {
    return ask(address, body, new DeliveryOptions());
  }

  /** Asks the room that answers {@code address} for this body (in a cluster, as {@link AgentNodes} routes it). */
  public Future<JsonObject> ask(String address, JsonObject body, DeliveryOptions options) {
    if (!clustered) {
      return vertx.eventBus().<JsonObject>request(address, body, options).map(Message::body);
    }
    return viaRouter(new JsonObject().put("address", address).put("body", body), options);
  }

  /** Asks one agent node's rooms (cluster mode). */
  public Future<JsonObject> askNode(String node, String address, JsonObject body, DeliveryOptions options) {
    return viaRouter(new JsonObject().put("address", address).put("body", body).put("node", node), options);
  }

  /**
   * One agent node's threads, listed again (some of its thread facts were missed): the list, and
   * under {@code vanished} the threads this edge had of it that it no longer has (deleted unheard).
   */
  public Future<JsonObject> relistThreads(String node) {
    return vertx.eventBus().<JsonObject>request(Addresses.EDGE_RELIST, new JsonObject().put("node", node),
        here().setSendTimeout(2 * AgentNodes.LOOK_UP_MS + 1_000)).map(Message::body);
  }

  /** What a reconciliation with a node's pending list has heard up to ({@code seq} of its reply). */
  public void heardUpTo(JsonObject pendingReply) {
    vertx.eventBus().send(Addresses.EDGE_HEARD, pendingReply, here());
  }

  /** A request whose end fact was missed ended (its node's ledger says so): the router forgets its owner. */
  public void ended(String requestId) {
    vertx.eventBus().send(Addresses.EDGE_ENDED, new JsonObject().put("requestId", requestId), here());
  }

  /** Those of {@code requestIds} whose request the node owns, as far as the router heard. */
  public Future<List<String>> ownedBy(String node, List<String> requestIds) {
    return vertx.eventBus().<JsonObject>request(Addresses.EDGE_OWNED, new JsonObject().put("node", node)
            .put("requestIds", new JsonArray(new ArrayList<>(requestIds))), here())
        .map(reply -> {
          List<String> owned = new ArrayList<>();
          reply.body().getJsonArray("requestIds").forEach(id -> owned.add((String) id));
          return owned;
        });
  }

  /**
   * The router bounds each ask itself ({@link EdgeRouter#deadline}) and replies then; this hop waits
   * a little longer, and only a router that never replies meets its timeout.
   */
  private Future<JsonObject> viaRouter(JsonObject ask, DeliveryOptions options) {
    long timeout = options.getSendTimeout();
    long bound = EdgeRouter.deadline(timeout);
    return vertx.eventBus().<JsonObject>request(Addresses.EDGE_ASK, ask.put("timeoutMs", timeout),
        here().setSendTimeout(bound == Long.MAX_VALUE ? bound : bound + 2_000)).map(Message::body);
  }

  private static DeliveryOptions here() {
    return new DeliveryOptions().setLocalOnly(true);
  }
}
