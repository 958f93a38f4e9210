package io.switchboard.store;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.sql.ResultSet;
import java.sql.SQLException;

/** Turns ledger rows into the JSON shapes documented in docs/event-bus.md. */
final class LedgerRows {
  private LedgerRows() {}

  /** A column reader over either a Vert.x {@link Row} or a JDBC {@link ResultSet}. */
  private interface Columns {
    String text(String column) throws SQLException;

    Long number(String column) throws SQLException;

    /** A column a database of an older schema may lack (the offline reader does not migrate). */
    String textIfAny(String column) throws SQLException;
  }

  static JsonObject toJson(Row row) {
    try {
      return toJson(new Columns() {
        public String text(String column) {
          return row.getString(column);
        }

        public Long number(String column) {
          return row.getLong(column);
        }

        public String textIfAny(String column) {
          return row.getColumnIndex(column) < 0 ? null : row.getString(column);
        }
      });
    } catch (SQLException impossible) {
      throw new IllegalStateException(impossible);
    }
  }

  static JsonObject toJson(ResultSet rs) throws SQLException {
    return toJson(new Columns() {
      public String text(String column) throws SQLException {
        return rs.getString(column);
      }

      public Long number(String column) throws SQLException {
        long v = rs.getLong(column);
        return rs.wasNull() ? null : v;
      }

      public String textIfAny(String column) throws SQLException {
        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
          if (column.equals(rs.getMetaData().getColumnName(i))) {
            return rs.getString(i);
          }
        }
        return null;
      }
    });
  }

  private static JsonObject toJson(Columns row) throws SQLException {
    String state = row.text("state");
    JsonObject json = new JsonObject()
        .put("requestId", row.text("request_id"))
        .put("threadId", row.text("thread_id"))
        .put("sessionId", row.text("session_id"))
        .put("agentId", row.text("agent_id"))
        .put("toolCall", new JsonObject(row.text("tool_call")))
        .put("options", new JsonArray(row.text("options")))
        .put("eligible", new JsonArray(row.text("eligible")))
        .put("state", state)
        .put("createdAt", row.number("created_at"))
        .put("endedAt", row.number("ended_at"));
    if (state.equals("selected")) {
      JsonObject answeredBy = new JsonObject().put("surface", row.text("answered_surface"));
      if (row.text("answered_user") != null) {
        answeredBy.put("user", row.text("answered_user"));
      }
      String person = row.textIfAny("answered_person");
      if (person != null) {
        answeredBy.put("person", new JsonObject(person)); // who, by which identity, how strongly signed in
      }
      json.put("outcome", new JsonObject().put("outcome", "selected")
          .put("optionId", row.text("option_id"))
          .put("kind", row.text("option_kind"))
          .put("answeredBy", answeredBy));
      if ("rule".equals(row.text("answered_surface"))) {
        // Which rule (id@version) answered, and what of the request it matched.
        String ref = row.text("answered_user");
        int at = ref == null ? -1 : ref.lastIndexOf('@');
        json.getJsonObject("outcome").put("rule", new JsonObject()
            .put("ruleId", at < 0 ? ref : ref.substring(0, at))
            .put("version", at < 0 ? null : Integer.valueOf(ref.substring(at + 1)))
            .put("matched", row.text("reason") == null ? null : row.text("reason").replaceFirst("^matched ", "")));
      }
      String reason = row.text("reason");
      if (reason != null && reason.startsWith("granted ")) {
        json.getJsonObject("outcome").put("grant", new JsonObject().put("ruleId", reason.substring("granted ".length())));
      }
      String answer = row.textIfAny("answer");
      if (answer != null) {
        json.getJsonObject("outcome").put("answer", new JsonObject(answer)); // a question's, secrets left out
      }
      String answerKey = row.textIfAny("answer_key");
      if (answerKey != null) {
        json.put("answerKey", answerKey);
      }
    } else if (state.equals("cancelled")) {
      json.put("outcome", new JsonObject().put("outcome", "cancelled").put("reason", row.text("reason")));
    }
    String attention = row.textIfAny("attention");
    JsonObject plan = attention == null ? new JsonObject() : new JsonObject(attention);
    if (plan.getJsonObject("deadline") != null) {
      json.put("deadline", plan.getJsonObject("deadline"));
    }
    String projectId = row.textIfAny("project_id");
    if (projectId != null) {
      json.put("projectId", projectId);
    }
    if (state.equals("expired")) {
      // Its own end, never a person's refusal: the rule that expired it, and what the agent was told.
      JsonObject outcome = new JsonObject().put("outcome", "expired").put("rule", row.text("reason"))
          .put("onExpiry", plan.getJsonObject("deadline", new JsonObject()).getString("onExpiry"));
      if (row.text("option_id") != null) {
        outcome.put("optionId", row.text("option_id")).put("kind", row.text("option_kind"));
      }
      json.put("outcome", outcome);
    }
    return json;
  }

  static JsonObject eventToJson(Row row) {
    return new JsonObject().put("at", row.getLong("at")).put("event", row.getString("event"))
        .put("surface", row.getString("surface")).put("user", row.getString("user_name"))
        .put("detail", row.getString("detail"));
  }
}
