package io.switchboard.web;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.Bus;
import io.switchboard.bus.ErrorCode;
import io.switchboard.cluster.RouterClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster mode: the edge's pages kept in step with the agent nodes as they leave and come back —
 * a node that left marks its cards stale, one that is back (or whose facts were missed) has its
 * pending cards made answerable, its ended ones closed, and its threads listed again.
 */
final class ClusterResync {
  private static final Logger log = LoggerFactory.getLogger(ClusterResync.class);
  private final Vertx vertx;
  private final RouterClient nodes;
  private final SocketHub hub;
  private final PendingCounts pending;
  private final WebRoom room;

  ClusterResync(Vertx vertx, RouterClient nodes, SocketHub hub, PendingCounts pending, WebRoom room) {
    this.vertx = vertx;
    this.nodes = nodes;
    this.hub = hub;
    this.pending = pending;
    this.room = room;
  }

  /**
   * A member left or joined. Pages hear at once that one left; when it is an agent node, the cards
   * of its requests cannot be answered (its ledger is there) and are marked stale, and when it is
   * back, the ones its ledger still has pending are answerable again (the others end with the facts
   * a restarted node announces).
   */
  void memberChanged(JsonObject member) {
    String node = member.getString("node", member.getString("address"));
    String who = member.getString("role", "a") + " node " + node;
    boolean agentNode = "agent".equals(member.getString("role"));
    if ("left".equals(member.getString("event"))) {
      if (agentNode && nodes.isLive(node)) {
        return; // an earlier start of it, heard leaving after the new one joined (the router kept it)
      }
      String reason = who + " left the cluster: what it runs does not answer until it is back";
      hub.toAllPages(new JsonObject().put("type", "error").put("code", ErrorCode.UNAVAILABLE.wireName)
          .put("message", reason));
      if (agentNode) {
        List<String> cards = new ArrayList<>();
        pending.forEachRequest(id -> true, cards::add);
        nodes.ownedBy(node, cards).onSuccess(ids -> {
          if (!ids.isEmpty()) {
            hub.toAllPages(new JsonObject().put("type", "permission_stale").put("stale", true)
                .put("requestIds", new JsonArray(ids)).put("reason", reason).put("node", node));
          }
        });
      }
    } else if (agentNode) {
      resync(node, who, 60);
    }
  }

  /** Some thread facts of an agent node were missed: every page gets its threads as they are now. */
  void relistThreads(String node) {
    nodes.relistThreads(node).onSuccess(reply -> {
      reply.getJsonArray("threads").forEach(t -> hub.threadChanged((JsonObject) t));
      reply.getJsonArray("vanished").forEach(id -> hub.threadChanged(new JsonObject().put("threadId", id)
          .put("node", node).put("deleted", true)));
      log.info("agent node {}: {} threads listed again on every page, {} deleted unheard", node,
          reply.getJsonArray("threads").size(), reply.getJsonArray("vanished").size());
    }).onFailure(err -> log.warn("agent node {} did not list its threads: {}", node, err.getMessage()));
  }

  /**
   * Makes the pages agree with an agent node's permission room, after it joined (again) or after
   * some of its facts were missed: its pending requests are answerable (their stale mark lifted,
   * and shown if never heard of), and the cards the pages hold of it that it no longer has end as
   * its ledger says. Asks again each second (its rooms start after it joins), {@code tries} times.
   */
  void resync(String node, String who, int tries) {
    if (!nodes.isLive(node)) {
      return; // gone again: its next return asks anew
    }
    nodes.askNode(node, Addresses.PERMISSION_PENDING, new JsonObject(), Bus.quick())
        .onSuccess(reply -> {
          nodes.heardUpTo(reply);
          JsonArray ids = new JsonArray();
          Set<String> live = new HashSet<>();
          reply.getJsonArray("requests").forEach(o -> {
            JsonObject card = (JsonObject) o;
            ids.add(card.getString("requestId"));
            live.add(card.getString("requestId"));
            if (!pending.isPending(card.getString("threadId"), card.getString("requestId"))) {
              room.shown(card);
            }
          });
          hub.toAllPages(new JsonObject().put("type", "permission_stale").put("stale", false).put("requestIds", ids)
              .put("node", node));
          List<String> unlisted = new ArrayList<>();
          pending.forEachRequest(id -> !live.contains(id), unlisted::add);
          nodes.ownedBy(node, unlisted).onSuccess(missed -> {
            missed.forEach(id -> nodes.askNode(node, Addresses.STORE_LEDGER_GET, new JsonObject().put("requestId", id),
                    Bus.quick())
                .onSuccess(row -> {
                  JsonObject request = row.getJsonObject("request");
                  if (request != null && request.getLong("endedAt") != null) {
                    nodes.ended(id); // its end fact never came: the router forgets its owner here
                    room.ended(request);
                  }
                }));
            log.info("{}: {} pending permission requests answerable, {} not listed looked up in its ledger", who,
                ids.size(), missed.size());
          });
        })
        .onFailure(err -> {
          if (tries > 1) {
            vertx.setTimer(1_000, t -> resync(node, who, tries - 1));
          } else {
            log.warn("{} did not say what is pending: {}", who, err.getMessage());
          }
        });
  }
}
