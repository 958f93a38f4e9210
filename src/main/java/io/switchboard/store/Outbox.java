package io.switchboard.store;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The outbox's SQL, run on the store's writer thread inside the caller's transaction. Outputs are
 * numbered in one sequence (delivery order per plugin) and named by a random output id that stays
 * the same across redeliveries, so a plugin can drop a duplicate.
 */
final class Outbox {
  private Outbox() {}

  /** Delivered or superseded outputs kept per plugin, and for how long, before they are pruned. */
  static final int KEPT_PER_PLUGIN = 10_000;
  static final long KEPT_MS = 7L * 24 * 60 * 60 * 1000;

  private static final SecureRandom RANDOM = new SecureRandom();

  /** An IM surface is {@code <pluginId>:<chatId>}; the browser's is {@code web}. Null for a non-IM surface. */
  static String[] imSurface(String surface) {
    int colon = surface == null ? -1 : surface.indexOf(':');
    if (colon <= 0 || colon == surface.length() - 1) {
      return null;
    }
    return new String[] {surface.substring(0, colon), surface.substring(colon + 1)};
  }

  static JsonObject insert(Connection conn, String pluginId, String chatId, String kind, String requestId,
                           JsonObject body, long at) throws SQLException {
    byte[] bytes = new byte[12];
    RANDOM.nextBytes(bytes);
    String outputId = "out_" + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    StoreRoom.update(conn, "INSERT INTO outbox (output_id, plugin_id, chat_id, kind, request_id, body, state, "
        + "created_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)", outputId, pluginId, chatId, kind, requestId,
        body.encode(), at);
    return new JsonObject().put("outputId", outputId);
  }

  /**
   * A request ended: its cards still waiting are superseded, and every chat that had a card (sent
   * or not) gets the end state instead. Returns the plugins whose outbox grew.
   */
  static JsonArray supersede(Connection conn, String requestId, JsonObject endBody, long at) throws SQLException {
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
    StoreRoom.update(conn, "UPDATE outbox SET state = 'superseded' WHERE request_id = ? AND kind = 'card' "
        + "AND state = 'pending'", requestId);
    JsonArray touched = new JsonArray();
    for (String[] chat : chats) {
      insert(conn, chat[0], chat[1], "card_end", requestId, endBody, at);
      touched.add(chat[0]);
    }
    return touched;
  }

  /** Marks outputs delivered (only pending ones of that plugin). */
  static int ack(Connection conn, String pluginId, JsonArray outputIds, long at) throws SQLException {
    int acked = 0;
    for (Object id : outputIds) {
      if (id instanceof String s) {
        acked += StoreRoom.update(conn, "UPDATE outbox SET state = 'delivered', delivered_at = ? "
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
    return StoreRoom.update(conn, "UPDATE outbox SET state = 'pending', delivered_at = NULL WHERE plugin_id = ? "
        + "AND kind = 'card' AND state = 'delivered' AND request_id IN "
        + "(SELECT request_id FROM permission_request WHERE state = 'pending')", pluginId);
  }

  /** Drops a plugin's finished outputs past the newest {@link #KEPT_PER_PLUGIN} or older than {@link #KEPT_MS}. */
  static void prune(Connection conn, String pluginId, long at) throws SQLException {
    StoreRoom.update(conn, "DELETE FROM outbox WHERE plugin_id = ? AND state <> 'pending' AND created_at < ?",
        pluginId, at - KEPT_MS);
    StoreRoom.update(conn, "DELETE FROM outbox WHERE plugin_id = ? AND state <> 'pending' AND seq < (SELECT MIN(seq) "
        + "FROM (SELECT seq FROM outbox WHERE plugin_id = ? AND state <> 'pending' ORDER BY seq DESC LIMIT ?))",
        pluginId, pluginId, KEPT_PER_PLUGIN);
  }
}
