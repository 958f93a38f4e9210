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

  /** The newest version of every rule, as the store keeps them (an older database has none). */
  public static JsonArray rules(Path db) throws SQLException {
    JsonArray out = new JsonArray();
    try (Connection c = open(db)) {
      if (schemaVersion(db) < 12) {
        return out;
      }
      out.addAll(new JsonArray(new java.util.ArrayList<>(Rules.latest(c).values())));
    }
    return out;
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

  /** What {@code ledger verify} found: how many events are chained, and the first broken link (or null). */
  public record Verification(long chained, long unchained, Long brokenEventId, String brokenRequestId, String why) {
    public boolean intact() {
      return brokenEventId == null;
    }
  }

  /**
   * Walks the audit events in order, recomputing each hash from the one before, and checks each
   * request's digest against what it asked and each end event against the row's end state. Events
   * written before the chain existed (schema version 3 and earlier) come first and are counted as
   * unchained; after the first chained event, every event must be chained.
   */
  public static Verification verify(Path db) throws SQLException {
    long chained = 0;
    long unchained = 0;
    String previous = LedgerChain.GENESIS;
    try (Connection c = open(db);
         PreparedStatement events = c.prepareStatement("SELECT e.id, e.request_id, e.at, e.event, e.surface, "
             + "e.user_name, e.detail, e.hash, r.request_id AS known, r.tool_call, r.options, r.digest, r.state, "
             + "r.option_id, r.option_kind, r.reason, r.answered_surface, r.answered_user, r.ended_at, r.answer, "
             + "r.answered_person "
             + "FROM permission_event e LEFT JOIN permission_request r ON r.request_id = e.request_id ORDER BY e.id");
         ResultSet rs = events.executeQuery()) {
      while (rs.next()) {
        long id = rs.getLong("id");
        String requestId = rs.getString("request_id");
        String event = rs.getString("event");
        String hash = rs.getString("hash");
        if (hash == null) {
          if (chained > 0) {
            return new Verification(chained, unchained, id, requestId, "event " + event + " carries no hash, "
                + "though events before it do");
          }
          unchained++;
          continue;
        }
        if (rs.getString("known") == null) {
          return new Verification(chained, unchained, id, requestId, "its request is not in the ledger");
        }
        String vouches = null;
        if (event.equals("registered")) {
          String digest = LedgerChain.digest(rs.getString("tool_call"), rs.getString("options"));
          if (!digest.equals(rs.getString("digest"))) {
            return new Verification(chained, unchained, id, requestId, "what the request asked (its tool call or "
                + "options) is not what was registered");
          }
          vouches = digest;
        } else if (event.equals("selected") || event.equals("cancelled") || event.equals("expired")) {
          long endedAt = rs.getLong("ended_at");
          Long ended = rs.wasNull() ? null : endedAt;
          vouches = LedgerChain.endState(rs.getString("state"), rs.getString("option_id"), rs.getString("option_kind"),
              rs.getString("reason"), rs.getString("answered_surface"), rs.getString("answered_user"), ended,
              rs.getString("answer"), rs.getString("answered_person"));
        }
        String expected = LedgerChain.link(previous, requestId, rs.getLong("at"), event, rs.getString("surface"),
            rs.getString("user_name"), rs.getString("detail"), vouches);
        if (!expected.equals(hash)) {
          return new Verification(chained, unchained, id, requestId, "its hash does not follow from the event "
              + "before it and what it records (an event was edited, inserted or removed"
              + (vouches == null ? "" : ", or the request's row was changed") + ")");
        }
        previous = hash;
        chained++;
      }
    }
    return new Verification(chained, unchained, null, null, null);
  }
}
