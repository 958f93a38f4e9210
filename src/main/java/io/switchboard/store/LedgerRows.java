package io.switchboard.store;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;

/** Turns a {@code permission_request} row into the JSON shape documented in docs/event-bus.md. */
final class LedgerRows {
  private LedgerRows() {}

  static JsonObject toJson(Row row) {
    String state = row.getString("state");
    JsonObject json = new JsonObject()
        .put("requestId", row.getString("request_id"))
        .put("threadId", row.getString("thread_id"))
        .put("sessionId", row.getString("session_id"))
        .put("agentId", row.getString("agent_id"))
        .put("toolCall", new JsonObject(row.getString("tool_call")))
        .put("options", new JsonArray(row.getString("options")))
        .put("eligible", new JsonArray(row.getString("eligible")))
        .put("state", state)
        .put("createdAt", row.getLong("created_at"))
        .put("endedAt", row.getLong("ended_at"));
    if (state.equals("selected")) {
      JsonObject answeredBy = new JsonObject().put("surface", row.getString("answered_surface"));
      if (row.getString("answered_user") != null) {
        answeredBy.put("user", row.getString("answered_user"));
      }
      json.put("outcome", new JsonObject().put("outcome", "selected")
          .put("optionId", row.getString("option_id"))
          .put("kind", row.getString("option_kind"))
          .put("answeredBy", answeredBy));
    } else if (state.equals("cancelled")) {
      json.put("outcome", new JsonObject().put("outcome", "cancelled").put("reason", row.getString("reason")));
    }
    return json;
  }

  static JsonObject eventToJson(Row row) {
    return new JsonObject().put("at", row.getLong("at")).put("event", row.getString("event"))
        .put("surface", row.getString("surface")).put("user", row.getString("user_name"))
        .put("detail", row.getString("detail"));
  }
}
