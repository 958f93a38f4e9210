package io.switchboard.store;

import static io.switchboard.store.Sql.required;
import static io.switchboard.store.Sql.update;

import io.switchboard.common.RandomIds;
import io.switchboard.people.Principal;
import io.switchboard.people.Roles;
import io.switchboard.store.WriteQueue.Write;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * People, their identities and roles, and the audit of who did what to them (logins, links, role
 * changes, refused answers). An identity is {@code (kind, key)}: a chat identity's key is
 * {@code plugin:userId}, a personal token's the SHA-256 of the token (never the token), a passkey's
 * its credential id, an OIDC login's {@code issuer subject}. One identity names one person.
 */
final class People {
  /** The audit rows kept: the oldest go past this (a login every minute for a year fits). */
  static final int MAX_AUDIT = 500_000;
  private final Pool readers;
  private final RandomIds ids = new RandomIds();

  People(Pool readers) {
    this.readers = readers;
  }

  /** The first owner, made (named {@code name}, default "Owner") when nobody is an owner yet: the bootstrap token's person. */
  Write ensureOwner(JsonObject b) {
    String name = b.getString("name", "Owner");
    String id = ids.next("p_", 12);
    long at = System.currentTimeMillis();
    return conn -> {
      JsonObject owner = firstOwner(conn);
      if (owner == null) {
        update(conn, "INSERT INTO person (person_id, name, roles, disabled, created_at) VALUES (?, ?, ?, 0, ?)", id,
            name, new JsonArray().add("owner").encode(), at);
        audit(conn, at, "person-added", id, new JsonObject().put("name", name).put("roles", new JsonArray().add("owner"))
            .put("why", "the first owner, whom the bootstrap token names"));
        owner = person(conn, id);
      }
      return new JsonObject().put("person", owner);
    };
  }

  /**
   * {@code {personId?, name, roles, disabled?, by?}}: adds a person (no id) or changes one. Roles are
   * presets; the last owner who is not disabled stays an owner.
   */
  Write save(JsonObject b) {
    String given = b.getString("personId");
    String name = required(b, "name").strip();
    if (name.isEmpty() || name.length() > 100) {
      throw new IllegalArgumentException("name must be 1 to 100 characters");
    }
    JsonArray roles = b.getValue("roles") instanceof JsonArray r ? r : null;
    if (roles == null || roles.isEmpty()) {
      throw new IllegalArgumentException("roles must be a non-empty array of " + Roles.PRESETS.keySet());
    }
    for (Object role : roles) {
      if (!(role instanceof String s) || !Roles.PRESETS.containsKey(s)) {
        throw new IllegalArgumentException("roles holds \"" + role + "\"; a role is one of " + Roles.PRESETS.keySet());
      }
    }
    boolean disabled = Boolean.TRUE.equals(b.getValue("disabled"));
    String by = b.getString("by");
    String id = given != null ? given : ids.next("p_", 12);
    long at = System.currentTimeMillis();
    return conn -> {
      JsonObject before = given == null ? null : person(conn, given);
      if (given != null && before == null) {
        throw new StoreConflict("no person " + given);
      }
      if (given == null) {
        update(conn, "INSERT INTO person (person_id, name, roles, disabled, created_at) VALUES (?, ?, ?, ?, ?)", id,
            name, roles.encode(), disabled ? 1 : 0, at);
      } else {
        update(conn, "UPDATE person SET name = ?, roles = ?, disabled = ? WHERE person_id = ?", name, roles.encode(),
            disabled ? 1 : 0, id);
        if (firstOwner(conn) == null) {
          throw new StoreConflict("that would leave no owner who may sign in: keep one owner enabled");
        }
      }
      audit(conn, at, given == null ? "person-added" : "person-changed", by, new JsonObject().put("personId", id)
          .put("name", name).put("roles", roles).put("disabled", disabled));
      return new JsonObject().put("person", person(conn, id));
    };
  }

  /** {@code {personId, kind, key, label?, detail?, by?}}: links an identity to a person (one that names another is refused). */
  Write link(JsonObject b) {
    String personId = required(b, "personId");
    String kind = required(b, "kind");
    String key = required(b, "key");
    if (!Principal.IDENTITIES.contains(kind) || kind.equals("bootstrap")) {
      throw new IllegalArgumentException("kind must be one of token, chat, passkey, oidc, proxy");
    }
    String label = b.getString("label", "");
    JsonObject detail = b.getJsonObject("detail", new JsonObject());
    String by = b.getString("by");
    long at = System.currentTimeMillis();
    return conn -> {
      if (person(conn, personId) == null) {
        throw new StoreConflict("no person " + personId);
      }
      String holder = null;
      try (var st = conn.prepareStatement("SELECT person_id FROM identity WHERE kind = ? AND key = ?")) {
        st.setString(1, kind);
        st.setString(2, key);
        try (ResultSet rs = st.executeQuery()) {
          if (rs.next()) {
            holder = rs.getString(1);
          }
        }
      }
      if (holder != null && !holder.equals(personId)) {
        throw new StoreConflict("that " + kind + " identity is linked to someone else already");
      }
      update(conn, "INSERT OR REPLACE INTO identity (kind, key, person_id, label, detail, created_at) VALUES "
          + "(?, ?, ?, ?, ?, ?)", kind, key, personId, label, detail.encode(), at);
      audit(conn, at, "identity-linked", by, new JsonObject().put("personId", personId).put("kind", kind)
          .put("label", label));
      return new JsonObject().put("linked", true);
    };
  }

