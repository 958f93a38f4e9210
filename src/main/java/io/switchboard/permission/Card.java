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
 */
public record Card(String requestId, String threadId, String sessionId, JsonObject toolCall, JsonArray options,
                   List<String> eligible, long createdAt) {

  /** The card as the bus carries it. Its parts are shared, not copied: the event bus copies what it sends. */
  public JsonObject toJson() {
    return new JsonObject().put("requestId", requestId).put("threadId", threadId).put("sessionId", sessionId)
        .put("toolCall", toolCall).put("options", options).put("eligible", new JsonArray(List.copyOf(eligible)))
        .put("createdAt", createdAt);
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
        eligible.stream().map(String::valueOf).toList(), json.getLong("createdAt", 0L));
  }

  /** The page's {@code permission_request} frame (docs/protocol-web.md): times as ISO-8601. */
  public JsonObject toWebFrame() {
    return new JsonObject().put("type", "permission_request").put("threadId", threadId).put("requestId", requestId)
        .put("toolCall", toolCall).put("options", options).put("createdAt", Instant.ofEpochMilli(createdAt).toString());
  }
}
