package io.switchboard.store;

import io.switchboard.bus.Addresses;
import io.switchboard.permission.Card;
import io.switchboard.bus.NodeScope;
import io.switchboard.bus.ErrorCode;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.jdbcclient.JDBCConnectOptions;
import io.vertx.jdbcclient.JDBCPool;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Tuple;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store room: the only owner of the SQLite file. It runs the migrations at start, then serves
 * ledger writes and reads over the event bus.
 *
 * <p>Writes go through one connection on one worker thread (SQLite has one writer; several fail
 * with SQLITE_BUSY under load). They queue up and commit in groups: everything queued while the
 * previous batch committed goes into the next transaction. A batch that fails is rolled back and
 * retried one write at a time, so one bad write cannot sink the others. Reads use a small pool of
 * read-only connections (WAL lets them run beside the writer). No JDBC call runs on an event loop.
 */
public final class StoreRoom extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(StoreRoom.class);
  private static final int MAX_BATCH = 512;

  private final Path databaseFile;
  private WorkerExecutor writer;
  private Connection writeConnection;
  private Pool readers;
  private final ArrayDeque<QueuedWrite> queue = new ArrayDeque<>();
  private boolean flushing;
  /** The newest audit event's hash; null after a rollback (read again from the database). Writer thread only. */
  private String chainHead;
  /** The writer connection's synchronous level (used on the writer thread only). */
  private volatile boolean synchronousFull = true;
  private Promise<Void> drained;

  /** One write: the statements it runs inside its batch's transaction, on the writer thread. */
  private interface Write {
    JsonObject run(Connection conn) throws SQLException;
  }

  /** {@code durable}: it must survive a power loss once committed (ledger, outbox, threads); transcripts need not. */
  private record QueuedWrite(Write write, Message<JsonObject> message, boolean durable) {}

  /** What one write came to: a reply body, or the reason it failed. */
  private record Done(JsonObject reply, Throwable failure) {}

  public StoreRoom(Path databaseFile) {
    this.databaseFile = databaseFile;
  }

  /** Where this room serves its commands (a cluster node's own addresses; see NodeScope). */
  private NodeScope scope = NodeScope.SINGLE;

  @Override
  public Future<?> start() {
    scope = NodeScope.of(config());
    writer = vertx.createSharedWorkerExecutor("switchboard-store-writer-" + deploymentID(), 1);
    return writer.executeBlocking(this::openAndMigrate).onSuccess(version -> {
      log.info("database {} ready at schema version {}", databaseFile, version);
      readers = JDBCPool.pool(vertx,
          new JDBCConnectOptions().setJdbcUrl("jdbc:sqlite:" + databaseFile + "?open_mode=1&busy_timeout=5000"),
          new PoolOptions().setMaxSize(2).setName("switchboard-store-readers-" + deploymentID()));
      var bus = vertx.eventBus();
      scope.<JsonObject>serve(bus, Addresses.STORE_LEDGER_APPEND, m -> enqueue(m, this::append));
      scope.<JsonObject>serve(bus, Addresses.STORE_LEDGER_END, m -> enqueue(m, this::end));
      scope.<JsonObject>serve(bus, Addresses.STORE_LEDGER_NOTE, m -> enqueue(m, this::note));
      scope.<JsonObject>serve(bus, Addresses.STORE_LEDGER_VOID_PENDING, m -> enqueue(m, this::voidPending));
      scope.<JsonObject>serve(bus, Addresses.STORE_HEALTH, m -> enqueue(m, this::health));
      scope.<JsonObject>serve(bus, Addresses.STORE_LEDGER_GET, this::get);
      scope.<JsonObject>serve(bus, Addresses.STORE_LEDGER_LIST, this::list);
      scope.<JsonObject>serve(bus, Addresses.STORE_THREAD_SAVE, m -> enqueue(m, this::saveThread));
      scope.<JsonObject>serve(bus, Addresses.STORE_THREAD_ROUTE, m -> enqueue(m, this::route));
      scope.<JsonObject>serve(bus, Addresses.STORE_THREAD_DELETE, m -> enqueue(m, this::deleteThread));
      scope.<JsonObject>serve(bus, Addresses.STORE_TRANSCRIPT_APPEND, m -> enqueue(m, this::appendTranscript, false));
      scope.<JsonObject>serve(bus, Addresses.STORE_THREAD_LIST, this::listThreads);
      scope.<JsonObject>serve(bus, Addresses.STORE_WEB_SESSION_SAVE, m -> enqueue(m, this::saveWebSession));
      scope.<JsonObject>serve(bus, Addresses.STORE_WEB_SESSION_FORGET, m -> enqueue(m, this::forgetWebSession));
      scope.<JsonObject>serve(bus, Addresses.STORE_WEB_SESSION_LIST, this::listWebSessions);
      scope.<JsonObject>serve(bus, Addresses.STORE_INBOUND_SEEN, this::inboundSeen);
      scope.<JsonObject>serve(bus, Addresses.STORE_INBOUND_MARK, m -> enqueue(m, this::markInbound));
      scope.<JsonObject>serve(bus, Addresses.STORE_CHAT_SCOPE_SAVE, m -> enqueue(m, this::saveChatScope));
      scope.<JsonObject>serve(bus, Addresses.STORE_CHAT_SCOPE_LIST, this::listChatScopes);
      scope.<JsonObject>serve(bus, Addresses.STORE_TRANSCRIPT_READ, this::readTranscript);
      scope.<JsonObject>serve(bus, Addresses.STORE_OUTBOX_ENQUEUE, m -> enqueue(m, this::enqueueOutput));
      scope.<JsonObject>serve(bus, Addresses.STORE_OUTBOX_ACK, m -> enqueue(m, this::ack));
      scope.<JsonObject>serve(bus, Addresses.STORE_OUTBOX_REOPEN, m -> enqueue(m, this::reopenCards));
      scope.<JsonObject>serve(bus, Addresses.STORE_OUTBOX_PENDING, this::pendingOutputs);
      scope.<JsonObject>serve(bus, Addresses.STORE_OUTBOX_STATS, this::outboxStats);
    });
  }

  @Override
  public Future<?> stop() {
    // Writes already queued are committed before the file is closed.
    Future<Void> idle;
    if (queue.isEmpty() && !flushing) {
      idle = Future.succeededFuture();
    } else {
      drained = Promise.promise();
      idle = drained.future();
    }
    return idle
        .compose(v -> readers == null ? Future.succeededFuture() : readers.close())
        .compose(v -> writer.executeBlocking(() -> {
          if (writeConnection != null) {
            writeConnection.close();
          }
          return null;
        }));
  }

  private Integer openAndMigrate() throws SQLException, java.io.IOException {
    java.nio.file.Files.createDirectories(databaseFile.toAbsolutePath().getParent());
    writeConnection = StatementCache.wrap(DriverManager.getConnection("jdbc:sqlite:" + databaseFile
        + "?journal_mode=WAL&synchronous=FULL&busy_timeout=5000&transaction_mode=IMMEDIATE&foreign_keys=true"
        // No write reads a generated key; with this on, the driver runs a query after every INSERT.
        + "&jdbc.get_generated_keys=false"));
    writeConnection.setAutoCommit(false);
    int current;
    try (Statement st = writeConnection.createStatement(); ResultSet rs = st.executeQuery("PRAGMA user_version")) {
      current = rs.getInt(1);
    }
    int target = Migrations.VERSIONS.size();
    if (current > target) {
      writeConnection.close();
      throw new SQLException("the database " + databaseFile + " has schema version " + current
          + ", newer than this Switchboard knows (" + target + "); use a newer release");
    }
    try (Statement st = writeConnection.createStatement()) {
      for (int v = current + 1; v <= target; v++) {
        for (String sql : Migrations.VERSIONS.get(v - 1)) {
          st.execute(sql);
        }
        st.execute("PRAGMA user_version = " + v);
        writeConnection.commit();
        log.info("database migrated to schema version {}", v);
      }
    } catch (SQLException e) {
      rollback();
      throw e;
    }
    return target;
  }

  // ---- the group-commit writer ----

  private void enqueue(Message<JsonObject> message, Function<JsonObject, Write> parse) {
    enqueue(message, parse, true);
  }

  private void enqueue(Message<JsonObject> message, Function<JsonObject, Write> parse, boolean durable) {
    Write write;
    try {
      write = parse.apply(message.body() == null ? new JsonObject() : message.body());
    } catch (RuntimeException e) {
      ErrorCode.BAD_REQUEST.fail(message, "bad store write on " + message.address() + ": " + e.getMessage());
      return;
    }
    queue.add(new QueuedWrite(write, message, durable));
    flush();
  }

  private void flush() {
    if (flushing) {
      return;
    }
    if (queue.isEmpty()) {
      if (drained != null) {
        drained.tryComplete();
      }
      return;
    }
    flushing = true;
    List<QueuedWrite> batch = new ArrayList<>();
    while (!queue.isEmpty() && batch.size() < MAX_BATCH) {
      batch.add(queue.poll());
    }
    writer.executeBlocking(() -> commit(batch)).onComplete(done -> {
      if (done.succeeded()) {
        for (int i = 0; i < batch.size(); i++) {
          settle(batch.get(i), done.result().get(i));
        }
      } else {
        for (QueuedWrite q : batch) {
          settle(q, new Done(null, done.cause())); // also an Error (out of memory): each write still gets its answer
        }
      }
      flushing = false;
      flush();
    });
  }

  /** Runs on the writer thread: the whole batch in one transaction, or each write alone if that fails. */
  private List<Done> commit(List<QueuedWrite> batch) throws SQLException {
    List<Done> results = new ArrayList<>(batch.size());
    syncFully(batch.stream().anyMatch(QueuedWrite::durable));
    try {
      for (QueuedWrite q : batch) {
        results.add(new Done(q.write().run(writeConnection), null));
      }
      writeConnection.commit();
      return results;
    } catch (SQLException | RuntimeException batchFailure) {
      rollback();
      if (batch.size() == 1) {
        return List.of(new Done(null, batchFailure));
      }
    } catch (Error fatal) {
      // Out of memory part-way: what ran must not stay open for the next batch to commit.
      rollbackAfter(fatal);
      throw fatal;
    }
    results.clear();
    for (QueuedWrite q : batch) {
      try {
        JsonObject reply = q.write().run(writeConnection);
        writeConnection.commit();
        results.add(new Done(reply, null));
      } catch (SQLException | RuntimeException e) {
        rollback();
        results.add(new Done(null, e));
      } catch (Error fatal) {
        rollbackAfter(fatal);
        throw fatal;
      }
    }
    return results;
  }

  /**
   * A batch with a ledger, outbox or thread write commits at {@code synchronous=FULL} (the WAL is
   * synced at its commit: an end the agent acted on survives a power loss); one of transcript rows
   * only at NORMAL (a power loss may cost the last lines of a transcript, never a permission).
   */
  private void syncFully(boolean full) throws SQLException {
    if (full != synchronousFull) {
      // Only between transactions: the driver opens the next one at each commit, so step out of it.
      writeConnection.setAutoCommit(true);
      try (Statement st = writeConnection.createStatement()) {
        st.execute("PRAGMA synchronous = " + (full ? "FULL" : "NORMAL"));
      } finally {
        writeConnection.setAutoCommit(false);
      }
      synchronousFull = full;
    }
  }

  /** Rolls the open transaction back; the chain head it may have moved is read again. */
  private void rollback() throws SQLException {
    chainHead = null;
    writeConnection.rollback();
  }

  private void rollbackAfter(Error fatal) {
    try {
      rollback();
    } catch (SQLException | RuntimeException e) {
      fatal.addSuppressed(e);
    }
  }

  private void settle(QueuedWrite q, Done done) {
    if (done.failure() == null) {
      Object touched = done.reply().remove(OUTBOX_TOUCHED);
      if (touched instanceof JsonArray plugins && !plugins.isEmpty()) {
        vertx.eventBus().publish(Addresses.OUTBOX_READY, new JsonObject().put("pluginIds", plugins));
      }
      q.message().reply(done.reply());
    } else if (done.failure() instanceof StoreConflict conflict) {
      log.error("ledger write on {} refused: {}", q.message().address(), conflict.getMessage());
      ErrorCode.CONFLICT.fail(q.message(), conflict.getMessage());
    } else {
      log.error("ledger write on {} failed", q.message().address(), done.failure());
      ErrorCode.STORE_FAILED.fail(q.message(), "the database write failed: " + done.failure().getMessage());
    }
  }

  /** A write that would break the ledger's rules (e.g. ending a request that is not pending). */
  private static final class StoreConflict extends RuntimeException {
    StoreConflict(String message) {
      super(message, null, false, false);
    }
  }

  // ---- ledger writes (parsed on the event loop, run on the writer thread) ----

  private Write append(JsonObject b) {
    String id = required(b, "requestId");
    String threadId = required(b, "threadId");
    String sessionId = required(b, "sessionId");
    String agentId = b.getString("agentId");
    String toolCall = b.getJsonObject("toolCall", new JsonObject()).encode();
    String options = b.getJsonArray("options", new JsonArray()).encode();
    String eligible = b.getJsonArray("eligible", new JsonArray()).encode();
    long at = b.getLong("createdAt", System.currentTimeMillis());
    return conn -> {
      String digest = LedgerChain.digest(toolCall, options);
      update(conn, """
          INSERT INTO permission_request
            (request_id, thread_id, session_id, agent_id, tool_call, options, eligible, state, created_at, digest)
          VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)""", id, threadId, sessionId, agentId, toolCall, options,
          eligible, at, digest);
      insertEvent(conn, id, at, "registered", null, null, null, digest);
      // The card for every IM surface is durable in the same transaction as the ledger row.
      JsonObject card = Card.of(b).toOutboxJson();
      JsonArray touched = new JsonArray();
      for (Object surface : new JsonArray(eligible)) {
        String[] im = Outbox.imSurface((String) surface);
        if (im != null) {
          Outbox.insert(conn, im[0], im[1], "card", id, card, at);
          touched.add(im[0]);
        }
      }
      return new JsonObject().put("requestId", id).put(OUTBOX_TOUCHED, touched);
    };
  }

  private Write end(JsonObject b) {
    String id = required(b, "requestId");
    String state = required(b, "state");
    if (!state.equals("selected") && !state.equals("cancelled")) {
      throw new IllegalArgumentException("state must be selected or cancelled, got " + state);
    }
    long at = b.getLong("endedAt", System.currentTimeMillis());
    String optionId = b.getString("optionId");
    String reason = b.getString("reason");
    String surface = b.getString("surface");
    String user = b.getString("user");
    String optionKind = b.getString("optionKind");
    String answerKey = b.getString("answerKey");
    JsonObject outcome = b.getValue("outcome") instanceof JsonObject o ? o
        : new JsonObject().put("outcome", state).put("optionId", optionId).put("reason", reason);
    return conn -> {
      int changed = update(conn, """
          UPDATE permission_request
             SET state = ?, option_id = ?, option_kind = ?, reason = ?,
                 answered_surface = ?, answered_user = ?, ended_at = ?, answer_key = ?
           WHERE request_id = ? AND state = 'pending'""", state, optionId, optionKind, reason, surface, user, at,
          answerKey, id);
      if (changed != 1) {
        throw new StoreConflict("request " + id + " is not pending in the ledger; refusing to end it twice");
      }
      insertEvent(conn, id, at, state, surface, user, state.equals("selected") ? optionId : reason,
          LedgerChain.endState(state, optionId, optionKind, reason, surface, user, at));
      // Every IM card of the request is superseded by its end state, in the same transaction.
      JsonArray touched = Outbox.supersede(conn, id, endBody(id, outcome, at), at);
      return new JsonObject().put("requestId", id).put(OUTBOX_TOUCHED, touched);
    };
  }

  private Write note(JsonObject b) {
    String id = required(b, "requestId");
    String event = required(b, "event");
    long at = b.getLong("at", System.currentTimeMillis());
    String surface = b.getString("surface");
    String user = b.getString("user");
    String detail = b.getString("detail");
    return conn -> {
      insertEvent(conn, id, at, event, surface, user, detail, null);
      return new JsonObject().put("requestId", id);
    };
  }

  /** Every request still pending was left by a process that is gone: end it with the given reason. */
  private Write voidPending(JsonObject b) {
    String reason = required(b, "reason");
    long at = b.getLong("at", System.currentTimeMillis());
    return conn -> {
      JsonArray voided = new JsonArray();
      JsonArray touched = new JsonArray();
      try (PreparedStatement select = conn.prepareStatement(
          "SELECT * FROM permission_request WHERE state = 'pending' ORDER BY created_at");
           ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          voided.add(LedgerRows.toJson(rs));
        }
      }
      for (Object o : voided) {
        JsonObject request = (JsonObject) o;
        String id = request.getString("requestId");
        update(conn, "UPDATE permission_request SET state = 'cancelled', reason = ?, ended_at = ? "
            + "WHERE request_id = ? AND state = 'pending'", reason, at, id);
        insertEvent(conn, id, at, "cancelled", null, null, reason,
            LedgerChain.endState("cancelled", null, null, reason, null, null, at));
        JsonObject outcome = new JsonObject().put("outcome", "cancelled").put("reason", reason);
        request.put("state", "cancelled").put("endedAt", at).put("outcome", outcome);
        touched.addAll(Outbox.supersede(conn, id, endBody(id, outcome, at), at));
      }
      return new JsonObject().put("voided", voided).put(OUTBOX_TOUCHED, touched);
    };
  }

  private Write health(JsonObject b) {
    String now = Long.toString(System.currentTimeMillis());
    return conn -> {
      update(conn, "INSERT INTO meta (key, value) VALUES ('last_health_check', ?) "
          + "ON CONFLICT (key) DO UPDATE SET value = excluded.value", now);
      return new JsonObject().put("writable", true);
    };
  }

  /** Appends an audit event, chained to the one before (LedgerChain); writer thread only. */
  private void insertEvent(Connection conn, String id, long at, String event, String surface, String user,
                           String detail, String vouches) throws SQLException {
    if (chainHead == null) {
      chainHead = LedgerChain.head(conn);
    }
    String hash = LedgerChain.link(chainHead, id, at, event, surface, user, detail, vouches);
    update(conn, "INSERT INTO permission_event (request_id, at, event, surface, user_name, detail, hash) "
        + "VALUES (?, ?, ?, ?, ?, ?, ?)", id, at, event, surface, user, detail, hash);
    chainHead = hash;
  }

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

  private static JsonObject endBody(String requestId, JsonObject outcome, long at) {
    return new JsonObject().put("requestId", requestId).put("outcome", outcome).put("endedAt", at);
  }

  // ---- the outbox ----

  /** A reply field naming the plugins whose outbox a write added to; stripped before the reply. */
  private static final String OUTBOX_TOUCHED = "_outboxTouched";
  private static final int PRUNE_EVERY = 500;
  private long acknowledgements;

  private Write enqueueOutput(JsonObject b) {
    String pluginId = required(b, "pluginId");
    String chatId = required(b, "chatId");
    String kind = required(b, "kind");
    if (!(b.getValue("body") instanceof JsonObject body)) {
      throw new IllegalArgumentException("body must be an object");
    }
    String requestId = b.getString("requestId");
    long at = System.currentTimeMillis();
    return conn -> Outbox.insert(conn, pluginId, chatId, kind, requestId, body, at)
        .put(OUTBOX_TOUCHED, new JsonArray().add(pluginId));
  }

  private Write reopenCards(JsonObject b) {
    String pluginId = required(b, "pluginId");
    return conn -> {
      int reopened = Outbox.reopenCards(conn, pluginId);
      JsonObject reply = new JsonObject().put("reopened", reopened);
      return reopened == 0 ? reply : reply.put(OUTBOX_TOUCHED, new JsonArray().add(pluginId));
    };
  }

  private Write ack(JsonObject b) {
    String pluginId = required(b, "pluginId");
    if (!(b.getValue("outputIds") instanceof JsonArray ids)) {
      throw new IllegalArgumentException("outputIds must be an array");
    }
    long at = System.currentTimeMillis();
    // Pruning scans the plugin's finished outputs: do it now and then, not on every acknowledgement.
    boolean prune = ++acknowledgements % PRUNE_EVERY == 0;
    return conn -> {
      int acked = Outbox.ack(conn, pluginId, ids, at);
      if (prune) {
        Outbox.prune(conn, pluginId, at);
      }
      return new JsonObject().put("acked", acked);
    };
  }

  private void pendingOutputs(Message<JsonObject> m) {
    JsonObject b = m.body() == null ? new JsonObject() : m.body();
    String pluginId = b.getString("pluginId");
    int limit = b.getValue("limit") instanceof Integer i ? i : 100;
    if (pluginId == null || limit < 1 || limit > 1000) {
      ErrorCode.BAD_REQUEST.fail(m, "pluginId is missing or limit is not 1..1000");
      return;
    }
    readers.preparedQuery("SELECT * FROM outbox WHERE plugin_id = ? AND state = 'pending' ORDER BY seq LIMIT ?")
        .execute(Tuple.of(pluginId, limit))
        .onSuccess(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(row -> out.add(new JsonObject().put("seq", row.getLong("seq"))
              .put("outputId", row.getString("output_id")).put("pluginId", row.getString("plugin_id"))
              .put("chatId", row.getString("chat_id")).put("kind", row.getString("kind"))
              .put("requestId", row.getString("request_id")).put("body", new JsonObject(row.getString("body")))
              .put("createdAt", row.getLong("created_at"))));
          m.reply(new JsonObject().put("outputs", out));
        })
        .onFailure(replyFailure(m));
  }

  /** Per plugin: outputs waiting for an acknowledgement, and when the oldest was written. */
  private void outboxStats(Message<JsonObject> m) {
    readers.query("SELECT plugin_id, COUNT(*) AS pending, MIN(created_at) AS oldest FROM outbox "
            + "WHERE state = 'pending' GROUP BY plugin_id").execute()
        .onSuccess(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(row -> out.add(new JsonObject().put("pluginId", row.getString("plugin_id"))
              .put("pending", row.getLong("pending")).put("oldestCreatedAt", row.getLong("oldest"))));
          m.reply(new JsonObject().put("plugins", out));
        })
        .onFailure(replyFailure(m));
  }

  // ---- threads and transcripts ----

  /** Transcript events kept per thread; older ones are pruned as new ones arrive. */
  static final int TRANSCRIPT_RETENTION = 10_000;

  private Write saveThread(JsonObject b) {
    String id = required(b, "threadId");
    String agentId = required(b, "agentId");
    String workspace = required(b, "workspace");
    String title = b.getString("title");
    String session = b.getString("acpSessionId");
    String startedBy = b.getString("startedBy");
    String titleBy = b.getString("titleBy");
    Long archivedAt = b.getLong("archivedAt");
    long at = b.getLong("createdAt", System.currentTimeMillis());
    return conn -> {
      update(conn, """
          INSERT INTO thread (thread_id, agent_id, workspace, title, acp_session_id, created_at, started_by, title_by,
                              archived_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (thread_id) DO UPDATE SET title = excluded.title, acp_session_id = excluded.acp_session_id,
                                                title_by = excluded.title_by, archived_at = excluded.archived_at""",
          id, agentId, workspace, title, session, at, startedBy, titleBy, archivedAt);
      return new JsonObject().put("threadId", id);
    };
  }

  /** A deleted thread: its transcript, routes and row, in one transaction; the ledger keeps its requests. */
  private Write deleteThread(JsonObject b) {
    String id = required(b, "threadId");
    return conn -> {
      int events = update(conn, "DELETE FROM transcript WHERE thread_id = ?", id);
      update(conn, "DELETE FROM thread_route WHERE thread_id = ?", id);
      update(conn, "DELETE FROM thread WHERE thread_id = ?", id);
      return new JsonObject().put("threadId", id).put("events", events);
    };
  }

  private Write route(JsonObject b) {
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

  private Write saveWebSession(JsonObject b) {
    String hash = required(b, "hash");
    long at = b.getLong("createdAt", System.currentTimeMillis());
    return conn -> {
      update(conn, "INSERT OR REPLACE INTO web_session (hash, created_at) VALUES (?, ?)", hash, at);
      return new JsonObject();
    };
  }

  private Write forgetWebSession(JsonObject b) {
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

  /** How long a plugin's chat message ids are remembered: platforms redeliver within hours, not months. */
  static final long INBOUND_RETENTION_MS = 30L * 24 * 3600 * 1000;

  private void inboundSeen(Message<JsonObject> m) {
    String plugin;
    String chat;
    String message;
    try {
      plugin = required(m.body(), "pluginId");
      chat = required(m.body(), "chatId");
      message = required(m.body(), "messageId");
    } catch (IllegalArgumentException e) {
      ErrorCode.BAD_REQUEST.fail(m, e.getMessage());
      return;
    }
    readers.preparedQuery("SELECT 1 FROM plugin_inbound WHERE plugin_id = ? AND chat_id = ? AND message_id = ?")
        .execute(Tuple.of(plugin, chat, message))
        .onSuccess(rows -> m.reply(new JsonObject().put("seen", rows.size() > 0)))
        .onFailure(replyFailure(m));
  }

  private Write markInbound(JsonObject b) {
    String plugin = required(b, "pluginId");
    String chat = required(b, "chatId");
    String message = required(b, "messageId");
    long at = System.currentTimeMillis();
    return conn -> {
      update(conn, "INSERT OR IGNORE INTO plugin_inbound (plugin_id, chat_id, message_id, seen_at) VALUES (?, ?, ?, ?)",
          plugin, chat, message, at);
      update(conn, "DELETE FROM plugin_inbound WHERE seen_at < ?", at - INBOUND_RETENTION_MS);
      return new JsonObject();
    };
  }

  private Write saveChatScope(JsonObject b) {
    String plugin = required(b, "pluginId");
    String chat = required(b, "chatId");
    String scope = required(b, "scope");
    if (!scope.equals("dm") && !scope.equals("group")) {
      throw new IllegalArgumentException("scope must be dm or group");
    }
    return conn -> {
      update(conn, "INSERT OR REPLACE INTO plugin_chat (plugin_id, chat_id, scope) VALUES (?, ?, ?)", plugin, chat,
          scope);
      return new JsonObject();
    };
  }

  private void listChatScopes(Message<JsonObject> m) {
    String plugin;
    try {
      plugin = required(m.body(), "pluginId");
    } catch (IllegalArgumentException e) {
      ErrorCode.BAD_REQUEST.fail(m, e.getMessage());
      return;
    }
    readers.preparedQuery("SELECT chat_id, scope FROM plugin_chat WHERE plugin_id = ?").execute(Tuple.of(plugin))
        .onSuccess(rows -> {
          JsonObject scopes = new JsonObject();
          rows.forEach(row -> scopes.put(row.getString("chat_id"), row.getString("scope")));
          m.reply(new JsonObject().put("scopes", scopes));
        })
        .onFailure(replyFailure(m));
  }

  private void listWebSessions(Message<JsonObject> m) {
    readers.query("SELECT hash, created_at FROM web_session ORDER BY created_at").execute()
        .onSuccess(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(row -> out.add(new JsonObject().put("hash", row.getString("hash"))
              .put("createdAt", row.getLong("created_at"))));
          m.reply(new JsonObject().put("sessions", out));
        })
        .onFailure(replyFailure(m));
  }

  private Write appendTranscript(JsonObject b) {
    String id = required(b, "threadId");
    Object seqValue = b.getValue("seq");
    if (!(seqValue instanceof Number)) {
      throw new IllegalArgumentException("seq is missing");
    }
    long seq = ((Number) seqValue).longValue();
    if (!(b.getValue("event") instanceof JsonObject event)) {
      throw new IllegalArgumentException("event must be an object");
    }
    String text = event.encode();
    long at = b.getLong("at", System.currentTimeMillis());
    return conn -> {
      update(conn, "INSERT INTO transcript (thread_id, seq, at, event) VALUES (?, ?, ?, ?)", id, seq, at, text);
      if (seq % 256 == 0 && seq > TRANSCRIPT_RETENTION) {
        update(conn, "DELETE FROM transcript WHERE thread_id = ? AND seq <= ?", id, seq - TRANSCRIPT_RETENTION);
      }
      return new JsonObject().put("seq", seq);
    };
  }

  private void listThreads(Message<JsonObject> m) {
    readers.query("""
            SELECT t.*, (SELECT MAX(seq) FROM transcript x WHERE x.thread_id = t.thread_id) AS last_seq,
                   (SELECT json_group_array(surface) FROM thread_route r WHERE r.thread_id = t.thread_id) AS routes
              FROM thread t ORDER BY t.created_at""").execute()
        .onSuccess(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(row -> out.add(new JsonObject()
              .put("threadId", row.getString("thread_id"))
              .put("agentId", row.getString("agent_id"))
              .put("workspace", row.getString("workspace"))
              .put("title", row.getString("title"))
              .put("acpSessionId", row.getString("acp_session_id"))
              .put("startedBy", row.getString("started_by"))
              .put("titleBy", row.getString("title_by"))
              .put("archivedAt", row.getLong("archived_at"))
              .put("createdAt", row.getLong("created_at"))
              .put("lastSeq", row.getLong("last_seq") == null ? 0L : row.getLong("last_seq"))
              .put("routes", new JsonArray(row.getString("routes")))));
          m.reply(new JsonObject().put("threads", out));
        })
        .onFailure(replyFailure(m));
  }

  private void readTranscript(Message<JsonObject> m) {
    JsonObject b = m.body() == null ? new JsonObject() : m.body();
    String id = b.getString("threadId");
    long after = b.getValue("afterSeq") instanceof Number n ? n.longValue() : 0L;
    int limit = b.getValue("limit") instanceof Integer i ? i : 1000;
    if (id == null || limit < 1 || limit > 10_000) {
      ErrorCode.BAD_REQUEST.fail(m, "threadId is missing or limit is not 1..10000");
      return;
    }
    readers.preparedQuery("SELECT seq, at, event FROM transcript WHERE thread_id = ? AND seq > ? ORDER BY seq LIMIT ?")
        .execute(Tuple.of(id, after, limit))
        .onSuccess(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(row -> out.add(new JsonObject().put("seq", row.getLong("seq")).put("at", row.getLong("at"))
              .put("event", new JsonObject(row.getString("event")))));
          m.reply(new JsonObject().put("events", out));
        })
        .onFailure(replyFailure(m));
  }

  // ---- ledger reads ----

  private void get(Message<JsonObject> m) {
    String id = m.body() == null ? null : m.body().getString("requestId");
    if (id == null) {
      ErrorCode.BAD_REQUEST.fail(m, "requestId is missing");
      return;
    }
    readers.preparedQuery("SELECT * FROM permission_request WHERE request_id = ?").execute(Tuple.of(id))
        .compose(rows -> {
          if (rows.size() == 0) {
            return Future.succeededFuture(new JsonObject().putNull("request"));
          }
          JsonObject found = LedgerRows.toJson(rows.iterator().next());
          return readers.preparedQuery("SELECT * FROM permission_event WHERE request_id = ? ORDER BY id")
              .execute(Tuple.of(id))
              .map(events -> {
                JsonArray trail = new JsonArray();
                events.forEach(e -> trail.add(LedgerRows.eventToJson(e)));
                return new JsonObject().put("request", found.put("events", trail));
              });
        })
        .onSuccess(m::reply)
        .onFailure(replyFailure(m));
  }

  private void list(Message<JsonObject> m) {
    JsonObject b = m.body() == null ? new JsonObject() : m.body();
    String state = b.getValue("state", "all") instanceof String s ? s : "";
    Object limitValue = b.getValue("limit", 100);
    int limit = limitValue instanceof Integer i ? i : -1;
    if (!state.equals("pending") && !state.equals("all") || limit < 1 || limit > 10_000) {
      ErrorCode.BAD_REQUEST.fail(m, "state must be pending or all, limit an integer 1..10000");
      return;
    }
    String threadId = b.getString("threadId");
    StringBuilder sql = new StringBuilder("SELECT * FROM permission_request WHERE 1 = 1");
    List<Object> args = new ArrayList<>();
    if (state.equals("pending")) {
      sql.append(" AND state = 'pending'");
    }
    if (threadId != null) {
      sql.append(" AND thread_id = ?");
      args.add(threadId);
    }
    sql.append(" ORDER BY created_at DESC, request_id LIMIT ?");
    args.add(limit);
    readers.preparedQuery(sql.toString()).execute(Tuple.from(args))
        .onSuccess(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(row -> out.add(LedgerRows.toJson(row)));
          m.reply(new JsonObject().put("requests", out));
        })
        .onFailure(replyFailure(m));
  }

  private static Handler<Throwable> replyFailure(Message<JsonObject> m) {
    return err -> {
      log.error("ledger read on {} failed", m.address(), err);
      ErrorCode.STORE_FAILED.fail(m, "the database read failed: " + err.getMessage());
    };
  }

  private static String required(JsonObject b, String field) {
    Object v = b.getValue(field);
    if (!(v instanceof String s) || s.isEmpty()) {
      throw new IllegalArgumentException(field + " is missing");
    }
    return s;
  }
}
