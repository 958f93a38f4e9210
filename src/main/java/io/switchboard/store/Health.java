package io.switchboard.store;

import static io.switchboard.store.Sql.update;

import io.switchboard.store.WriteQueue.Write;
import io.vertx.core.json.JsonObject;

/** The store's health probe: one small write through the writer queue, so {@code /readyz} knows the database takes writes. */
final class Health {
  Write check(JsonObject b) {
    String now = Long.toString(System.currentTimeMillis());
    return conn -> {
      update(conn, "INSERT INTO meta (key, value) VALUES ('last_health_check', ?) "
          + "ON CONFLICT (key) DO UPDATE SET value = excluded.value", now);
      return new JsonObject().put("writable", true);
    };
  }
}
