package io.switchboard.permission;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;

/**
 * What every surface shows of a pending permission request: built by the permission room alone,
 * encoded once into the body of {@code sb.permission.shown}, the ledger's outbox rows and the
 * pending lists, and read back here by the rooms that render it.
 *
 * @param eligible the surfaces that may still answer (empty in a chat's outbox card: a chat only
 *                 shows it)
 * @param agentId the asking agent (null when unknown); {@code projectId} its thread's project (null: none)
 * @param deadline when and by which rule it expires unanswered; null: it waits for an answer, however long
 */
public record Card(String requestId, String threadId, String sessionId, JsonObject toolCall, JsonArray options,
                   List<String> eligible, long createdAt, String agentId, String projectId, Deadline deadline) {

  /** A deadline: when it falls, what the agent is told then, and the words naming the rule. */
  public record Deadline(long at, String onExpiry, String rule) {
    JsonObject toJson() {
      return new JsonObject().put("at", at).put("onExpiry", onExpiry).put("rule", rule);
    }

    static Deadline of(JsonObject json) {
      return json == null || json.getLong("at") == null ? null
          : new Deadline(json.getLong("at"), json.getString("onExpiry"), json.getString("rule"));
    }
  }

  /** The card as the bus carries it. Its parts are shared, not copied: the event bus copies what it sends. */
  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("requestId", requestId).put("threadId", threadId).put("sessionId", sessionId)
        .put("toolCall", toolCall).put("options", options).put("eligible", new JsonArray(List.copyOf(eligible)))
        .put("createdAt", createdAt);
    if (agentId != null) {
      json.put("agentId", agentId);
    }
    if (projectId != null) {
      json.put("projectId", projectId);
    }
    if (deadline != null) {
      json.put("deadline", deadline.toJson());
    }
    return json;
  }

  /** The card without its surfaces: what a chat's outbox keeps (the list would only go stale there). */
  public JsonObject toOutboxJson() {
    JsonObject json = toJson();
    json.remove("eligible");
    return json;
  }

  /** A card the permission room built (or a ledger row, which has the same fields). */
  public static Card of(JsonObject json) {
    JsonArray eligible = json.getJsonArray("eligible", new JsonArray());
    return new Card(json.getString("requestId"), json.getString("threadId"), json.getString("sessionId"),
        json.getJsonObject("toolCall", new JsonObject()), json.getJsonArray("options", new JsonArray()),
        eligible.stream().map(String::valueOf).toList(), json.getLong("createdAt", 0L), json.getString("agentId"),
        json.getString("projectId"), Deadline.of(json.getJsonObject("deadline")));
  }

  /** The page's {@code permission_request} frame (docs/protocol-web.md): times as ISO-8601. */
  public JsonObject toWebFrame() {
    JsonObject frame = new JsonObject().put("type", "permission_request").put("threadId", threadId)
        .put("requestId", requestId).put("toolCall", toolCall).put("options", options)
        .put("createdAt", Instant.ofEpochMilli(createdAt).toString());
    if (deadline != null) {
      frame.put("deadline", Instant.ofEpochMilli(deadline.at()).toString()).put("onExpiry", deadline.onExpiry())
          .put("deadlineRule", deadline.rule());
    }
    return frame;
  }
}
