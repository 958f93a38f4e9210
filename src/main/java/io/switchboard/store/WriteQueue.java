package io.switchboard.store;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The store's one writer: a single connection on a single worker thread, fed by a queue that commits
 * in groups.
 *
 * <p>SQLite has one writer; several fail with SQLITE_BUSY under load. Writes queue up on the room's
 * event loop and everything queued while the previous batch committed goes into the next transaction
 * (up to {@link #MAX_BATCH}). A batch that fails is rolled back and retried one write at a time, so
 * one bad write cannot sink the others. Call it from the room's event loop only; JDBC runs on the
 * worker thread only.
 */
final class WriteQueue {
  private static final int MAX_BATCH = 512;

  /** One write: the statements it runs inside its batch's transaction, on the writer thread. */
  interface Write {
    JsonObject run(Connection conn) throws SQLException;
  }

  /** {@code durable}: it must survive a power loss once committed (ledger, outbox, threads); transcripts need not. */
  private record QueuedWrite(Write write, boolean durable, Promise<JsonObject> done) {}

  /** What one write came to: a reply body, or the reason it failed. */
  private record Done(JsonObject reply, Throwable failure) {}

  private final WorkerExecutor writer;
  private final Path databaseFile;
  /** Told of every rollback, on the writer thread: a cache of what the transaction wrote is stale. */
  private final Runnable afterRollback;
  private final ArrayDeque<QueuedWrite> queue = new ArrayDeque<>();
  private boolean flushing;
  private Promise<Void> drained;
  private Connection connection;
  /** The connection's synchronous level (used on the writer thread only). */
  private volatile boolean synchronousFull = true;

  WriteQueue(WorkerExecutor writer, Path databaseFile, Runnable afterRollback) {
    this.writer = writer;
    this.databaseFile = databaseFile;
    this.afterRollback = afterRollback;
  }

  /** Opens the writer connection and migrates the schema; the schema version it is at. */
  Future<Integer> open() {
    return writer.executeBlocking(() -> {
      Files.createDirectories(databaseFile.toAbsolutePath().getParent());
      connection = StatementCache.wrap(DriverManager.getConnection("jdbc:sqlite:" + databaseFile
          + "?journal_mode=WAL&synchronous=FULL&busy_timeout=5000&transaction_mode=IMMEDIATE&foreign_keys=true"
          // No write reads a generated key; with this on, the driver runs a query after every INSERT.
          + "&jdbc.get_generated_keys=false"));
      connection.setAutoCommit(false);
      return Migrations.migrate(connection, databaseFile);
    });
  }

  /** Queues a write; its reply body once its batch commits, or why it failed. */
  Future<JsonObject> submit(Write write, boolean durable) {
    Promise<JsonObject> done = Promise.promise();
    queue.add(new QueuedWrite(write, durable, done));
    flush();
    return done.future();
  }

  /** Completes once nothing is queued or committing. */
  Future<Void> drained() {
    if (queue.isEmpty() && !flushing) {
      return Future.succeededFuture();
    }
    drained = Promise.promise();
    return drained.future();
  }

  /** Closes the writer connection (after {@link #drained()}, so queued writes are committed first). */
  Future<Void> close() {
    return writer.executeBlocking(() -> {
      if (connection != null) {
        connection.close();
      }
      return null;
    });
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
      for (int i = 0; i < batch.size(); i++) {
        // Also an Error (out of memory): each write still gets its answer.
        Done one = done.succeeded() ? done.result().get(i) : new Done(null, done.cause());
        if (one.failure() == null) {
          batch.get(i).done().complete(one.reply());
        } else {
          batch.get(i).done().fail(one.failure());
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
        results.add(new Done(q.write().run(connection), null));
      }
      connection.commit();
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
        JsonObject reply = q.write().run(connection);
        connection.commit();
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
      connection.setAutoCommit(true);
      try (Statement st = connection.createStatement()) {
        st.execute("PRAGMA synchronous = " + (full ? "FULL" : "NORMAL"));
      } finally {
        connection.setAutoCommit(false);
      }
      synchronousFull = full;
    }
  }

  private void rollback() throws SQLException {
    afterRollback.run();
    connection.rollback();
  }

  private void rollbackAfter(Error fatal) {
    try {
      rollback();
    } catch (SQLException | RuntimeException e) {
      fatal.addSuppressed(e);
    }
  }
}
