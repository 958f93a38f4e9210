package io.switchboard.store;

import static io.switchboard.store.Sql.required;
import static io.switchboard.store.Sql.update;

import io.switchboard.store.WriteQueue.Write;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

/** The plugin chats' SQL: which chat messages became prompts (so a redelivery starts no second turn), and each chat's scope. */
final class PluginChats {
  /** How long a plugin's chat message ids are remembered: platforms redeliver within hours, not months. */
  static final long INBOUND_RETENTION_MS = 30L * 24 * 3600 * 1000;

  private final Pool readers;

  PluginChats(Pool readers) {
    this.readers = readers;
  }

  Future<JsonObject> inboundSeen(JsonObject b) {
    String plugin = required(b, "pluginId");
    String chat = required(b, "chatId");
    String message = required(b, "messageId");
    return readers.preparedQuery("SELECT 1 FROM plugin_inbound WHERE plugin_id = ? AND chat_id = ? AND message_id = ?")
        .execute(Tuple.of(plugin, chat, message))
        .map(rows -> new JsonObject().put("seen", rows.size() > 0));
  }

  Write markInbound(JsonObject b) {
    String plugin = required(b, "pluginId");
    String chat = required(b, "chatId");
    String message = required(b, "messageId");
    long at = System.currentTimeMillis();
    return conn -> {
      update(conn, "INSERT OR IGNORE INTO plugin_inbound (plugin_id, chat_id, message_id, seen_at) VALUES (?, ?, ?, ?)",
          plugin, chat, message, at);
      update(conn, "DELETE FROM plugin_inbound WHERE seen_at < ?", at - INBOUND_RETENTION_MS);
      return new JsonObject();
    };
  }

  Write saveScope(JsonObject b) {
    String plugin = required(b, "pluginId");
    String chat = required(b, "chatId");
    String scope = required(b, "scope");
    if (!scope.equals("dm") && !scope.equals("group")) {
      throw new IllegalArgumentException("scope must be dm or group");
    }
    return conn -> {
      update(conn, "INSERT OR REPLACE INTO plugin_chat (plugin_id, chat_id, scope) VALUES (?, ?, ?)", plugin, chat,
          scope);
      return new JsonObject();
    };
  }

  Future<JsonObject> listScopes(JsonObject b) {
    String plugin = required(b, "pluginId");
    return readers.preparedQuery("SELECT chat_id, scope FROM plugin_chat WHERE plugin_id = ?").execute(Tuple.of(plugin))
        .map(rows -> {
          JsonObject scopes = new JsonObject();
          rows.forEach(row -> scopes.put(row.getString("chat_id"), row.getString("scope")));
          return new JsonObject().put("scopes", scopes);
        });
  }
}
