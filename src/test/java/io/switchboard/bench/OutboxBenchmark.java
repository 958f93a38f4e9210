package io.switchboard.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import io.switchboard.bus.Addresses;
import io.switchboard.store.StoreRoom;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;

/**
 * The outbox's durable enqueue-and-acknowledge rate through the store room (group commit), beside
 * plain sqlite-jdbc doing the same insert and update one transaction each and 100 to a
 * transaction, on the same machine in the same run.
 *
 * <p>Run: {@code mvn -q -B -DskipTests package && java -cp target/switchboard.jar:target/test-classes
 * io.switchboard.bench.OutboxBenchmark}
 */
public final class OutboxBenchmark {
  static final int N = 20_000;

  public static void main(String[] args) throws Exception {
    ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger("ROOT").setLevel(Level.WARN);
    Path dir = Files.createTempDirectory("sb-outbox-bench");
    System.out.printf("java %s, %d cores%n", System.getProperty("java.version"),
        Runtime.getRuntime().availableProcessors());
    for (int round = 0; round < 2; round++) {
      String label = round == 0 ? "warm-up" : "measured";
      double one = raw(dir.resolve("raw-one-" + round + ".db"), 1, 2_000);
      double batched = raw(dir.resolve("raw-batch-" + round + ".db"), 100, N);
      double outbox1 = outbox(dir.resolve("outbox-seq-" + round + ".db"), 2_000, 1);
      double outbox128 = outbox(dir.resolve("outbox-win-" + round + ".db"), N, 128);
      System.out.printf("%s: outputs enqueued and acknowledged per second: store room one at a time %,.0f, "
          + "128 in flight %,.0f; plain sqlite-jdbc one transaction each %,.0f, 100 a transaction %,.0f%n",
          label, outbox1, outbox128, one, batched);
    }
    System.exit(0);
  }

  /**
   * Insert then mark delivered, as plain JDBC on the same schema and pragmas: WAL and
   * synchronous=FULL, the level the store commits outbox writes at.
   */
  private static double raw(Path file, int perTransaction, int n) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file
        + "?journal_mode=WAL&synchronous=FULL&busy_timeout=5000")) {
      c.createStatement().execute("CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, output_id TEXT NOT "
          + "NULL UNIQUE, plugin_id TEXT NOT NULL, chat_id TEXT NOT NULL, kind TEXT NOT NULL, request_id TEXT, body "
          + "TEXT NOT NULL, state TEXT NOT NULL, created_at INTEGER NOT NULL, delivered_at INTEGER)");
      c.setAutoCommit(false);
      String body = new JsonObject().put("text", "a system text of a usual length for a chat message").encode();
      long t0 = System.nanoTime();
      try (PreparedStatement insert = c.prepareStatement("INSERT INTO outbox (output_id, plugin_id, chat_id, kind, "
          + "body, state, created_at) VALUES (?, 'p', '42', 'system', ?, 'pending', 0)");
           PreparedStatement ack = c.prepareStatement("UPDATE outbox SET state = 'delivered', delivered_at = 1 "
               + "WHERE output_id = ? AND state = 'pending'")) {
        for (int i = 0; i < n; i++) {
          insert.setString(1, "o" + i);
          insert.setString(2, body);
          insert.executeUpdate();
          if ((i + 1) % perTransaction == 0) {
            c.commit();
          }
        }
        c.commit();
        for (int i = 0; i < n; i++) {
          ack.setString(1, "o" + i);
          ack.executeUpdate();
          if ((i + 1) % perTransaction == 0) {
            c.commit();
          }
        }
        c.commit();
      }
      return n / ((System.nanoTime() - t0) / 1e9);
    }
  }

  private static double outbox(Path file, int n, int window) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      PermissionHarness.await(vertx.deployVerticle(new StoreRoom(file)));
      JsonObject body = new JsonObject().put("text", "a system text of a usual length for a chat message");
      List<String> ids = new ArrayList<>(n);
      ThreadCpu cpu = new ThreadCpu();
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i += window) {
        List<Future<JsonObject>> batch = new ArrayList<>();
        for (int j = i; j < Math.min(n, i + window); j++) {
          batch.add(vertx.eventBus().<JsonObject>request(Addresses.STORE_OUTBOX_ENQUEUE, new JsonObject()
              .put("pluginId", "p").put("chatId", "42").put("kind", "system").put("body", body)).map(m -> m.body()));
        }
        Future.all(batch).await(60, TimeUnit.SECONDS);
        batch.forEach(f -> ids.add(f.result().getString("outputId")));
      }
      for (int i = 0; i < n; i += window) {
        List<Future<?>> batch = new ArrayList<>();
        for (int j = i; j < Math.min(n, i + window); j++) {
          batch.add(vertx.eventBus().request(Addresses.STORE_OUTBOX_ACK, new JsonObject().put("pluginId", "p")
              .put("outputIds", new JsonArray().add(ids.get(j)))));
        }
        Future.all(batch).await(60, TimeUnit.SECONDS);
      }
      double perSecond = n / ((System.nanoTime() - t0) / 1e9);
      System.out.printf("  store room, %d in flight: threads busy %s%n", window, cpu.report());
      return perSecond;
    } finally {
      vertx.close().await(10, TimeUnit.SECONDS);
    }
  }
}
