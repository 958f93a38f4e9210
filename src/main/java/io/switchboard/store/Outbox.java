package io.switchboard.store;

import static io.switchboard.store.Sql.required;

import io.switchboard.common.RandomIds;
import io.switchboard.store.WriteQueue.Write;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The outbox's SQL: durable outputs for plugins. Outputs are numbered in one sequence (delivery
 * order per plugin) and named by a random output id that stays the same across redeliveries, so a
 * plugin can drop a duplicate. The static methods run inside another write's transaction (the
 * ledger's cards); the instance serves the outbox's own addresses.
 */
final class Outbox {
  /** A reply field naming the plugins whose outbox a write added to; the room strips it and publishes OUTBOX_READY. */
  static final String TOUCHED = "_outboxTouched";
  private static final int PRUNE_EVERY = 500;
  /**
   * The outbox of the browsers' push subscriptions (chat id: the subscription's id), drained by the
   * push room. Plugin ids start with a letter or digit, so it is nobody's plugin.
   */
  static final String PUSH = "_push";

  private final Pool readers;
  /** Counted on the event loop, when an acknowledgement is parsed. */
  private long acknowledgements;

  private final RandomIds ids = new RandomIds();

  Outbox(Pool readers) {
    this.readers = readers;
  }

  Write enqueue(JsonObject b) {
    String pluginId = required(b, "pluginId");
    String chatId = required(b, "chatId");
    String kind = required(b, "kind");
    if (!(b.getValue("body") instanceof JsonObject body)) {
      throw new IllegalArgumentException("body must be an object");
    }
    String requestId = b.getString("requestId");
    long at = System.currentTimeMillis();
    return conn -> insert(conn, ids, pluginId, chatId, kind, requestId, body, at)
        .put(TOUCHED, new JsonArray().add(pluginId));
  }

  Write reopenCards(JsonObject b) {
    String pluginId = required(b, "pluginId");
    return conn -> {
      int reopened = reopenCards(conn, pluginId);
      JsonObject reply = new JsonObject().put("reopened", reopened);
      return reopened == 0 ? reply : reply.put(TOUCHED, new JsonArray().add(pluginId));
    };
  }

  Write ack(JsonObject b) {
    String pluginId = required(b, "pluginId");
    if (!(b.getValue("outputIds") instanceof JsonArray ids)) {
      throw new IllegalArgumentException("outputIds must be an array");
    }
    long at = System.currentTimeMillis();
    // Pruning scans the plugin's finished outputs: do it now and then, not on every acknowledgement.
    boolean prune = ++acknowledgements % PRUNE_EVERY == 0;
    return conn -> {
      int acked = ack(conn, pluginId, ids, at);
      if (prune) {
        prune(conn, pluginId, at);
      }
      return new JsonObject().put("acked", acked);
    };
  }

  Future<JsonObject> pending(JsonObject body) {
    JsonObject b = body == null ? new JsonObject() : body;
    String pluginId = b.getString("pluginId");
    int limit = b.getValue("limit") instanceof Integer i ? i : 100;
    if (pluginId == null || limit < 1 || limit > 1000) {
      throw new IllegalArgumentException("pluginId is missing or limit is not 1..1000");
    }
    return Sql.listed(readers.preparedQuery(
            "SELECT * FROM outbox WHERE plugin_id = ? AND state = 'pending' ORDER BY seq LIMIT ?")
        .execute(Tuple.of(pluginId, limit)), "outputs", row -> new JsonObject().put("seq", row.getLong("seq"))
            .put("outputId", row.getString("output_id")).put("pluginId", row.getString("plugin_id"))
            .put("chatId", row.getString("chat_id")).put("kind", row.getString("kind"))
            .put("requestId", row.getString("request_id")).put("body", new JsonObject(row.getString("body")))
            .put("createdAt", row.getLong("created_at")));
  }

  /** Per plugin: outputs waiting for an acknowledgement, and when the oldest was written. */
  Future<JsonObject> stats(JsonObject body) {
    return Sql.listed(readers.query("SELECT plugin_id, COUNT(*) AS pending, MIN(created_at) AS oldest FROM outbox "
            + "WHERE state = 'pending' GROUP BY plugin_id").execute(), "plugins",
        row -> new JsonObject().put("pluginId", row.getString("plugin_id"))
            .put("pending", row.getLong("pending")).put("oldestCreatedAt", row.getLong("oldest")));
  }

  // The statements, on the writer thread inside the caller's transaction.

  /** Delivered or superseded outputs kept per plugin, and for how long, before they are pruned. */
  static final int KEPT_PER_PLUGIN = 10_000;
  static final long KEPT_MS = 7L * 24 * 60 * 60 * 1000;