  /** {@code {kind, key, by?}}: unlinks an identity (a token revoked, a chat account let go). */
  Write unlink(JsonObject b) {
    String kind = required(b, "kind");
    String key = required(b, "key");
    String by = b.getString("by");
    long at = System.currentTimeMillis();
    return conn -> {
      int gone = update(conn, "DELETE FROM identity WHERE kind = ? AND key = ?", kind, key);
      if (gone > 0) {
        audit(conn, at, "identity-unlinked", by, new JsonObject().put("kind", kind));
      }
      return new JsonObject().put("unlinked", gone > 0);
    };
  }

  /** {@code {kind, key}} → {@code {person, identity}} (both null when no one has it). */
  Future<JsonObject> find(JsonObject b) {
    String kind = required(b, "kind");
    String key = required(b, "key");
    return readers.preparedQuery("SELECT p.person_id, p.name, p.roles, p.disabled, p.created_at, i.kind, i.label, "
            + "i.detail, i.created_at AS linked_at FROM identity i JOIN person p ON p.person_id = i.person_id "
            + "WHERE i.kind = ? AND i.key = ?").execute(Tuple.of(kind, key))
        .map(rows -> {
          if (rows.size() == 0) {
            return new JsonObject().putNull("person").putNull("identity");
          }
          Row row = rows.iterator().next();
          return new JsonObject().put("person", person(row)).put("identity", new JsonObject()
              .put("kind", row.getString("kind")).put("label", row.getString("label"))
              .put("detail", new JsonObject(row.getString("detail"))).put("createdAt", row.getLong("linked_at")));
        });
  }

  /** Everyone, with their identities' kinds and labels (never a key: a token's hash stays here). */
  Future<JsonObject> list(JsonObject b) {
    return readers.query("SELECT p.person_id, p.name, p.roles, p.disabled, p.created_at, i.kind, i.label, "
            + "i.detail, i.created_at AS linked_at FROM person p LEFT JOIN identity i ON i.person_id = p.person_id "
            + "ORDER BY p.created_at, p.person_id, i.created_at").execute()
        .map(rows -> {
          JsonArray people = new JsonArray();
          JsonObject current = null;
          for (Row row : rows) {
            if (current == null || !current.getString("personId").equals(row.getString("person_id"))) {
              current = person(row).put("identities", new JsonArray());
              people.add(current);
            }
            if (row.getString("kind") != null) {
              JsonObject detail = new JsonObject(row.getString("detail"));
              current.getJsonArray("identities").add(new JsonObject().put("kind", row.getString("kind"))
                  .put("label", row.getString("label")).put("createdAt", row.getLong("linked_at"))
                  .put("expiresAt", detail.getLong("expiresAt")));
            }
          }
          return new JsonObject().put("people", people);
        });
  }

  /** {@code {event, personId?, detail}}: one audit row (a login, a refused answer, ...). */
  Write audit(JsonObject b) {
    String event = required(b, "event");
    String personId = b.getString("personId");
    JsonObject detail = b.getJsonObject("detail", new JsonObject());
    long at = b.getLong("at", System.currentTimeMillis());
    return conn -> {
      audit(conn, at, event, personId, detail);
      return new JsonObject();
    };
  }

  /** {@code {limit?, personId?}} → the newest audit rows first. */
  Future<JsonObject> auditList(JsonObject b) {
    int limit = Math.max(1, Math.min(1000, b.getInteger("limit", 100)));
    String personId = b.getString("personId");
    String sql = "SELECT seq, at, event, person_id, detail FROM audit" + (personId == null ? "" : " WHERE person_id = ?")
        + " ORDER BY seq DESC LIMIT " + limit;
    Tuple args = personId == null ? Tuple.tuple() : Tuple.of(personId);
    return Sql.listed(readers.preparedQuery(sql).execute(args), "audit", row -> new JsonObject()
        .put("seq", row.getLong("seq")).put("at", row.getLong("at")).put("event", row.getString("event"))
        .put("personId", row.getString("person_id")).put("detail", new JsonObject(row.getString("detail"))));
  }

  private static void audit(Connection conn, long at, String event, String personId, JsonObject detail)
      throws SQLException {
    update(conn, "INSERT INTO audit (at, event, person_id, detail) VALUES (?, ?, ?, ?)", at, event, personId,
        detail.encode());
    update(conn, "DELETE FROM audit WHERE seq <= (SELECT MAX(seq) FROM audit) - " + MAX_AUDIT);
  }

  private static JsonObject person(Row row) {
    return new JsonObject().put("personId", row.getString("person_id")).put("name", row.getString("name"))
        .put("roles", new JsonArray(row.getString("roles"))).put("disabled", row.getInteger("disabled") != 0)
        .put("createdAt", row.getLong("created_at"));
  }

  private static JsonObject person(Connection conn, String id) throws SQLException {
    List<JsonObject> found = people(conn, "SELECT * FROM person WHERE person_id = ?", id);
    return found.isEmpty() ? null : found.get(0);
  }

  /** The owner made first who is not disabled, or null. */
  private static JsonObject firstOwner(Connection conn) throws SQLException {
    return people(conn, "SELECT * FROM person WHERE disabled = 0 ORDER BY created_at, person_id").stream()
        .filter(p -> p.getJsonArray("roles").contains("owner")).findFirst().orElse(null);
  }

  private static List<JsonObject> people(Connection conn, String sql, Object... args) throws SQLException {
    List<JsonObject> out = new ArrayList<>();
    try (var st = conn.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        st.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          out.add(new JsonObject().put("personId", rs.getString("person_id")).put("name", rs.getString("name"))
              .put("roles", new JsonArray(rs.getString("roles"))).put("disabled", rs.getInt("disabled") != 0)
              .put("createdAt", rs.getLong("created_at")));
        }
      }
    }
    return out;
  }
}
