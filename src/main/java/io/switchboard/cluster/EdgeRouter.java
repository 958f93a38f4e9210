package io.switchboard.cluster;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.vertx.core.VerticleBase;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * Cluster mode, an edge node: the one router its surface rooms (web, plugins, metrics) share to
 * reach the agent nodes. It owns the edge's one {@link AgentNodes} — who is a member, which node
 * owns each thread and request, the facts heard of each — and serves it at this node's own
 * addresses ({@code sb.edge.*}, never seen by another node); member changes and missed facts are
 * published to this node's rooms, which keep a {@link RouterClient}. Before, each room built its
 * own router and heard every fact three times over.
 */
public final class EdgeRouter extends VerticleBase {
  private AgentNodes nodes;

  @Override
  public Future<?> start() {
    nodes = new AgentNodes(vertx, true);
    var bus = vertx.eventBus();
    bus.<JsonObject>localConsumer(Addresses.EDGE_ASK, this::ask);
    bus.<JsonObject>localConsumer(Addresses.EDGE_RELIST, m -> replyWith(m, Addresses.THREAD_LIST,
        Future.succeededFuture().compose(v -> nodes.relistThreads(m.body().getString("node")))));
    bus.<JsonObject>localConsumer(Addresses.EDGE_HEARD, m -> nodes.heardUpTo(m.body()));
    bus.<JsonObject>localConsumer(Addresses.EDGE_ENDED, m -> nodes.ended(m.body().getString("requestId")));
    bus.<JsonObject>localConsumer(Addresses.EDGE_OWNED, m -> {
      String node = m.body().getString("node");
      JsonArray owned = new JsonArray();
      for (Object id : m.body().getJsonArray("requestIds", new JsonArray())) {
        if (id instanceof String requestId && node != null && node.equals(nodes.ownerOfRequest(requestId))) {
          owned.add(requestId);
        }
      }
      m.reply(new JsonObject().put("requestIds", owned));
    });
    bus.<JsonObject>localConsumer(Addresses.EDGE_NODES, m -> m.reply(live()));
    DeliveryOptions here = new DeliveryOptions().setLocalOnly(true);
    return nodes.start(
        member -> bus.publish(Addresses.EDGE_MEMBER, member.copy().mergeIn(live()), here),
        node -> bus.publish(Addresses.EDGE_GAP, new JsonObject().put("node", node).put("kind", "permission"), here),
        node -> bus.publish(Addresses.EDGE_GAP, new JsonObject().put("node", node).put("kind", "thread"), here));
  }

  private JsonObject live() {
    return new JsonObject().put("live", new JsonArray(nodes.liveNodes()));
  }

  /**
   * How long the router lets one ask of {@code timeoutMs} take in all (a look-up, then the send; an
   * answer tried up to three times) before it replies {@code unavailable} itself.
   */
  static long deadline(long timeoutMs) {
    return timeoutMs > Long.MAX_VALUE / 8 ? Long.MAX_VALUE
        : timeoutMs * AgentNodes.ANSWER_TRIES + 2 * AgentNodes.LOOK_UP_MS + 1_000;
  }

  private void ask(Message<JsonObject> m) {
    JsonObject ask = m.body();
    long timeout = ask.getLong("timeoutMs", DeliveryOptions.DEFAULT_TIMEOUT);
    DeliveryOptions options = new DeliveryOptions().setSendTimeout(timeout);
    String node = ask.getString("node");
    JsonObject body = ask.getJsonObject("body", new JsonObject());
    String address = ask.getString("address");
    // A body that breaks a route (a field of the wrong type) fails the ask, never leaves it unanswered.
    Future<JsonObject> routed = Future.succeededFuture().compose(v -> node != null
        ? nodes.askNode(node, address, body, options) : nodes.ask(address, body, options));
    long bound = deadline(timeout);
    if (bound == Long.MAX_VALUE) {
      replyWith(m, address, routed);
      return;
    }
    Promise<JsonObject> answered = Promise.promise();
    long timer = vertx.setTimer(bound, t -> answered.tryFail(AgentNodes.unavailable("the agent side did not answer "
        + address + " within " + bound / 1000 + " s; what was asked may not have been done")));
    routed.onComplete(done -> {
      vertx.cancelTimer(timer);
      if (done.succeeded()) {
        answered.tryComplete(done.result());
      } else {
        answered.tryFail(done.cause());
      }
    });
    replyWith(m, address, answered.future());
  }

  /**
   * The routed reply, or its failure with the same code and words. One nobody answered (a timeout,
   * no consumer: an edge's own store) is {@code unavailable}, in words a person can read; anything
   * else a store failure.
   */
  private static void replyWith(Message<JsonObject> m, String address, Future<JsonObject> reply) {
    reply.onSuccess(m::reply).onFailure(err -> {
      if (err instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
        m.fail(re.failureCode(), String.valueOf(re.getMessage()));
      } else if (err instanceof ReplyException) {
        m.fail(ErrorCode.UNAVAILABLE.failureCode, "this edge node's own " + address + " did not answer; what "
            + "was asked may not have been done");
      } else {
        m.fail(ErrorCode.STORE_FAILED.failureCode, String.valueOf(err.getMessage()));
      }
    });
  }
}
