package io.switchboard.bus;

import io.vertx.core.Handler;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

/**
 * Where a room serves its commands, from its deployment config. Not clustered: on the plain
 * addresses, as always. In a cluster a plain address registered on two agent nodes would be
 * round-robined between them, so every room serves its plain addresses to its own node only, and an
 * agent node's rooms also serve each command at {@link Addresses#onNode} for the edges, which
 * address the node that owns the thread or request (docs/event-bus.md, "Cluster").
 *
 * @param node the agent node's name; null on an edge (its store serves its own node only)
 * @param incarnation this start of the node, stamped on the facts it publishes
 */
public record NodeScope(boolean clustered, String node, String incarnation) {
  public static final NodeScope SINGLE = new NodeScope(false, null, null);

  public static NodeScope of(JsonObject deploymentConfig) {
    JsonObject c = deploymentConfig == null ? new JsonObject() : deploymentConfig;
    return new NodeScope(c.getBoolean("clustered", false), c.getString("node"), c.getString("incarnation"));
  }

  public JsonObject toConfig() {
    return new JsonObject().put("clustered", clustered).put("node", node).put("incarnation", incarnation);
  }

  public <T> void serve(EventBus bus, String address, Handler<Message<T>> handler) {
    if (!clustered) {
      bus.consumer(address, handler);
      return;
    }
    bus.localConsumer(address, handler);
    if (node != null) {
      bus.consumer(Addresses.onNode(node, address), handler);
    }
  }

  /** Names the node (and its start) on a fact or card an edge routes by; unchanged when not clustered. */
  public JsonObject stamp(JsonObject fact) {
    if (node != null) {
      fact.put("node", node).put("incarnation", incarnation);
    }
    return fact;
  }
}
