package io.switchboard.store;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.jdbcclient.JDBCConnectOptions;
import io.vertx.jdbcclient.JDBCPool;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store room: the only owner of the SQLite file. It runs the migrations at start, then serves
 * ledger writes and reads over the event bus. Writes queue up and are committed in groups (one
 * transaction per batch) through a single writer connection; a batch that fails is retried one
 * write at a time, so one bad write cannot sink the others. JDBC runs on worker threads only.
 */
public final class StoreRoom extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(StoreRoom.class);
  private static final int MAX_BATCH = 256;

  private final Path databaseFile;
  private Pool pool;
  private final ArrayDeque<QueuedWrite> queue = new ArrayDeque<>();
  private boolean flushing;
  private Promise<Void> drained;

  /** One write: the statements it runs inside the batch's transaction, and who waits for it. */
  private interface Write {
    Future<JsonObject> run(SqlConnection conn);
  }

  private record QueuedWrite(Write write, Message<JsonObject> message) {}

  public StoreRoom(Path databaseFile) {
    this.databaseFile = databaseFile;
  }

  @Override
  public Future<?> start() {
    // One connection: SQLite allows one writer, and several writers fail with SQLITE_BUSY under load.
    String url = "jdbc:sqlite:" + databaseFile
        + "?journal_mode=WAL&synchronous=NORMAL&busy_timeout=5000&transaction_mode=IMMEDIATE&foreign_keys=true";
    pool = JDBCPool.pool(vertx, new JDBCConnectOptions().setJdbcUrl(url),
        new PoolOptions().setMaxSize(1).setName("switchboard-store"));
    return migrate().onSuccess(version -> {
      log.info("database {} ready at schema version {}", databaseFile, version);
      var bus = vertx.eventBus();
      bus.<JsonObject>consumer(Addresses.STORE_LEDGER_APPEND, m -> enqueue(m, this::append));
      bus.<JsonObject>consumer(Addresses.STORE_LEDGER_END, m -> enqueue(m, this::end));
      bus.<JsonObject>consumer(Addresses.STORE_LEDGER_NOTE, m -> enqueue(m, this::note));
      bus.<JsonObject>consumer(Addresses.STORE_LEDGER_VOID_PENDING, m -> enqueue(m, this::voidPending));
      bus.<JsonObject>consumer(Addresses.STORE_HEALTH, m -> enqueue(m, this::health));
      bus.<JsonObject>consumer(Addresses.STORE_LEDGER_GET, this::get);
      bus.<JsonObject>consumer(Addresses.STORE_LEDGER_LIST, this::list);
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
    return idle.compose(v -> pool.close());
  }

  private Future<Integer> migrate() {
    return pool.withTransaction(conn -> conn.query("PRAGMA user_version").execute()
        .compose(rows -> {
          int current = rows.iterator().next().getInteger(0);
          if (current > Migrations.VERSIONS.size()) {
            return Future.failedFuture("the database " + databaseFile + " has schema version " + current
                + ", newer than this Switchboard knows (" + Migrations.VERSIONS.size() + "); use a newer release");
          }
          Future<Void> chain = Future.succeededFuture();
          for (int v = current + 1; v <= Migrations.VERSIONS.size(); v++) {
            for (String sql : Migrations.VERSIONS.get(v - 1)) {
              chain = chain.compose(x -> conn.query(sql).execute().mapEmpty());
            }
          }
          int target = Migrations.VERSIONS.size();
          return chain.compose(x -> conn.query("PRAGMA user_version = " + target).execute()).map(x -> target);
        }));
  }

  // ---- the group-commit writer ----

  private void enqueue(Message<JsonObject> message, java.util.function.Function<JsonObject, Write> parse) {
    Write write;
    try {
      write = parse.apply(message.body() == null ? new JsonObject() : message.body());
    } catch (RuntimeException e) {
      ErrorCode.BAD_REQUEST.fail(message, "bad store write on " + message.address() + ": " + e.getMessage());
      return;
    }
    queue.add(new QueuedWrite(write, message));
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
    commitBatch(batch).onComplete(done -> {
      flushing = false;
      flush();
    });
  }

  private Future<Void> commitBatch(List<QueuedWrite> batch) {
    return pool.withTransaction(conn -> runInOrder(conn, batch))
        .map(results -> {
          for (int i = 0; i < batch.size(); i++) {
            batch.get(i).message().reply(results.get(i));
          }
          return (Void) null;
        })
        .recover(err -> {
          if (batch.size() == 1) {
            failWrite(batch.get(0), err);
            return Future.succeededFuture();
          }
          // Find the bad write(s): commit each alone, in order.
          Future<Void> chain = Future.succeededFuture();
          for (QueuedWrite q : batch) {
            chain = chain.compose(v -> pool.withTransaction(conn -> q.write().run(conn))
                .onSuccess(r -> q.message().reply(r))
                .onFailure(e -> failWrite(q, e))
                .<Void>mapEmpty()
                .recover(e -> Future.succeededFuture()));
          }
          return chain;
        });
  }

  private static Future<List<JsonObject>> runInOrder(SqlConnection conn, List<QueuedWrite> batch) {
    List<JsonObject> results = new ArrayList<>(batch.size());
    Future<Void> chain = Future.succeededFuture();
    for (QueuedWrite q : batch) {
      chain = chain.compose(v -> q.write().run(conn).map(r -> {
        results.add(r);
        return (Void) null;
      }));
    }
    return chain.map(v -> results);
  }

  private static void failWrite(QueuedWrite q, Throwable err) {
    if (err instanceof StoreConflict conflict) {
      log.error("ledger write on {} refused: {}", q.message().address(), conflict.getMessage());
      ErrorCode.CONFLICT.fail(q.message(), conflict.getMessage());
    } else {
      log.error("ledger write on {} failed", q.message().address(), err);
      ErrorCode.STORE_FAILED.fail(q.message(), "the database write failed: " + err.getMessage());
    }
  }

  /** A write that would break the ledger's rules (e.g. ending a request that is not pending). */
  private static final class StoreConflict extends RuntimeException {
    StoreConflict(String message) {
      super(message, null, false, false);
    }
  }

  // ---- ledger writes ----

  private Write append(JsonObject b) {
    String id = required(b, "requestId");
    Tuple row = Tuple.of(id, required(b, "threadId"), required(b, "sessionId"), b.getString("agentId"),
        b.getJsonObject("toolCall", new JsonObject()).encode(),
        b.getJsonArray("options", new JsonArray()).encode(),
        b.getJsonArray("eligible", new JsonArray()).encode(),
        b.getLong("createdAt", System.currentTimeMillis()));
    return conn -> conn.preparedQuery("""
            INSERT INTO permission_request
              (request_id, thread_id, session_id, agent_id, tool_call, options, eligible, state, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)""").execute(row)
        .compose(r -> insertEvent(conn, id, row.getLong(7), "registered", null, null, null))
        .map(r -> new JsonObject().put("requestId", id));
  }

  private Write end(JsonObject b) {
    String id = required(b, "requestId");
    String state = required(b, "state");
    if (!state.equals("selected") && !state.equals("cancelled")) {
      throw new IllegalArgumentException("state must be selected or cancelled, got " + state);
    }
    long at = b.getLong("endedAt", System.currentTimeMillis());
    Tuple row = Tuple.of(state, b.getString("optionId"), b.getString("optionKind"), b.getString("reason"),
        b.getString("surface"), b.getString("user"), at, id);
    String detail = state.equals("selected") ? b.getString("optionId") : b.getString("reason");
    return conn -> conn.preparedQuery("""
            UPDATE permission_request
               SET state = ?, option_id = ?, option_kind = ?, reason = ?,
                   answered_surface = ?, answered_user = ?, ended_at = ?
             WHERE request_id = ? AND state = 'pending'""").execute(row)
        .compose(r -> {
          if (r.rowCount() != 1) {
            return Future.failedFuture(new StoreConflict("request " + id + " is not pending in the ledger; "
                + "refusing to end it twice"));
          }
          return insertEvent(conn, id, at, state, b.getString("surface"), b.getString("user"), detail);
        })
        .map(r -> new JsonObject().put("requestId", id));
  }

  private Write note(JsonObject b) {
    String id = required(b, "requestId");
    String event = required(b, "event");
    long at = b.getLong("at", System.currentTimeMillis());
    return conn -> insertEvent(conn, id, at, event, b.getString("surface"), b.getString("user"), b.getString("detail"))
        .map(r -> new JsonObject().put("requestId", id));
  }

  private static Future<Void> insertEvent(SqlConnection conn, String id, long at, String event,
                                          String surface, String user, String detail) {
    return conn.preparedQuery("""
            INSERT INTO permission_event (request_id, at, event, surface, user_name, detail)
            VALUES (?, ?, ?, ?, ?, ?)""")
        .execute(Tuple.of(id, at, event, surface, user, detail)).mapEmpty();
  }

  /** Every request still pending was left by a process that is gone: end it with the given reason. */
  private Write voidPending(JsonObject b) {
    String reason = required(b, "reason");
    long at = b.getLong("at", System.currentTimeMillis());
    return conn -> conn.preparedQuery("SELECT * FROM permission_request WHERE state = 'pending' ORDER BY created_at")
        .execute()
        .compose(rows -> {
          JsonArray voided = new JsonArray();
          Future<Void> chain = Future.succeededFuture();
          for (Row row : rows) {
            JsonObject request = LedgerRows.toJson(row);
            String id = request.getString("requestId");
            chain = chain
                .compose(v -> conn.preparedQuery("""
                        UPDATE permission_request SET state = 'cancelled', reason = ?, ended_at = ?
                         WHERE request_id = ? AND state = 'pending'""")
                    .execute(Tuple.of(reason, at, id)).mapEmpty())
                .compose(v -> insertEvent(conn, id, at, "cancelled", null, null, reason));
            request.put("state", "cancelled").put("endedAt", at)
                .put("outcome", new JsonObject().put("outcome", "cancelled").put("reason", reason));
            voided.add(request);
          }
          return chain.map(v -> new JsonObject().put("voided", voided));
        });
  }

  private Write health(JsonObject b) {
    long now = System.currentTimeMillis();
    return conn -> conn.preparedQuery("""
            INSERT INTO meta (key, value) VALUES ('last_health_check', ?)
            ON CONFLICT (key) DO UPDATE SET value = excluded.value""")
        .execute(Tuple.of(Long.toString(now))).map(r -> new JsonObject().put("writable", true));
  }

  // ---- ledger reads ----

  private void get(Message<JsonObject> m) {
    String id = m.body() == null ? null : m.body().getString("requestId");
    if (id == null) {
      ErrorCode.BAD_REQUEST.fail(m, "requestId is missing");
      return;
    }
    pool.preparedQuery("SELECT * FROM permission_request WHERE request_id = ?").execute(Tuple.of(id))
        .compose(rows -> {
          if (rows.size() == 0) {
            return Future.succeededFuture(new JsonObject().putNull("request"));
          }
          JsonObject found = LedgerRows.toJson(rows.iterator().next());
          return pool.preparedQuery("SELECT * FROM permission_event WHERE request_id = ? ORDER BY id")
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
    String state = b.getString("state", "all");
    int limit;
    try {
      limit = b.getInteger("limit", 100);
    } catch (ClassCastException e) {
      ErrorCode.BAD_REQUEST.fail(m, "limit must be an integer");
      return;
    }
    if (!state.equals("pending") && !state.equals("all") || limit < 1 || limit > 10_000) {
      ErrorCode.BAD_REQUEST.fail(m, "state must be pending or all, limit 1..10000");
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
    pool.preparedQuery(sql.toString()).execute(Tuple.from(args))
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
