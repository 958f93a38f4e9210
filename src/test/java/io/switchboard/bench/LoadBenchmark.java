package io.switchboard.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import io.switchboard.bus.Addresses;
import io.switchboard.bus.Bus;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.LoggerFactory;

/**
 * Load: 500 /ws/chat sockets over 50 threads (10 each, 1 of each 10 a reader that stops), a
 * streaming benchmark agent per thread that also asks permissions, answered by the first socket to
 * see each card; then 10,000 permission requests pending at once. Prints chunk latency, permission
 * round trips, CPU and heap; the sockets that stopped reading must have been disconnected.
 *
 * <p>Run: {@code mvn -q -B -DskipTests package && java -Xmx256m -cp target/switchboard.jar:target/test-classes
 * io.switchboard.bench.LoadBenchmark}
 */
public final class LoadBenchmark {
  static final int THREADS = 50;
  static final int SOCKETS_PER_THREAD = Integer.getInteger("sockets", 10);
  static final int CHUNKS = 200;
  /** Milliseconds between an agent's chunks: 5 is a fast model; 20 is closer to what agents emit. */
  static final int PAUSE_MS = Integer.getInteger("pauseMs", 5);

  public static void main(String[] args) throws Exception {
    ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger("ROOT").setLevel(Level.ERROR);
    Vertx vertx = Vertx.vertx();
    // A light Python agent: fifty JVM agents on two cores would measure the JVMs, not the gateway.
    java.nio.file.Path script = java.nio.file.Path.of("target", "test-classes", "bench", "load_agent.py")
        .toAbsolutePath();
    GatewayHarness gateway = new GatewayHarness(vertx, Files.createTempDirectory("sb-load"), List.of(),
        AgentHarness.command("bench", List.of("python3", script.toString(), Integer.toString(CHUNKS),
            Integer.toString(PAUSE_MS))));
    var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    System.out.printf("java %s, %d cores, max heap %d MiB%n", System.getProperty("java.version"),
        Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory() >> 20);

    List<String> threads = new ArrayList<>();
    for (int i = 0; i < THREADS; i++) {
      threads.add(PermissionHarness.await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_CREATE,
          new JsonObject().put("agent", "bench").put("surface", "web"))).body().getString("threadId"));
    }
    List<Long> chunkLatencyMicros = Collections.synchronizedList(new ArrayList<>());
    List<ChatClient> sockets = new ArrayList<>();
    List<ChatClient> stalled = new ArrayList<>();
    AtomicInteger answered = new AtomicInteger();
    var answeredIds = ConcurrentHashMap.<String>newKeySet();
    for (String t : threads) {
      for (int s = 0; s < SOCKETS_PER_THREAD; s++) {
        ChatClient c = ChatClient.open(vertx, gateway.port, gateway.token);
        boolean measuring = s == 0;
        c.ws.textMessageHandler(text -> {
          JsonObject f = new JsonObject(text);
          String type = f.getString("type");
          if ("permission_request".equals(type) && !c.ws.isClosed() && answeredIds.add(f.getString("requestId"))) {
            answered.incrementAndGet();
            c.ws.writeTextMessage(new JsonObject().put("type", "permission_answer")
                .put("requestId", f.getString("requestId")).put("optionId", "allow").encode());
          } else if (measuring && "event".equals(type)) {
            JsonObject u = f.getJsonObject("event").getJsonObject("update");
            String chunk = u == null ? null : u.getJsonObject("content", new JsonObject()).getString("text");
            if (chunk != null && chunk.startsWith("T")) {
              Instant now = Instant.now();
              long nowMicros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
              chunkLatencyMicros.add(nowMicros - Long.parseLong(chunk.substring(1).trim()));
            }
          }
        });
        c.ws.writeTextMessage(new JsonObject().put("type", "attach").put("threadId", t).encode());
        if (s == SOCKETS_PER_THREAD - 1) {
          c.ws.pause(); // this browser stops reading
          stalled.add(c);
        }
        sockets.add(c);
      }
    }
    System.out.printf("%d sockets open over %d threads (%d stop reading)%n", sockets.size(), threads.size(),
        stalled.size());

    // The web layer's own cost, beside a bare Vert.x WebSocket echo with as many sockets open.
    double[] gatewayPing = pingRoundTrips(sockets.get(1), 2_000); // neither measuring nor stalled
    double[] bareEcho = bareEchoRoundTrips(vertx, sockets.size(), 2_000);
    System.out.printf("with %d sockets open, one at a time: /ws/chat ping->pong p50 %.0f us, p99 %.0f us; "
        + "bare Vert.x WebSocket echo p50 %.0f us, p99 %.0f us%n", sockets.size(), gatewayPing[0], gatewayPing[1],
        bareEcho[0], bareEcho[1]);

    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    List<Future<?>> prompts = new ArrayList<>();
    for (String t : threads) {
      prompts.add(vertx.eventBus().request(Addresses.THREAD_PROMPT, new JsonObject().put("threadId", t)
          .put("text", "go").put("surface", "web")));
    }
    Future.all(prompts).await(60, TimeUnit.SECONDS);
    List<Long> rtts = new CopyOnWriteArrayList<>();
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    for (String t : threads) {
      while (true) {
        JsonArray events = PermissionHarness.await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_HISTORY,
            new JsonObject().put("threadId", t).put("afterSeq", 0).put("limit", 10_000))).body().getJsonArray("events");
        String report = events.stream().map(e -> ((JsonObject) e).getJsonObject("event"))
            .filter(e -> "acp".equals(e.getString("kind")))
            .map(e -> e.getJsonObject("update").getJsonObject("content", new JsonObject()).getString("text", ""))
            .filter(text -> text.startsWith("RTTS:")).findFirst().orElse(null);
        if (report != null) {
          new JsonArray(report.substring(5)).forEach(n -> rtts.add(((Number) n).longValue()));
          break;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("thread " + t + " did not finish");
        }
        Thread.sleep(100);
      }
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
    System.out.printf("%d turns of %d chunks (%d ms apart: %,d chunks/s in all) and 5 permissions each in %.1f s; "
        + "gateway+client JVM CPU %.1f s (%.0f%% of 2 cores)%n", threads.size(), CHUNKS, PAUSE_MS,
        threads.size() * 1000 / PAUSE_MS, seconds, cpu, 100 * cpu / seconds / 2);
    System.out.printf("chunk latency agent->browser: p50 %s ms, p99 %s ms (%d samples)%n",
        pct(chunkLatencyMicros, 50), pct(chunkLatencyMicros, 99), chunkLatencyMicros.size());
    List<Long> rttMicros = rtts.stream().map(n -> n / 1000).toList();
    System.out.printf("permission round trip (agent's view, browser answers): p50 %s ms, p99 %s ms (%d)%n",
        pct(rttMicros, 50), pct(rttMicros, 99), rttMicros.size());
    long closed = stalled.stream().filter(c -> c.ws.isClosed()).count();
    System.out.printf("stalled readers disconnected by the gateway: %d of %d%n", closed, stalled.size());
    System.out.printf("heap after the streaming phase: %d MiB%n", heapAfterGc() >> 20);

    // 10,000 permission requests pending at once, cards fanned out to the open sockets.
    answeredIds.clear();
    List<Future<?>> held = new ArrayList<>();
    long h0 = heapAfterGc();
    for (int i = 0; i < 10_000; i++) {
      String t = threads.get(i % threads.size());
      held.add(vertx.eventBus().request(Addresses.PERMISSION_REGISTER, PermissionHarness.request(t, "held", "h" + i)
          .put("eligible", new JsonArray().add("other")), Bus.untilEnded()));
    }
    PermissionHarness.waitFor(() -> PermissionHarness.await(vertx.eventBus().<JsonObject>request(
        Addresses.PERMISSION_STATUS, new JsonObject())).body().getInteger("pending") == 10_000, "10,000 pending");
    long h1 = heapAfterGc();
    System.out.printf("10,000 pending: heap %d MiB (+%d MiB)%n", h1 >> 20, (h1 - h0) >> 20);
    long s0 = System.nanoTime();
    PermissionHarness.await(vertx.eventBus().request(Addresses.PERMISSION_SHUTDOWN, new JsonObject(),
        new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(120_000)));
    System.out.printf("cancelled all 10,000 (ledger committed) in %.0f ms%n", (System.nanoTime() - s0) / 1e6);
    sockets.forEach(ChatClient::close);
    gateway.close();
    vertx.close().await(10, TimeUnit.SECONDS);
    System.exit(0);
  }

  /** {p50, p99} in microseconds of ping->pong on a /ws/chat socket. */
  private static double[] pingRoundTrips(ChatClient socket, int n) throws Exception {
    var pong = new java.util.concurrent.LinkedBlockingQueue<Long>();
    var previous = socket.ws;
    socket.ws.textMessageHandler(t -> {
      if (t.contains("\"pong\"")) {
        pong.add(System.nanoTime());
      }
    });
    long[] rtt = new long[n];
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      previous.writeTextMessage("{\"type\":\"ping\"}");
      rtt[i] = pong.take() - t0;
    }
    return percentiles(rtt);
  }

  /** The same one-at-a-time round trip against a bare Vert.x echo server with {@code open} sockets. */
  private static double[] bareEchoRoundTrips(Vertx vertx, int open, int n) throws Exception {
    var server = vertx.createHttpServer().webSocketHandler(ws -> ws.textMessageHandler(ws::writeTextMessage))
        .listen(0, "127.0.0.1").await(10, TimeUnit.SECONDS);
    var client = vertx.createWebSocketClient(new io.vertx.core.http.WebSocketClientOptions().setMaxConnections(open + 10));
    List<io.vertx.core.http.WebSocket> clients = new ArrayList<>();
    for (int i = 0; i < open; i++) {
      clients.add(client.connect(server.actualPort(), "127.0.0.1", "/").await(10, TimeUnit.SECONDS));
    }
    var echo = new java.util.concurrent.LinkedBlockingQueue<Long>();
    clients.get(0).textMessageHandler(t -> echo.add(System.nanoTime()));
    long[] rtt = new long[n];
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      clients.get(0).writeTextMessage("{\"type\":\"ping\"}");
      rtt[i] = echo.take() - t0;
    }
    clients.forEach(io.vertx.core.http.WebSocket::close);
    server.close();
    return percentiles(rtt);
  }

  private static double[] percentiles(long[] nanos) {
    long[] sorted = nanos.clone();
    java.util.Arrays.sort(sorted);
    return new double[] {sorted[sorted.length / 2] / 1e3, sorted[(int) (sorted.length * 0.99)] / 1e3};
  }

  private static String pct(List<Long> micros, int p) {
    if (micros.isEmpty()) {
      return "-";
    }
    List<Long> sorted = new ArrayList<>(micros);
    Collections.sort(sorted);
    return String.format("%.2f", sorted.get(Math.min(sorted.size() - 1, sorted.size() * p / 100)) / 1000.0);
  }

  private static long heapAfterGc() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