  /** An IM surface is {@code <pluginId>:<chatId>}; the browser's is {@code web}. Null for a non-IM surface. */
  static String[] imSurface(String surface) {
    int colon = surface == null ? -1 : surface.indexOf(':');
    if (colon <= 0 || colon == surface.length() - 1) {
      return null;
    }
    return new String[] {surface.substring(0, colon), surface.substring(colon + 1)};
  }

  /** {@code ids}: the output ids' generator of the writing room (a stable, unguessable id per output). */
  static JsonObject insert(Connection conn, RandomIds ids, String pluginId, String chatId, String kind,
                           String requestId, JsonObject body, long at) throws SQLException {
    String outputId = ids.next("out_", 12);
    Sql.update(conn, "INSERT INTO outbox (output_id, plugin_id, chat_id, kind, request_id, body, state, "
        + "created_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)", outputId, pluginId, chatId, kind, requestId,
        body.encode(), at);
    return new JsonObject().put("outputId", outputId);
  }

  /**
   * A request ended: its cards still waiting are superseded, and every chat that had a card (sent
   * or not) gets the end state instead. Returns the plugins whose outbox grew.
   */
  static JsonArray supersede(Connection conn, RandomIds ids, String requestId, JsonObject endBody, long at) throws SQLException {
    List<String[]> chats = new ArrayList<>();
    String title = null;
    try (PreparedStatement st = conn.prepareStatement(
        "SELECT plugin_id, chat_id, MIN(body) FROM outbox WHERE request_id = ? AND kind = 'card' "
            + "GROUP BY plugin_id, chat_id")) {
      st.setString(1, requestId);
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          chats.add(new String[] {rs.getString(1), rs.getString(2)});
          if (title == null) {
            title = new JsonObject(rs.getString(3)).getJsonObject("toolCall", new JsonObject()).getString("title");
          }
        }
      }
    }
    if (title != null) {
      // The chat is told which request ended, in words (a plugin may show it as text).
      endBody = endBody.copy().put("toolCall", new JsonObject().put("title", title));
    }
    // A reminder still waiting is superseded with its card: it would point to a card that has ended.
    Sql.update(conn, "UPDATE outbox SET state = 'superseded' WHERE request_id = ? AND kind IN ('card', 'reminder') "
        + "AND state = 'pending'", requestId);
    JsonArray touched = new JsonArray();
    for (String[] chat : chats) {
      insert(conn, ids, chat[0], chat[1], "card_end", requestId, endBody, at);
      touched.add(chat[0]);
    }
    return touched;
  }

  /** The chats (and devices) that had the request's card, as {plugin, chat}. */
  static List<String[]> chatsWithCard(Connection conn, String requestId) throws SQLException {
    List<String[]> chats = new ArrayList<>();
    try (PreparedStatement st = conn.prepareStatement("SELECT DISTINCT plugin_id, chat_id FROM outbox "
        + "WHERE request_id = ? AND kind = 'card' AND plugin_id <> ?")) {
      st.setString(1, requestId);
      st.setString(2, PUSH);
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          chats.add(new String[] {rs.getString(1), rs.getString(2)});
        }
      }
    }
    return chats;
  }

  /** Marks outputs delivered (only pending ones of that plugin). */
  static int ack(Connection conn, String pluginId, JsonArray outputIds, long at) throws SQLException {
    int acked = 0;
    for (Object id : outputIds) {
      if (id instanceof String s) {
        acked += Sql.update(conn, "UPDATE outbox SET state = 'delivered', delivered_at = ? "
            + "WHERE output_id = ? AND plugin_id = ? AND state = 'pending'", at, s, pluginId);
      }
    }
    return acked;
  }

  /**
   * A plugin process died: the cards it was given for requests still pending are due again, under
   * the same output ids, so the next process shows them and a tap there can answer them.
   */
  static int reopenCards(Connection conn, String pluginId) throws SQLException {
    return Sql.update(conn, "UPDATE outbox SET state = 'pending', delivered_at = NULL WHERE plugin_id = ? "
        + "AND kind = 'card' AND state = 'delivered' AND request_id IN "
        + "(SELECT request_id FROM permission_request WHERE state = 'pending')", pluginId);
  }

  /** Drops a plugin's finished outputs past the newest {@link #KEPT_PER_PLUGIN} or older than {@link #KEPT_MS}. */
  static void prune(Connection conn, String pluginId, long at) throws SQLException {
    Sql.update(conn, "DELETE FROM outbox WHERE plugin_id = ? AND state <> 'pending' AND created_at < ?",
        pluginId, at - KEPT_MS);
    Sql.update(conn, "DELETE FROM outbox WHERE plugin_id = ? AND state <> 'pending' AND seq < (SELECT MIN(seq) "
        + "FROM (SELECT seq FROM outbox WHERE plugin_id = ? AND state <> 'pending' ORDER BY seq DESC LIMIT ?))",
        pluginId, pluginId, KEPT_PER_PLUGIN);
  }
}
