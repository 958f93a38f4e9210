package io.switchboard.store;

import java.util.List;

/**
 * The schema, as an ordered list of versions. Version N's statements run once, in one transaction,
 * when the database's {@code user_version} is below N. Later issues append versions; never edit one
 * that has shipped.
 */
final class Migrations {
  private Migrations() {}

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
      List.of("ALTER TABLE permission_request ADD COLUMN answer_key TEXT"));
}
