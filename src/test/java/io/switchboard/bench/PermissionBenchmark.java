package io.switchboard.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import io.switchboard.bus.Addresses;
import io.switchboard.bus.Bus;
import io.switchboard.permission.PermissionRoom;
import io.switchboard.store.StoreRoom;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.LoggerFactory;

/**
 * Permission-room figures for docs/performance.md: register-to-answer round trips through the
 * event bus (one at a time and 128 in flight), beside a bare event-bus echo measured in the same
 * run; heap per pending request with 10,000 pending; time to cancel them all at shutdown.
 *
 * <p>Run: {@code mvn -q -B -DskipTests package && java -Xmx256m -cp target/switchboard.jar:target/test-classes
 * io.switchboard.bench.PermissionBenchmark}
 */
public final class PermissionBenchmark {
  /** p50 and p99 (µs) of single-row insert commits in WAL mode at synchronous=FULL. */
  private static double[] fullCommits(Path file, int n) throws Exception {
    try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + file
        + "?journal_mode=WAL&synchronous=FULL")) {
      c.createStatement().execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
      c.setAutoCommit(false);
      long[] took = new long[n];
      try (java.sql.PreparedStatement insert = c.prepareStatement("INSERT INTO t (body) VALUES (?)")) {
        for (int i = 0; i < n; i++) {
          long t0 = System.nanoTime();
          insert.setString(1, "a ledger row of a usual size ".repeat(20));
          insert.executeUpdate();
          c.commit();
          took[i] = System.nanoTime() - t0;
        }
      }
      java.util.Arrays.sort(took);
      return new double[] {took[n / 2] / 1e3, took[n * 99 / 100] / 1e3};
    }
  }

  public static void main(String[] args) throws Exception {
    ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger("ROOT").setLevel(Level.WARN);
    Path dir = Files.createTempDirectory("sb-bench");
    Vertx vertx = Vertx.vertx();
    PermissionHarness.await(vertx.deployVerticle(new StoreRoom(dir.resolve("switchboard.db"))));
    PermissionHarness.await(vertx.deployVerticle(new PermissionRoom()));

    // A surface that answers every card as soon as it is shown.
    AtomicBoolean autoAnswer = new AtomicBoolean(true);
    vertx.eventBus().<JsonObject>consumer(Addresses.PERMISSION_SHOWN, m -> {
      if (autoAnswer.get()) {
        vertx.eventBus().request(Addresses.PERMISSION_ANSWER, new JsonObject()
            .put("requestId", m.body().getString("requestId")).put("optionId", "allow").put("surface", "web"));
      }
    });
    vertx.eventBus().<JsonObject>consumer("bench.echo", m -> m.reply(m.body()));

    System.out.printf("java %s, %d cores, max heap %d MiB%n", System.getProperty("java.version"),
        Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory() >> 20);

    // Warm up the JIT on both paths.
    roundTrips(vertx, 3_000, 1);
    echo(vertx, 20_000, 1);

    // The floor of a round trip: two single-row commits at synchronous=FULL, as plain JDBC.
    double[] commit = fullCommits(dir.resolve("floor.db"), 2_000);
    System.out.printf("plain sqlite-jdbc, one single-row commit at synchronous=FULL: p50 %.1f us, p99 %.1f us%n",
        commit[0], commit[1]);
    // One of a round trip's two store writes alone: the event bus, the hop to the writer thread, the
    // ledger's rows (request, chained event, indexes) and the commit at FULL. What is left of a round
    // trip beyond two of these is the permission room's own work and its card.
    double[] ledgerWrite = measure(2_000, 1, i -> vertx.eventBus().request(Addresses.STORE_LEDGER_APPEND,
        PermissionHarness.request("bench", "s", "store-" + i, "web").put("requestId", "store-" + i)
            .put("createdAt", System.currentTimeMillis())));
    System.out.printf("store room, one ledger write (register's row) at a time: p50 %.1f us, p99 %.1f us%n",
        ledgerWrite[1], ledgerWrite[2]);

    for (int window : new int[] {1, 128}) {
      double[] echo = echo(vertx, window == 1 ? 20_000 : 100_000, window);
      double[] perm = roundTrips(vertx, window == 1 ? 5_000 : 20_000, window);
      System.out.printf("window %3d: bus echo %,.0f/s (p50 %.1f us, p99 %.1f us); register->answer %,.0f/s "
              + "(p50 %.1f us, p99 %.1f us)%n", window, echo[0], echo[1], echo[2], perm[0], perm[1], perm[2]);
    }

    // Heap per pending request, 10,000 pending at once. -DholdMs=N pauses before and after (for a
    // class histogram: jcmd PID GC.class_histogram).
    autoAnswer.set(false);
    long before = usedHeapAfterGc();
    long holdMs = Long.getLong("holdMs", 0);
    if (holdMs > 0) {
      System.out.println("holding before: " + ProcessHandle.current().pid());
      Thread.sleep(holdMs);
    }
    List<Future<?>> waiting = new ArrayList<>();
    int pending = 10_000;
    for (int i = 0; i < pending; i++) {
      waiting.add(register(vertx, "held-" + i));
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (status(vertx).getInteger("pending") < pending || cardsShown(vertx) < pending) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not all requests became pending");
      }
      Thread.sleep(10);
    }
    long after = usedHeapAfterGc();
    System.out.printf("heap: %,d pending requests hold %,d KiB, %,d bytes each%n", pending, (after - before) >> 10,
        (after - before) / pending);
    if (holdMs > 0) {
      System.out.println("holding after");
      Thread.sleep(holdMs);
    }

    long t0 = System.nanoTime();
    JsonObject reply = PermissionHarness.await(vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_SHUTDOWN,
        new JsonObject(), new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(120_000))).body();
    double ms = (System.nanoTime() - t0) / 1e6;
    Future.join(waiting).await(60, TimeUnit.SECONDS);
    System.out.printf("shutdown: cancelled %,d pending requests, ledger committed, in %.0f ms%n",
        reply.getInteger("cancelled"), ms);
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  private static Future<JsonObject> register(Vertx vertx, String toolCallId) {
    return vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_REGISTER,
        PermissionHarness.request("bench", "s", toolCallId, "web"), Bus.untilEnded()).map(m -> m.body());
  }

  private static JsonObject status(Vertx vertx) {
    return PermissionHarness.await(vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_STATUS,
        new JsonObject())).body();
  }

  private static int cardsShown(Vertx vertx) {
    return PermissionHarness.await(vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_PENDING,
        new JsonObject())).body().getJsonArray("requests").size();
  }

  /** {throughput/s, p50 us, p99 us} of register->shown->answer->reply, {@code window} at a time. */
  private static double[] roundTrips(Vertx vertx, int total, int window) throws Exception {
    return measure(total, window, i -> register(vertx, "rt-" + i));
  }

  private static double[] echo(Vertx vertx, int total, int window) throws Exception {
    JsonObject body = PermissionHarness.request("bench", "s", "echo", "web");
    return measure(total, window, i -> vertx.eventBus().request("bench.echo", body));
  }

  private interface Op {
    Future<?> start(int i);
  }

  private static double[] measure(int total, int window, Op op) throws Exception {
    long[] latencies = new long[total];
    long start = System.nanoTime();
    for (int i = 0; i < total; i += window) {
      int n = Math.min(window, total - i);
      List<Future<?>> batch = new ArrayList<>(n);
      long[] starts = new long[n];
      for (int j = 0; j < n; j++) {
        starts[j] = System.nanoTime();
        int index = i + j;
        int slot = j;
        batch.add(op.start(index).onComplete(r -> latencies[index] = System.nanoTime() - starts[slot]));
      }
      Future.all(batch).await(60, TimeUnit.SECONDS);
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    Arrays.sort(latencies);
    return new double[] {total / seconds, latencies[total / 2] / 1e3, latencies[(int) (total * 0.99)] / 1e3};
  }

  private static long usedHeapAfterGc() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
