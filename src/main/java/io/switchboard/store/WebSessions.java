package io.switchboard.store;

import static io.switchboard.store.Sql.required;
import static io.switchboard.store.Sql.update;

import io.switchboard.store.WriteQueue.Write;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;

/** The browser sessions' SQL: the SHA-256 of each session cookie (never the cookie), kept across restarts. */
final class WebSessions {
  private final Pool readers;

  WebSessions(Pool readers) {
    this.readers = readers;
  }

  Write save(JsonObject b) {
    String hash = required(b, "hash");
    long at = b.getLong("createdAt", System.currentTimeMillis());
    String userAgent = b.getString("userAgent");
    String address = b.getString("address");
    String personId = b.getString("personId");
    String identity = b.getString("identity");
    String strength = b.getString("strength");
    return conn -> {
      update(conn, "INSERT OR REPLACE INTO web_session (hash, created_at, user_agent, address, person_id, identity, "
          + "strength) VALUES (?, ?, ?, ?, ?, ?, ?)", hash, at, userAgent, address, personId, identity, strength);
      return new JsonObject();
    };
  }

  Write forget(JsonObject b) {
    boolean all = Boolean.TRUE.equals(b.getValue("all"));
    String hash = all ? null : required(b, "hash");
    return conn -> {
      if (all) {
        update(conn, "DELETE FROM web_session");
      } else {
        update(conn, "DELETE FROM web_session WHERE hash = ?", hash);
      }
      return new JsonObject();
    };
  }

  Future<JsonObject> list(JsonObject body) {
    return Sql.listed(readers.query("SELECT hash, created_at, user_agent, address, person_id, identity, strength "
                + "FROM web_session ORDER BY created_at")
            .execute(),
        "sessions", row -> new JsonObject().put("hash", row.getString("hash"))
            .put("createdAt", row.getLong("created_at")).put("userAgent", row.getString("user_agent"))
            .put("address", row.getString("address")).put("personId", row.getString("person_id"))
            .put("identity", row.getString("identity")).put("strength", row.getString("strength")));
  }
}
