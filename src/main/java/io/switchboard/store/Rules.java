package io.switchboard.store;

import static io.switchboard.store.Sql.update;

import io.switchboard.store.WriteQueue.Write;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

/**
 * The rules' SQL: append-only versions (a grant, a revocation, a config rule that changed each add
 * a row; none is updated or deleted), and each rule's use, read from the ledger's rows it decided
 * ({@code answered_surface = 'rule'}, {@code answered_user = '<id>@<version>'}). The permission room
 * is the only writer, as it is the ledger's.
 */
final class Rules {
  private final Pool readers;

  Rules(Pool readers) {
    this.readers = readers;
  }

  /** {@code {rule}} (a rule's JSON, {@code Rule#toJson}): appends that version. */
  Write append(JsonObject b) {
    JsonObject rule = Sql.requiredObject(b, "rule");
    return conn -> {
      insert(conn, rule);
      return new JsonObject().put("ruleId", rule.getString("ruleId")).put("version", rule.getInteger("version"));
    };
  }

  /**
   * {@code {rules: [rule...]}}: the config's rules as this start reads them. Each that is new or
   * changed gets a version; each config rule that left the config is revoked by "config". Replies
   * {@code {rules}}: the newest version of every rule (grants too), for the permission room's book.
   */
  Write sync(JsonObject b) {
    if (!(b.getValue("rules") instanceof JsonArray configured)) {
      throw new IllegalArgumentException("rules must be an array");
    }
    long at = System.currentTimeMillis();
    return conn -> {
      Map<String, JsonObject> latest = latest(conn);
      Map<String, JsonObject> wanted = new HashMap<>();
      for (Object o : configured) {
        JsonObject rule = ((JsonObject) o).copy();
        wanted.put(rule.getString("ruleId"), rule);
        JsonObject known = latest.get(rule.getString("ruleId"));
        if (known == null || !same(known, rule)) {
          rule.put("version", known == null ? 1 : known.getInteger("version") + 1).put("createdAt", at)
              .putNull("revokedAt").putNull("revokedBy");
          insert(conn, rule);
          latest.put(rule.getString("ruleId"), rule);
        }
      }
      for (JsonObject known : latest.values().toArray(JsonObject[]::new)) {
        boolean fromConfig = "config".equals(known.getString("source")) || "preset".equals(known.getString("source"));
        if (fromConfig && known.getValue("revokedAt") == null && !wanted.containsKey(known.getString("ruleId"))) {
          JsonObject gone = known.copy().put("version", known.getInteger("version") + 1).put("revokedAt", at)
              .put("revokedBy", "config");
          insert(conn, gone);
          latest.put(gone.getString("ruleId"), gone);
        }
      }
      return new JsonObject().put("rules", new JsonArray(new java.util.ArrayList<>(latest.values())));
    };
  }

  /** Whether a stored rule says what the config says now (its version and times aside). */
  private static boolean same(JsonObject stored, JsonObject configured) {
    return stored.getValue("revokedAt") == null && stored.getString("effect").equals(configured.getString("effect"))
        && stored.getJsonObject("match").equals(configured.getJsonObject("match"))
        && String.valueOf(stored.getValue("scope")).equals(String.valueOf(configured.getValue("scope")))
        && String.valueOf(stored.getString("note")).equals(String.valueOf(configured.getString("note")))
        && String.valueOf(stored.getString("source")).equals(String.valueOf(configured.getString("source")));
  }

  /** The newest version of every rule, by id, oldest rule first (also read by {@code LedgerReader}). */
  static Map<String, JsonObject> latest(Connection conn) throws SQLException {
    Map<String, JsonObject> out = new java.util.LinkedHashMap<>();
    try (PreparedStatement st = conn.prepareStatement("SELECT * FROM permission_rule r WHERE version = "
        + "(SELECT MAX(version) FROM permission_rule WHERE rule_id = r.rule_id) ORDER BY created_at, rule_id");
         ResultSet rs = st.executeQuery()) {
      while (rs.next()) {
        JsonObject rule = new JsonObject().put("ruleId", rs.getString("rule_id")).put("version", rs.getInt("version"))
            .put("effect", rs.getString("effect")).put("match", new JsonObject(rs.getString("match")))
            .put("scope", decodeScope(rs.getString("scope"))).put("source", rs.getString("source"))
            .put("createdBy", rs.getString("created_by")).put("createdAt", rs.getLong("created_at"))
            .put("expiresAt", nullableLong(rs, "expires_at")).put("revokedAt", nullableLong(rs, "revoked_at"))
            .put("revokedBy", rs.getString("revoked_by")).put("note", rs.getString("note"));
        out.put(rule.getString("ruleId"), rule);
      }
    }
    return out;
  }

  private static Object decodeScope(String s) {
    return s.startsWith("{") ? new JsonObject(s) : s;
  }

  private static Long nullableLong(ResultSet rs, String column) throws SQLException {
    long v = rs.getLong(column);
    return rs.wasNull() ? null : v;
  }

  private static void insert(Connection conn, JsonObject r) throws SQLException {
    Object scope = r.getValue("scope");
    update(conn, "INSERT INTO permission_rule (rule_id, version, effect, match, scope, source, created_by, created_at, "
            + "expires_at, revoked_at, revoked_by, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        r.getString("ruleId"), r.getInteger("version"), r.getString("effect"), r.getJsonObject("match").encode(),
        scope instanceof JsonObject o ? o.encode() : String.valueOf(scope), r.getString("source"),
        r.getString("createdBy"), r.getLong("createdAt", 0L), r.getLong("expiresAt"), r.getLong("revokedAt"),
        r.getString("revokedBy"), r.getString("note"));
  }

  /**
   * {@code {}} → {@code {rules}}: the newest version of every rule, each with {@code uses} (requests
   * it decided, any version) and {@code lastUsedAt}.
   */
  Future<JsonObject> list(JsonObject body) {
    return readers.query("""
            SELECT r.*, (SELECT COUNT(*) FROM permission_request q WHERE q.answered_surface = 'rule'
                           AND q.answered_user >= r.rule_id || '@' AND q.answered_user < r.rule_id || 'A') AS uses,
                        (SELECT MAX(q.ended_at) FROM permission_request q WHERE q.answered_surface = 'rule'
                           AND q.answered_user >= r.rule_id || '@' AND q.answered_user < r.rule_id || 'A') AS last_used
              FROM permission_rule r
             WHERE r.version = (SELECT MAX(version) FROM permission_rule WHERE rule_id = r.rule_id)
             ORDER BY r.created_at, r.rule_id""").execute()
        .map(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(row -> out.add(new JsonObject().put("ruleId", row.getString("rule_id"))
              .put("version", row.getInteger("version")).put("effect", row.getString("effect"))
              .put("match", new JsonObject(row.getString("match"))).put("scope", decodeScope(row.getString("scope")))
              .put("source", row.getString("source")).put("createdBy", row.getString("created_by"))
              .put("createdAt", row.getLong("created_at")).put("expiresAt", row.getLong("expires_at"))
              .put("revokedAt", row.getLong("revoked_at")).put("revokedBy", row.getString("revoked_by"))
              .put("note", row.getString("note")).put("uses", row.getLong("uses"))
              .put("lastUsedAt", row.getLong("last_used"))));
          return new JsonObject().put("rules", out);
        });
  }
}
