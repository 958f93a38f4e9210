package io.switchboard.store;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schema, as an ordered list of versions. Version N's statements run once, in one transaction,
 * when the database's {@code user_version} is below N. Later issues append versions; never edit one
 * that has shipped.
 */
final class Migrations {
  private static final Logger log = LoggerFactory.getLogger(Migrations.class);

  private Migrations() {}

  /**
   * Brings the writer connection's database up to the newest version, each version in its own
   * transaction; the version it is at. A database from a newer release is refused (and the
   * connection closed) rather than written by code that does not know its schema.
   */
  static int migrate(Connection conn, Path databaseFile) throws SQLException {
    int current;
    try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("PRAGMA user_version")) {
      current = rs.getInt(1);
    }
    int target = VERSIONS.size();
    if (current > target) {
      conn.close();
      throw new SQLException("the database " + databaseFile + " has schema version " + current
          + ", newer than this Switchboard knows (" + target + "); use a newer release");
    }
    try (Statement st = conn.createStatement()) {
      for (int v = current + 1; v <= target; v++) {
        for (String sql : VERSIONS.get(v - 1)) {
          st.execute(sql);
        }
        st.execute("PRAGMA user_version = " + v);
        conn.commit();
        log.info("database migrated to schema version {}", v);
      }
    } catch (SQLException e) {
      conn.rollback();
      throw e;
    }
    return target;
  }

  static final List<List<String>> VERSIONS = List.of(
      // 1: the permission ledger (one row per request, its end state) and its audit events
      List.of(
          """
          CREATE TABLE meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
          )""",
          """
          CREATE TABLE permission_request (
            request_id       TEXT PRIMARY KEY,
            thread_id        TEXT NOT NULL,
            session_id       TEXT NOT NULL,
            agent_id         TEXT,
            tool_call        TEXT NOT NULL,
            options          TEXT NOT NULL,
            eligible         TEXT NOT NULL,
            state            TEXT NOT NULL CHECK (state IN ('pending', 'selected', 'cancelled')),
            option_id        TEXT,
            option_kind      TEXT,
            reason           TEXT,
            answered_surface TEXT,
            answered_user    TEXT,
            created_at       INTEGER NOT NULL,
            ended_at         INTEGER
          )""",
          "CREATE INDEX permission_request_by_state ON permission_request (state, created_at)",
          "CREATE INDEX permission_request_by_thread ON permission_request (thread_id, created_at)",
          """
          CREATE TABLE permission_event (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            request_id TEXT NOT NULL,
            at         INTEGER NOT NULL,
            event      TEXT NOT NULL,
            surface    TEXT,
            user_name  TEXT,
            detail     TEXT
          )""",
          "CREATE INDEX permission_event_by_request ON permission_event (request_id, id)"),
      // 2: threads, the surfaces (routes) attached to them, and their transcripts
      List.of(
          """
          CREATE TABLE thread (
            thread_id      TEXT PRIMARY KEY,
            agent_id       TEXT NOT NULL,
            workspace      TEXT NOT NULL,
            title          TEXT,
            acp_session_id TEXT,
            created_at     INTEGER NOT NULL
          )""",
          """
          CREATE TABLE thread_route (
            thread_id   TEXT NOT NULL,
            surface     TEXT NOT NULL,
            attached_at INTEGER NOT NULL,
            PRIMARY KEY (thread_id, surface)
          )""",
          """
          CREATE TABLE transcript (
            thread_id TEXT NOT NULL,
            seq       INTEGER NOT NULL,
            at        INTEGER NOT NULL,
            event     TEXT NOT NULL,
            PRIMARY KEY (thread_id, seq)
          )"""),
      // 3: the outbox of durable outputs for plugins, and who started each thread
      List.of(
          """
          CREATE TABLE outbox (
            seq          INTEGER PRIMARY KEY AUTOINCREMENT,
            output_id    TEXT NOT NULL UNIQUE,
            plugin_id    TEXT NOT NULL,
            chat_id      TEXT NOT NULL,
            kind         TEXT NOT NULL,
            request_id   TEXT,
            body         TEXT NOT NULL,
            state        TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'superseded')),
            created_at   INTEGER NOT NULL,
            delivered_at INTEGER
          )""",
          "CREATE INDEX outbox_pending ON outbox (plugin_id, state, seq)",
          "CREATE INDEX outbox_by_request ON outbox (request_id)",
          "ALTER TABLE thread ADD COLUMN started_by TEXT"),
      // 4: tamper evidence: a digest of what each request asked, a hash chain over the audit events
      List.of(
          "ALTER TABLE permission_request ADD COLUMN digest TEXT",
          "ALTER TABLE permission_event ADD COLUMN hash TEXT"),
      // 5: browser sessions, kept across restarts by the SHA-256 of their cookie (never the cookie)
      List.of(
          """
          CREATE TABLE web_session (
            hash       TEXT PRIMARY KEY,
            created_at INTEGER NOT NULL
          )"""),
      // 6: who set a thread's title (null: its first message; 'agent'; 'person', whom an agent never
      // overrides), and when it was archived (hidden from the list until restored or prompted)
      List.of(
          "ALTER TABLE thread ADD COLUMN title_by TEXT",
          "ALTER TABLE thread ADD COLUMN archived_at INTEGER"),
      // 7: the chat messages each plugin has turned into prompts, so a message the platform delivers
      // again (after a plugin crash) never starts a second turn
      List.of(
          """
          CREATE TABLE plugin_inbound (
            plugin_id  TEXT NOT NULL,
            chat_id    TEXT NOT NULL,
            message_id TEXT NOT NULL,
            seen_at    INTEGER NOT NULL,
            PRIMARY KEY (plugin_id, chat_id, message_id)
          ) WITHOUT ROWID""",
          "CREATE INDEX plugin_inbound_age ON plugin_inbound (seen_at)"),
      // 8: whether each plugin chat is a direct message or a group, as its messages said: a restarted
      // gateway treats a group as a group before anyone there writes again
      List.of(
          """
          CREATE TABLE plugin_chat (
            plugin_id TEXT NOT NULL,
            chat_id   TEXT NOT NULL,
            scope     TEXT NOT NULL CHECK (scope IN ('dm', 'group')),
            PRIMARY KEY (plugin_id, chat_id)
          ) WITHOUT ROWID"""),
      // 9: the key a surface's answer carried (cluster mode): the same answer sent again (its reply lost
      // on the way) learns that it won, not that someone else answered
      List.of("ALTER TABLE permission_request ADD COLUMN answer_key TEXT"),
      // 10: projects: the project a thread works in, its worktree's branch and what it started from
      // (or 'discarded'), and the audit of what people did to a thread's work (commit, merge, discard)
      List.of(
          "ALTER TABLE thread ADD COLUMN project_id TEXT",
          "ALTER TABLE thread ADD COLUMN branch TEXT",
          "ALTER TABLE thread ADD COLUMN base_ref TEXT",
          "ALTER TABLE thread ADD COLUMN base_commit TEXT",
          "ALTER TABLE thread ADD COLUMN worktree_state TEXT",
          """
          CREATE TABLE project_action (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            at         INTEGER NOT NULL,
            thread_id  TEXT NOT NULL,
            project_id TEXT NOT NULL,
            action     TEXT NOT NULL,
            surface    TEXT NOT NULL,
            user_id    TEXT,
            detail     TEXT NOT NULL
          )""",
          "CREATE INDEX project_action_thread ON project_action (thread_id, id)"),
      // 11: attention (docs/operations.md, "Attention"): a request may end 'expired' (its own state, never
      // a person's refusal; SQLite cannot change a CHECK, so the table is made again), keeps its project and
      // its attention plan beside it; the browsers' push subscriptions
      List.of(
          """
          CREATE TABLE permission_request_v11 (
            request_id       TEXT PRIMARY KEY,
            thread_id        TEXT NOT NULL,
            session_id       TEXT NOT NULL,
            agent_id         TEXT,
            tool_call        TEXT NOT NULL,
            options          TEXT NOT NULL,
            eligible         TEXT NOT NULL,
            state            TEXT NOT NULL CHECK (state IN ('pending', 'selected', 'cancelled', 'expired')),
            option_id        TEXT,
            option_kind      TEXT,
            reason           TEXT,
            answered_surface TEXT,
            answered_user    TEXT,
            created_at       INTEGER NOT NULL,
            ended_at         INTEGER,
            digest           TEXT,
            answer_key       TEXT,
            project_id       TEXT,
            attention        TEXT
          )""",
          """
          INSERT INTO permission_request_v11 (request_id, thread_id, session_id, agent_id, tool_call, options,
            eligible, state, option_id, option_kind, reason, answered_surface, answered_user, created_at, ended_at,
            digest, answer_key)
          SELECT request_id, thread_id, session_id, agent_id, tool_call, options, eligible, state, option_id,
            option_kind, reason, answered_surface, answered_user, created_at, ended_at, digest, answer_key
            FROM permission_request""",
          "DROP TABLE permission_request",
          "ALTER TABLE permission_request_v11 RENAME TO permission_request",
          "CREATE INDEX permission_request_by_state ON permission_request (state, created_at)",
          "CREATE INDEX permission_request_by_thread ON permission_request (thread_id, created_at)",
          """
          CREATE TABLE push_subscription (
            subscription_id TEXT PRIMARY KEY,
            endpoint        TEXT NOT NULL UNIQUE,
            p256dh          TEXT NOT NULL,
            auth            TEXT NOT NULL,
            details         INTEGER NOT NULL,
            created_at      INTEGER NOT NULL,
            user_agent      TEXT
          )"""),
      // 12: rules that answer for the person (docs/architecture.md, "Rules"): append-only, one row per
      // version of a rule (a revocation is a new version); what a rule decided is on the ledger's rows
      List.of(
          """
          CREATE TABLE permission_rule (
            rule_id    TEXT NOT NULL,
            version    INTEGER NOT NULL,
            effect     TEXT NOT NULL CHECK (effect IN ('allow', 'ask', 'deny')),
            match      TEXT NOT NULL,
            scope      TEXT NOT NULL,
            source     TEXT NOT NULL,
            created_by TEXT,
            created_at INTEGER NOT NULL,
            expires_at INTEGER,
            revoked_at INTEGER,
            revoked_by TEXT,
            note       TEXT,
            PRIMARY KEY (rule_id, version)
          )""",
          "CREATE INDEX permission_request_by_decider ON permission_request (answered_surface, answered_user)"),
      // 13: questions (ACP elicitation) are requests of the permission ledger; an answered one keeps its
      // answer (the form's content without the fields its schema marks secret), vouched for by the chain
      List.of("ALTER TABLE permission_request ADD COLUMN answer TEXT"),
      // 14: what agents cost as they report it (ACP usage_update.cost): each thread's last session total,
      // and per day and agent the sum of what each report added (DOUBLE: JDBC reads a REAL as a float)
      List.of(
          """
          CREATE TABLE usage_thread (
            thread_id     TEXT PRIMARY KEY,
            agent_id      TEXT NOT NULL,
            currency      TEXT NOT NULL,
            session_total DOUBLE NOT NULL,
            cost_total    DOUBLE NOT NULL,
            updated_at    INTEGER NOT NULL
          )""",
          """
          CREATE TABLE usage_day (
            day      TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            currency TEXT NOT NULL,
            amount   DOUBLE NOT NULL,
            PRIMARY KEY (day, agent_id, currency)
          )"""),
      // 15: what a browser session was opened from (its User-Agent and client address), so a person
      // listing their logins can tell them apart and end one
      List.of(
          "ALTER TABLE web_session ADD COLUMN user_agent TEXT",
          "ALTER TABLE web_session ADD COLUMN address TEXT"),
      // 16: people instead of one token: a person, their roles (presets), their identities (one
      // identity names one person), and the audit of logins, links, role changes and refused answers
      List.of(
          """
          CREATE TABLE person (
            person_id  TEXT PRIMARY KEY,
            name       TEXT NOT NULL,
            roles      TEXT NOT NULL,
            disabled   INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL
          )""",
          """
          CREATE TABLE identity (
            kind       TEXT NOT NULL,
            key        TEXT NOT NULL,
            person_id  TEXT NOT NULL REFERENCES person (person_id),
            label      TEXT NOT NULL DEFAULT '',
            detail     TEXT NOT NULL DEFAULT '{}',
            created_at INTEGER NOT NULL,
            PRIMARY KEY (kind, key)
          )""",
          "CREATE INDEX identity_person ON identity (person_id)",
          // who answered, as the person a surface named (personId, name, identity, strength): vouched for by the chain
          "ALTER TABLE permission_request ADD COLUMN answered_person TEXT",
          """
          CREATE TABLE audit (
            seq       INTEGER PRIMARY KEY AUTOINCREMENT,
            at        INTEGER NOT NULL,
            event     TEXT NOT NULL,
            person_id TEXT,
            detail    TEXT NOT NULL
          )"""),
      // 17: a browser session names the person who signed in, by which identity and how strongly
      // (null in a session from before: the bootstrap owner's, signed in with the token)
      List.of(
          "ALTER TABLE web_session ADD COLUMN person_id TEXT",
          "ALTER TABLE web_session ADD COLUMN identity TEXT",
          "ALTER TABLE web_session ADD COLUMN strength TEXT"));
}
