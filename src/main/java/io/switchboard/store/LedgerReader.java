package io.switchboard.store;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Reads the permission ledger of a gateway's database from outside the store room: the
 * {@code ledger} and {@code doctor} subcommands. Read-only connections, so it is safe beside a
 * running gateway (WAL lets readers run while it writes). Blocking: not for an event loop.
 */
public final class LedgerReader {
  private LedgerReader() {}

  private static Connection open(Path db) throws SQLException {
    return DriverManager.getConnection("jdbc:sqlite:" + db + "?open_mode=1&busy_timeout=5000");
  }

  public static int knownSchemaVersion() {
    return Migrations.VERSIONS.size();
  }

  public static int schemaVersion(Path db) throws SQLException {
    try (Connection c = open(db); ResultSet rs = c.createStatement().executeQuery("PRAGMA user_version")) {
      return rs.getInt(1);
    }
  }

  /** The newest requests first, each as in docs/event-bus.md (with its audit events). */
  public static JsonArray requests(Path db, boolean pendingOnly, int limit) throws SQLException {
    JsonArray out = new JsonArray();
    try (Connection c = open(db);
         PreparedStatement st = c.prepareStatement("SELECT * FROM permission_request"
             + (pendingOnly ? " WHERE state = 'pending'" : "") + " ORDER BY created_at DESC, request_id LIMIT ?");
         PreparedStatement events = c.prepareStatement(
             "SELECT at, event, surface, user_name, detail FROM permission_event WHERE request_id = ? ORDER BY id")) {
      st.setInt(1, limit);
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          JsonObject row = LedgerRows.toJson(rs);
          JsonArray trail = new JsonArray();
          events.setString(1, row.getString("requestId"));
          try (ResultSet e = events.executeQuery()) {
            while (e.next()) {
              trail.add(new JsonObject().put("at", e.getLong("at")).put("event", e.getString("event"))
                  .put("surface", e.getString("surface")).put("user", e.getString("user_name"))
                  .put("detail", e.getString("detail")));
            }
          }
          out.add(row.put("events", trail));
        }
      }
    }
    return out;
  }
}
