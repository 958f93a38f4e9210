package io.switchboard.store;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.function.Function;

/** Small helpers the store's data-access classes share: one statement on the writer, a list of rows as a reply, a required field. */
final class Sql {
  private Sql() {}

  /** Runs one statement on the writer connection (its statements are cached); the rows it changed. */
  static int update(Connection conn, String sql, Object... args) throws SQLException {
    try (PreparedStatement st = conn.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        if (args[i] == null) {
          st.setNull(i + 1, Types.NULL);
        } else {
          st.setObject(i + 1, args[i]);
        }
      }
      return st.executeUpdate();
    }
  }

  /** A read's reply: {@code {field: [row, ...]}}, each row turned into JSON by {@code toJson}. */
  static Future<JsonObject> listed(Future<RowSet<Row>> rows, String field, Function<Row, Object> toJson) {
    return rows.map(found -> {
      JsonArray out = new JsonArray();
      found.forEach(row -> out.add(toJson.apply(row)));
      return new JsonObject().put(field, out);
    });
  }

  /** A non-empty string field of a request body; an IllegalArgumentException (a bad request) otherwise. */
  static String required(JsonObject body, String field) {
    Object v = body.getValue(field);
    if (!(v instanceof String s) || s.isEmpty()) {
      throw new IllegalArgumentException(field + " is missing");
    }
    return s;
  }

  /** An object field of a request body; an IllegalArgumentException (a bad request) otherwise. */
  static JsonObject requiredObject(JsonObject body, String field) {
    if (!(body.getValue(field) instanceof JsonObject o)) {
      throw new IllegalArgumentException(field + " must be an object");
    }
    return o;
  }
}
