package io.switchboard.store;

import static io.switchboard.store.Sql.required;
import static io.switchboard.store.Sql.update;

import io.switchboard.store.WriteQueue.Write;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;

/**
 * What agents cost, as they report it (ACP {@code usage_update.cost}: a session's running total):
 * per thread, the last total its session reported; per day and agent, the sum of what was new in
 * each report. A total lower than the last one is a new session (the agent restarted), all of it new.
 */
final class Usage {
  private final Pool readers;

  Usage(Pool readers) {
    this.readers = readers;
  }

  /** {@code {threadId, agentId, currency, total, at?}} → {@code {added, threadCost}}: what this report added. */
  Write cost(JsonObject b) {
    String threadId = required(b, "threadId");
    String agentId = required(b, "agentId");
    String currency = required(b, "currency");
    if (!(b.getValue("total") instanceof Number n) || !Double.isFinite(n.doubleValue()) || n.doubleValue() < 0) {
      throw new IllegalArgumentException("total must be a number of 0 or more");
    }
    double total = n.doubleValue();
    long at = b.getLong("at", System.currentTimeMillis());
    String day = LocalDate.ofInstant(Instant.ofEpochMilli(at), ZoneId.systemDefault()).toString();
    return conn -> {
      double last = 0;
      double threadCost = 0;
      String lastCurrency = null;
      try (PreparedStatement st = conn.prepareStatement(
          "SELECT currency, session_total, cost_total FROM usage_thread WHERE thread_id = ?")) {
        st.setString(1, threadId);
        try (ResultSet rs = st.executeQuery()) {
          if (rs.next()) {
            lastCurrency = rs.getString(1);
            last = rs.getDouble(2);
            threadCost = rs.getDouble(3);
          }
        }
      }
      double added = currency.equals(lastCurrency) && total >= last ? total - last : total;
      threadCost = currency.equals(lastCurrency) ? threadCost + added : added;
      update(conn, """
          INSERT INTO usage_thread (thread_id, agent_id, currency, session_total, cost_total, updated_at)
          VALUES (?, ?, ?, ?, ?, ?)
          ON CONFLICT (thread_id) DO UPDATE SET agent_id = excluded.agent_id, currency = excluded.currency,
            session_total = excluded.session_total, cost_total = excluded.cost_total, updated_at = excluded.updated_at""",
          threadId, agentId, currency, total, threadCost, at);
      if (added > 0) {
        update(conn, """
            INSERT INTO usage_day (day, agent_id, currency, amount) VALUES (?, ?, ?, ?)
            ON CONFLICT (day, agent_id, currency) DO UPDATE SET amount = amount + excluded.amount""",
            day, agentId, currency, added);
      }
      return new JsonObject().put("added", added).put("threadCost", threadCost);
    };
  }

  /** {@code {days?}} (default 30, at most 366) → {@code {days: [{day, agentId, currency, amount}]}}, newest first. */
  Future<JsonObject> days(JsonObject body) {
    Object n = body == null ? null : body.getValue("days");
    int days = n == null ? 30 : n instanceof Number d && d.intValue() >= 1 && d.intValue() <= 366 ? d.intValue() : -1;
    if (days < 0) {
      throw new IllegalArgumentException("days must be a whole number of 1..366");
    }
    String since = LocalDate.now().minusDays(days - 1L).toString();
    return Sql.listed(readers.preparedQuery("SELECT * FROM usage_day WHERE day >= ? ORDER BY day DESC, agent_id")
        .execute(Tuple.of(since)), "days", row -> new JsonObject().put("day", row.getString("day"))
        .put("agentId", row.getString("agent_id")).put("currency", row.getString("currency"))
        .put("amount", row.getDouble("amount")));
  }
}
