package io.switchboard.cluster;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.BinaryOperator;

/**
 * How the agent nodes' answers to one question (each node's reply, by its name) become the one
 * answer a surface room reads: counts add up, lists join (each entry naming its node), rows keep
 * the order a single node would give.
 */
final class MergedAnswers {
  private MergedAnswers() {
  }

  /** Counts add up, lists join; {@code nodes} keeps each node's own answer. */
  static JsonObject agentStatus(Map<String, JsonObject> replies) {
    JsonObject merged = merge(replies);
    // A setting, not a count: the longest of the nodes' (each node's own is under "nodes").
    merged.put("idleStopSeconds", replies.values().stream().mapToLong(r -> r.getLong("idleStopSeconds", 0L)).max()
        .orElse(0));
    JsonObject nodes = new JsonObject();
    replies.forEach(nodes::put);
    return merged.put("nodes", nodes);
  }

  static JsonObject permissionStatus(Map<String, JsonObject> replies) {
    JsonObject merged = merge(replies);
    merged.remove("seq"); // each node's own count: no sum means anything
    merged.remove("node");
    merged.remove("incarnation");
    Long oldest = replies.values().stream().map(r -> r.getLong("oldestCreatedAt")).filter(Objects::nonNull)
        .min(Long::compare).orElse(null);
    return merged.put("oldestCreatedAt", oldest)
        .put("closing", replies.values().stream().anyMatch(r -> r.getBoolean("closing", false)));
  }

  static JsonObject outboxStats(Map<String, JsonObject> replies) {
    Map<String, JsonObject> byPlugin = new TreeMap<>();
    replies.values().forEach(r -> r.getJsonArray("plugins").forEach(o -> {
      JsonObject p = (JsonObject) o;
      byPlugin.merge(p.getString("pluginId"), p.copy(), (a, b) -> a
          .put("pending", a.getLong("pending") + b.getLong("pending"))
          .put("oldestCreatedAt", Math.min(a.getLong("oldestCreatedAt"), b.getLong("oldestCreatedAt"))));
    }));
    return new JsonObject().put("plugins", new JsonArray(new ArrayList<>(byPlugin.values())));
  }

  /**
   * Rows from several stores in the order one store gives them ({@code createdAt}; the newest first
   * when {@code newestFirst}), at most {@code limit} of them.
   */
  static JsonArray ordered(List<JsonObject> rows, boolean newestFirst, int limit) {
    Comparator<JsonObject> byTime = Comparator.comparingLong((JsonObject r) -> r.getLong("createdAt", 0L));
    rows.sort(newestFirst ? byTime.reversed() : byTime);
    return new JsonArray(new ArrayList<>(rows.subList(0, Math.min(limit, rows.size()))));
  }

  /** A node's rows (its ledger's, its cards) name it, as the merged lists' do. */
  static JsonObject ownRows(JsonObject reply, String node) {
    if (node != null) {
      reply.getJsonArray("requests").forEach(o -> {
        if (o instanceof JsonObject row && row.getString("node") == null) {
          row.put("node", node);
        }
      });
    }
    return reply;
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
}
