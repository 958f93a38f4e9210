package io.switchboard.store;

import static io.switchboard.store.Sql.required;
import static io.switchboard.store.Sql.update;

import io.switchboard.store.WriteQueue.Write;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;

/** The threads' SQL: a row per thread and the surfaces attached to it (its routes); deleting one also drops its transcript. */
final class Threads {
  private final Pool readers;

  Threads(Pool readers) {
    this.readers = readers;
  }

  Write save(JsonObject b) {
    String id = required(b, "threadId");
    String agentId = required(b, "agentId");
    String workspace = required(b, "workspace");
    String title = b.getString("title");
    String session = b.getString("acpSessionId");
    String startedBy = b.getString("startedBy");
    String titleBy = b.getString("titleBy");
    Long archivedAt = b.getLong("archivedAt");
    long at = b.getLong("createdAt", System.currentTimeMillis());
    String project = b.getString("projectId");
    String branch = b.getString("branch");
    String baseRef = b.getString("baseRef");
    String baseCommit = b.getString("baseCommit");
    String worktreeState = b.getString("worktreeState");
    return conn -> {
      update(conn, """
          INSERT INTO thread (thread_id, agent_id, workspace, title, acp_session_id, created_at, started_by, title_by,
                              archived_at, project_id, branch, base_ref, base_commit, worktree_state)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (thread_id) DO UPDATE SET title = excluded.title, acp_session_id = excluded.acp_session_id,
                                                title_by = excluded.title_by, archived_at = excluded.archived_at,
                                                worktree_state = excluded.worktree_state""",
          id, agentId, workspace, title, session, at, startedBy, titleBy, archivedAt, project, branch, baseRef,
          baseCommit, worktreeState);
      return new JsonObject().put("threadId", id);
    };
  }

  /** A deleted thread: its transcript, routes and row, in one transaction; the ledger keeps its requests. */
  Write delete(JsonObject b) {
    String id = required(b, "threadId");
    return conn -> {
      int events = update(conn, "DELETE FROM transcript WHERE thread_id = ?", id);
      update(conn, "DELETE FROM thread_route WHERE thread_id = ?", id);
      update(conn, "DELETE FROM thread WHERE thread_id = ?", id);
      return new JsonObject().put("threadId", id).put("events", events);
    };
  }

  /** What a person did to a thread's work (commit, merge, discard), kept for the audit. */
  Write projectAction(JsonObject b) {
    String id = required(b, "threadId");
    String project = required(b, "projectId");
    String action = required(b, "action");
    String surface = required(b, "surface");
    String user = b.getString("user");
    JsonObject detail = b.getJsonObject("detail", new JsonObject());
    long at = b.getLong("at", System.currentTimeMillis());
    return conn -> {
      update(conn, """
          INSERT INTO project_action (at, thread_id, project_id, action, surface, user_id, detail)
          VALUES (?, ?, ?, ?, ?, ?, ?)""", at, id, project, action, surface, user, detail.encode());
      return new JsonObject().put("threadId", id);
    };
  }

  Future<JsonObject> projectActions(JsonObject body) {
    String id = body == null ? null : body.getString("threadId");
    if (id == null) {
      throw new IllegalArgumentException("threadId is missing");
    }
    return Sql.listed(readers.preparedQuery("SELECT * FROM project_action WHERE thread_id = ? ORDER BY id")
        .execute(io.vertx.sqlclient.Tuple.of(id)), "actions", row -> new JsonObject()
        .put("at", row.getLong("at")).put("action", row.getString("action"))
        .put("projectId", row.getString("project_id")).put("surface", row.getString("surface"))
        .put("user", row.getString("user_id")).put("detail", new JsonObject(row.getString("detail"))));
  }

  Write route(JsonObject b) {
    String id = required(b, "threadId");
    String surface = required(b, "surface");
    boolean attached = b.getBoolean("attached", true);
    long at = b.getLong("at", System.currentTimeMillis());
    return conn -> {
      if (attached) {
        update(conn, "INSERT OR IGNORE INTO thread_route (thread_id, surface, attached_at) VALUES (?, ?, ?)",
            id, surface, at);
      } else {
        update(conn, "DELETE FROM thread_route WHERE thread_id = ? AND surface = ?", id, surface);
      }
      return new JsonObject().put("threadId", id);
    };
  }

  Future<JsonObject> list(JsonObject body) {
    return Sql.listed(readers.query("""
            SELECT t.*, (SELECT MAX(seq) FROM transcript x WHERE x.thread_id = t.thread_id) AS last_seq,
                   (SELECT json_group_array(surface) FROM thread_route r WHERE r.thread_id = t.thread_id) AS routes
              FROM thread t ORDER BY t.created_at""").execute(), "threads", row -> new JsonObject()
        .put("threadId", row.getString("thread_id"))
        .put("agentId", row.getString("agent_id"))
        .put("workspace", row.getString("workspace"))
        .put("title", row.getString("title"))
        .put("acpSessionId", row.getString("acp_session_id"))
        .put("startedBy", row.getString("started_by"))
        .put("titleBy", row.getString("title_by"))
        .put("archivedAt", row.getLong("archived_at"))
        .put("createdAt", row.getLong("created_at"))
        .put("projectId", row.getString("project_id"))
        .put("branch", row.getString("branch"))
        .put("baseRef", row.getString("base_ref"))
        .put("baseCommit", row.getString("base_commit"))
        .put("worktreeState", row.getString("worktree_state"))
        .put("lastSeq", row.getLong("last_seq") == null ? 0L : row.getLong("last_seq"))
        .put("routes", new JsonArray(row.getString("routes"))));
  }
}
