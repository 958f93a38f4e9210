package io.switchboard.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.LoggerFactory;

/**
 * Load on the real jar: the gateway runs as a process of its own (by default with the systemd
 * unit's flags, {@code -Xmx64m} and SerialGC) and this JVM is the 500 browsers: /ws/chat sockets
 * over 50 threads, 10 each, one of each ten a reader that stops. Each thread has a light Python
 * agent (src/test/resources/bench/load_agent.py). Phases: the agents' start (an empty turn each);
 * streaming turns with 5 permission round trips per thread (a warm-up round, the sweep's paces,
 * then the measured one); a flood of 64 KiB chunks that the stopped readers cannot take; 10,000
 * permission requests pending at once, cancelled by SIGTERM. Prints latencies, the gateway's CPU,
 * its heap after a GC and its resident memory (peak per phase, sampled from /proc), beside a bare
 * Vert.x WebSocket echo server run with the same flags.
 *
 * <p>Run: {@code mvn -q -B -DskipTests package && java -Xmx1g -cp target/switchboard.jar:target/test-classes
 * io.switchboard.bench.LoadBenchmark} ({@code -DpauseMs=5} for agents at a faster pace, {@code -Dsweep=100,50}
 * for rounds at other paces first, {@code -DstreamingOnly=true} to stop after them,
 * {@code -DgatewayJvm="..."} for other gateway flags).
 */
public final class LoadBenchmark {
  static final int THREADS = 50;
  static final int SOCKETS_PER_THREAD = Integer.getInteger("sockets", 10);
  static final int CHUNKS = 200;
  /** Milliseconds between an agent's chunks: 5 is a fast model; 20 is closer to what agents emit. */
  static final int PAUSE_MS = Integer.getInteger("pauseMs", 20);
  /** Paces (ms between an agent's chunks) of the rounds before the measured one: the chart's curve. */
  static final List<Integer> SWEEP = java.util.Arrays.stream(System.getProperty("sweep", "").split(","))
      .filter(x -> !x.isBlank()).map(x -> Integer.valueOf(x.trim())).toList();
  /**
   * The flood: MiB per thread, on a few threads, more than a stopped reader's kernel buffers and its
   * 4 MiB queue together hold.
   */
  static final int FLOOD_MIB = Integer.getInteger("floodMiB", 12);
  static final int FLOOD_THREADS = Integer.getInteger("floodThreads", 5);
  static final int HELD = 10_000;
  /** {@code -DstreamingOnly=true}: stop after the streaming phase (to profile it). */
  static final boolean STREAMING_ONLY = Boolean.getBoolean("streamingOnly");
  /** packaging/switchboard.service's flags; its class-data-sharing archive is made here (-Dcds=false: none). */
  static final String UNIT_FLAGS = "-Xmx64m -Xms16m -Xss512k -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxDirectMemorySize=32m "
      + "-Dio.netty.allocator.numDirectArenas=2 -XX:+ExitOnOutOfMemoryError";

  private final List<Long> chunkLatencyMicros = Collections.synchronizedList(new ArrayList<>());
  /** The same chunks' latency split at the event's {@code at} (when the thread room numbered it). */
  private final List<Long> toNumberedMicros = Collections.synchronizedList(new ArrayList<>());
  private final List<Long> fromNumberedMicros = Collections.synchronizedList(new ArrayList<>());
  private final List<Long> rttNanos = Collections.synchronizedList(new ArrayList<>());
  private final java.util.Set<String> answered = ConcurrentHashMap.newKeySet();
  private final java.util.Set<String> heldCards = ConcurrentHashMap.newKeySet();
  /** Requests the gateway refused (too-many-pending) rather than holding. */
  private final java.util.Set<String> refused = ConcurrentHashMap.newKeySet();
  private volatile boolean answering = true;
  private volatile CountDownLatch turnsEnded;

  public static void main(String[] args) throws Exception {
    ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger("ROOT").setLevel(Level.ERROR);
    new LoadBenchmark().run();
    System.exit(0);
  }

  private void run() throws Exception {
    List<String> flags = new ArrayList<>(List.of(System.getProperty("gatewayJvm", UNIT_FLAGS).trim().split("\\s+")));
    Path dir = Files.createTempDirectory("sb-load");
    if (!"false".equals(System.getProperty("cds"))) {
      flags.addAll(List.of("-XX:SharedArchiveFile=" + JarGateway.classDataArchive(dir, flags), "-Xshare:auto"));
    } else {
      flags.add("-Xshare:auto"); // the JDK's own archive alone (JarGateway adds the jar's otherwise)
    }
    Path script = Path.of("target", "test-classes", "bench", "load_agent.py").toAbsolutePath();
    Path config = dir.resolve("switchboard.json");
    Files.writeString(config, new JsonObject().put("http", new JsonObject().put("port", 0))
        .put("dataDir", dir.resolve("data").toString()).put("defaultAgent", "bench")
        // One process per thread, all at once: the load is the gateway's, not the pool's.
        .put("agentProcesses", new JsonObject().put("max", 2 * THREADS))
        .put("agents", new JsonArray().add(new JsonObject().put("id", "bench").put("command", new JsonArray()
            .add("python3").add(script.toString()).add(Integer.toString(CHUNKS)).add(Integer.toString(PAUSE_MS)))))
        .encodePrettily());
    // -DgatewayEnv=K=V,K2=V2: environment for the gateway (default: the unit's MALLOC_ARENA_MAX=2).
    java.util.Map<String, String> env = new java.util.HashMap<>();
    for (String kv : System.getProperty("gatewayEnv", "MALLOC_ARENA_MAX=2").split(",")) {
      if (kv.contains("=")) {
        env.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
      }
    }
    JarGateway gateway = JarGateway.start(dir, config, flags, 0, env);
    long pid = gateway.process().pid();
    String token = gateway.token();
    ProcessSampler sampler = new ProcessSampler(pid);
    var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    System.out.printf("gateway: pid %d, java %s, %s%s; clients: this JVM, %d cores; log %s%n", pid,
        System.getProperty("java.version"), String.join(" ", flags), env.isEmpty() ? "" : ", env " + env, Runtime.getRuntime().availableProcessors(),
        dir.resolve("gateway.log"));
    Thread.sleep(2_000);
    System.out.printf("idle, no socket: RSS %d MiB, heap after GC %d MiB%n", sampler.rssKib() >> 10,
        heapAfterGc(pid, gateway.port(), token));

    Vertx vertx = Vertx.vertx();
    ChatClient control = ChatClient.open(vertx, gateway.port(), token);
    control.next("welcome");
    List<String> threads = new ArrayList<>();
    for (int i = 0; i < THREADS; i++) {
      int ref = i;
      control.send(new JsonObject().put("type", "new_thread").put("clientRef", ref));
      threads.add(control.next(f -> "thread".equals(f.getString("type")) && Integer.valueOf(ref).equals(f.getValue("clientRef")),
          "thread " + ref).getString("threadId"));
    }
    List<ChatClient> sockets = new ArrayList<>();
    List<ChatClient> measuring = new ArrayList<>();
    List<ChatClient> stalled = new ArrayList<>();
    for (String t : threads) {
      for (int s = 0; s < SOCKETS_PER_THREAD; s++) {
        ChatClient c = ChatClient.open(vertx, gateway.port(), token);
        boolean measures = s == 0;
        c.ws.textMessageHandler(text -> received(c.ws, text, measures));
        c.send(new JsonObject().put("type", "attach").put("threadId", t));
        if (s == SOCKETS_PER_THREAD - 1) {
          c.ws.pause(); // this browser stops reading
          stalled.add(c);
        }
        if (measures) {
          measuring.add(c);
        }
        sockets.add(c);
      }
    }
    Thread.sleep(1_000);
    System.out.printf("%d sockets open over %d threads (%d stop reading): RSS %d MiB%n", sockets.size(),
        threads.size(), stalled.size(), sampler.rssKib() >> 10);
    diagnose(pid, "0-sockets");

    // The web layer's own cost, beside a bare Vert.x WebSocket echo process with as many sockets open.
    double[] gatewayPing = pingRoundTrips(sockets.get(1).ws, 2_000);
    double[] bareEcho = bareEchoRoundTrips(vertx, flags, sockets.size(), 2_000);
    System.out.printf("one at a time with %d sockets open: /ws/chat ping->pong p50 %.0f us, p99 %.0f us; "
        + "bare Vert.x WebSocket echo p50 %.0f us, p99 %.0f us%n", sockets.size(), gatewayPing[0], gatewayPing[1],
        bareEcho[0], bareEcho[1]);
    sampler.takePeakMib();

    // Phase 0: every thread's agent starts (spawned at its first prompt) and answers an empty turn, so the
    // streaming phase measures streaming, not 50 process starts at once.
    Phase starting = new Phase(sampler, os);
    turnsEnded = new CountDownLatch(THREADS);
    for (int i = 0; i < THREADS; i++) {
      measuring.get(i).send(new JsonObject().put("type", "prompt").put("threadId", threads.get(i)).put("text", "big 0"));
    }
    await(turnsEnded, "the agents' starts", gateway.process());
    starting.end();
    System.out.printf("agents started: %d processes spawned and their first (empty) turns ended in %.1f s; %s%n",
        THREADS, starting.seconds, starting);

    // Phase 1: every thread streams CHUNKS stamped chunks, then asks 5 permissions, answered from a browser.
    // A first round warms the gateway's JIT (a running gateway is warm; its first seconds are not what a
    // user lives with), then one round per pace of the sweep, the 2,500 chunks/s last.
    streamRound(measuring, threads, gateway, sampler, os, PAUSE_MS, "warm-up round (not counted)");
    for (int pause : SWEEP) {
      streamRound(measuring, threads, gateway, sampler, os, pause, "sweep");
    }
    Phase streaming = streamRound(measuring, threads, gateway, sampler, os, PAUSE_MS, "streaming");
    List<Long> rttMicros = rttNanos.stream().map(n -> n / 1000).toList();
    System.out.printf("  permission round trip (agent's view, a browser answers): p50 %s ms, p99 %s ms (%d)%n",
        pct(rttMicros, 50), pct(rttMicros, 99), rttMicros.size());
    System.out.printf("  gateway heap after GC %d MiB%n", heapAfterGc(pid, gateway.port(), token));
    diagnose(pid, "1-streaming");
    if (STREAMING_ONLY) {
      gateway.process().destroy();
      gateway.process().waitFor(2, TimeUnit.MINUTES);
      sampler.close();
      return; // (main exits the JVM)
    }

    // Phase 2: a flood of 64 KiB chunks on a few threads; the readers that stopped cannot take it.
    answering = false;
    Phase flood = new Phase(sampler, os);
    double ended = metric(gateway.port(), token, "switchboard_turns_ended_total");
    for (int i = 0; i < FLOOD_THREADS; i++) {
      control.send(new JsonObject().put("type", "prompt").put("threadId", threads.get(i))
          .put("text", "big " + FLOOD_MIB * 16));
    }
    PermissionHarness.waitFor(() -> {
      try {
        return !gateway.process().isAlive()
            || metric(gateway.port(), token, "switchboard_turns_ended_total") >= ended + FLOOD_THREADS;
      } catch (Exception e) {
        return true;
      }
    }, "the flood", TimeUnit.MINUTES.toMillis(5));
    if (!gateway.process().isAlive()) {
      throw new IllegalStateException("the gateway died (exit " + gateway.process().exitValue() + ") in the flood");
    }
    flood.end();
    System.out.printf("flood: %d threads x %d MiB in 64 KiB chunks to each of their %d sockets in %.1f s; %s%n",
        FLOOD_THREADS, FLOOD_MIB, FLOOD_THREADS * SOCKETS_PER_THREAD, flood.seconds, flood);
    List<ChatClient> flooded = sockets.subList(0, FLOOD_THREADS * SOCKETS_PER_THREAD);
    stalled.forEach(c -> c.ws.resume()); // so they read the close frame, if the gateway sent one
    Thread.sleep(3_000);
    long stalledClosed = flooded.stream().filter(stalled::contains).filter(c -> c.closeCode != null).count();
    long readersClosed = flooded.stream().filter(c -> !stalled.contains(c) && c.closeCode != null).count();
    System.out.printf("  readers that stopped, closed by the gateway: %d of %d; readers that read, closed: %d of %d%n",
        stalledClosed, FLOOD_THREADS, readersClosed, FLOOD_THREADS * (SOCKETS_PER_THREAD - 1));
    System.out.printf("  gateway heap after GC %d MiB%n", heapAfterGc(pid, gateway.port(), token));
    List<ChatClient> open = sockets.stream().filter(c -> c.closeCode == null).toList();

    // Phase 3: 10,000 permission requests pending at once, their cards on every attached socket.
    Phase holding = new Phase(sampler, os);
    for (int i = 0; i < THREADS; i++) {
      control.send(new JsonObject().put("type", "prompt").put("threadId", threads.get(i))
          .put("text", "hold " + HELD / THREADS));
    }
    // All shown, or the count stopped growing: the gateway holds at most a number its heap allows and
    // leaves the rest in the agents' pipes until questions end.
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    int seen = -1;
    while (heldCards.size() + refused.size() < HELD && heldCards.size() + refused.size() != seen) {
      if (!gateway.process().isAlive()) {
        throw new IllegalStateException("the gateway died (exit " + gateway.process().exitValue() + ") holding cards");
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("cards still coming after 5 minutes");
      }
      seen = heldCards.size() + refused.size();
      Thread.sleep(3_000);
    }
    holding.end();
    System.out.printf("%,d permission requests asked at once: %,d pending with cards on %d open sockets, %,d refused "
        + "(too-many-pending), %,d waiting unread in their agents' pipes; in %.1f s; %s%n", HELD, heldCards.size(),
        open.size(), refused.size(), HELD - heldCards.size() - refused.size(), holding.seconds, holding);
    System.out.printf("  gateway heap after GC %d MiB, RSS %d MiB%n", heapAfterGc(pid, gateway.port(), token),
        sampler.rssKib() >> 10);
    diagnose(pid, "3-holding");

    long s0 = System.nanoTime();
    gateway.process().destroy(); // SIGTERM: cancel every pending request, ledger first, then stop
    boolean exited = gateway.process().waitFor(2, TimeUnit.MINUTES);
    System.out.printf("SIGTERM to exit: %.0f ms (exit %s); the gateway's log: %s%n", (System.nanoTime() - s0) / 1e6,
        exited ? gateway.process().exitValue() : "none", grep(dir.resolve("gateway.log"), "pending permission requests cancelled"));
    Process ledger = new ProcessBuilder("java", "-jar", JarGateway.JAR.toString(), "ledger", "--data-dir",
        dir.resolve("data").toString(), "--state", "pending", "--json").redirectErrorStream(true).start();
    String pending = new String(ledger.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    ledger.waitFor();
    System.out.printf("ledger afterwards: %d requests still pending (must be 0)%n",
        pending.strip().startsWith("[") ? new JsonArray(pending).size() : -1);
    sampler.close();
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  /** One streaming turn on every thread at one pace; prints its chunk latency and returns its measures. */
  private Phase streamRound(List<ChatClient> measuring, List<String> threads, JarGateway gateway, ProcessSampler sampler,
      com.sun.management.OperatingSystemMXBean os, int pauseMs, String label) throws InterruptedException {
    chunkLatencyMicros.clear();
    toNumberedMicros.clear();
    fromNumberedMicros.clear();
    rttNanos.clear();
    Phase round = new Phase(sampler, os);
    turnsEnded = new CountDownLatch(THREADS);
    for (int i = 0; i < THREADS; i++) {
      measuring.get(i).send(new JsonObject().put("type", "prompt").put("threadId", threads.get(i))
          .put("text", "go " + pauseMs));
    }
    await(turnsEnded, "the streaming turns", gateway.process());
    round.end();
    System.out.printf("%s: %d turns of %d chunks (%d ms apart: %,d chunks/s in all) and 5 permissions each in %.1f s; "
        + "%s%n", label, THREADS, CHUNKS, pauseMs, THREADS * 1000 / pauseMs, round.seconds, round);
    System.out.printf("  chunk latency agent->browser at %,d chunks/s: p50 %s ms, p99 %s ms (%d samples)%n",
        THREADS * 1000 / pauseMs, pct(chunkLatencyMicros, 50), pct(chunkLatencyMicros, 99), chunkLatencyMicros.size());
    System.out.printf("    of which agent->numbered by the thread room p50 %s ms, p99 %s ms; numbered->browser p50 %s ms, "
        + "p99 %s ms%n", pct(toNumberedMicros, 50), pct(toNumberedMicros, 99), pct(fromNumberedMicros, 50),
        pct(fromNumberedMicros, 99));
    return round;
  }

  /** A frame on a browser socket: answers cards while answering, times stamped chunks, counts turn ends. */
  private void received(WebSocket ws, String text, boolean measures) {
    if (text.length() > 8192) {
      return; // a flood chunk: nothing to read in it
    }
    if (!measures && text.startsWith("{\"type\":\"event\"")) {
      return; // a browser would draw it; the load clients share two cores with the gateway, so only one socket a thread reads events
    }
    JsonObject f = new JsonObject(text);
    String type = f.getString("type");
    if ("permission_request".equals(type)) {
      String id = f.getString("requestId");
      if (answering && answered.add(id)) {
        ws.writeTextMessage(new JsonObject().put("type", "permission_answer").put("requestId", id)
            .put("optionId", "allow").encode());
      } else if (!answering && f.getJsonObject("toolCall", new JsonObject()).getString("toolCallId", "").startsWith("hold-")) {
        heldCards.add(id); // (a reader that resumed also gets the first phase's cards, answered long ago)
      }
    } else if ("permission_resolved".equals(type)) {
      JsonObject outcome = f.getJsonObject("outcome", new JsonObject());
      if ("too-many-pending".equals(outcome.getString("reason"))) {
        refused.add(f.getString("requestId"));
      }
    } else if (measures && "event".equals(type)) {
      JsonObject e = f.getJsonObject("event");
      if ("turn_ended".equals(e.getString("kind"))) {
        turnsEnded.countDown();
        return;
      }
      JsonObject u = e.getJsonObject("update");
      String chunk = u == null ? null : u.getJsonObject("content", new JsonObject()).getString("text");
      if (chunk != null && chunk.startsWith("T")) {
        long nowMicros = BenchClock.micros();
        long stamp = Long.parseLong(chunk.substring(1).trim());
        chunkLatencyMicros.add(nowMicros - stamp);
        long at = f.getLong("at") * 1000; // milliseconds: the split is good to a millisecond
        toNumberedMicros.add(at - stamp);
        fromNumberedMicros.add(nowMicros - at);
      } else if (chunk != null && chunk.startsWith("RTTS:")) {
        new JsonArray(chunk.substring(5)).forEach(n -> rttNanos.add(((Number) n).longValue()));
      }
    }
  }

  /** Wall time, the gateway's CPU and peak RSS, and this JVM's CPU over one phase. */
  private static final class Phase {
    final ProcessSampler sampler;
    final com.sun.management.OperatingSystemMXBean os;
    final long t0 = System.nanoTime();
    final double gatewayCpu0;
    final long clientCpu0;
    final long[] machine0 = ProcessSampler.machineTicks();
    double machineBusy;
    double seconds;
    double gatewayCpu;
    double clientCpu;
    long peakMib;

    Phase(ProcessSampler sampler, com.sun.management.OperatingSystemMXBean os) {
      this.sampler = sampler;
      this.os = os;
      gatewayCpu0 = sampler.cpuSeconds();
      clientCpu0 = os.getProcessCpuTime();
      sampler.takePeakMib();
    }

    void end() {
      seconds = (System.nanoTime() - t0) / 1e9;
      gatewayCpu = sampler.cpuSeconds() - gatewayCpu0;
      clientCpu = (os.getProcessCpuTime() - clientCpu0) / 1e9;
      peakMib = sampler.takePeakMib();
      long[] machine = ProcessSampler.machineTicks();
      machineBusy = (double) (machine[0] - machine0[0]) / Math.max(1, machine[1] - machine0[1]);
    }

    @Override
    public String toString() {
      return String.format("gateway CPU %.1f s (%.0f%% of 2 cores), clients' CPU %.1f s, machine busy %.0f%%; "
          + "gateway peak RSS %d MiB", gatewayCpu, 100 * gatewayCpu / seconds / 2, clientCpu, 100 * machineBusy, peakMib);
    }
  }

  private static void await(CountDownLatch latch, String what, Process gateway) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    while (!latch.await(1, TimeUnit.SECONDS)) {
      if (!gateway.isAlive()) {
        throw new IllegalStateException("the gateway died (exit " + gateway.exitValue() + ") during " + what);
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(what + " did not end: " + latch.getCount() + " left");
      }
    }
  }

  /** {p50, p99} in microseconds of ping->pong on a /ws/chat socket. */
  private static double[] pingRoundTrips(WebSocket ws, int n) throws Exception {
    var pong = new LinkedBlockingQueue<Long>();
    ws.textMessageHandler(t -> {
      if (t.contains("\"pong\"")) {
        pong.add(System.nanoTime());
      }
    });
    long[] rtt = new long[n];
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      ws.writeTextMessage("{\"type\":\"ping\"}");
      rtt[i] = pong.take() - t0;
    }
    return percentiles(rtt);
  }

  /** The same round trip against {@link EchoServer} run with the gateway's flags and {@code open} sockets. */
  private static double[] bareEchoRoundTrips(Vertx vertx, List<String> flags, int open, int n) throws Exception {
    List<String> argv = new ArrayList<>(List.of("java"));
    argv.addAll(flags);
    argv.addAll(List.of("-cp", System.getProperty("java.class.path"), EchoServer.class.getName()));
    Process server = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
      String line = out.readLine();
      while (line != null && !line.startsWith("port ")) { // the JVM may print its own lines first
        line = out.readLine();
      }
      int port = Integer.parseInt(line.substring("port ".length()));
      var client = vertx.createWebSocketClient(new io.vertx.core.http.WebSocketClientOptions().setMaxConnections(open + 10));
      List<WebSocket> clients = new ArrayList<>();
      for (int i = 0; i < open; i++) {
        clients.add(client.connect(port, "127.0.0.1", "/").await(10, TimeUnit.SECONDS));
      }
      var echo = new LinkedBlockingQueue<Long>();
      clients.get(0).textMessageHandler(t -> echo.add(System.nanoTime()));
      long[] rtt = new long[n];
      for (int i = 0; i < n; i++) {
        long t0 = System.nanoTime();
        clients.get(0).writeTextMessage("{\"type\":\"ping\"}");
        rtt[i] = echo.take() - t0;
      }
      clients.forEach(WebSocket::close);
      return percentiles(rtt);
    } finally {
      server.getOutputStream().close();
      server.waitFor(10, TimeUnit.SECONDS);
      server.destroy();
    }
  }

  /**
   * With {@code -Ddiagnose=DIR}: the gateway's class histogram and, if it runs with
   * {@code -XX:NativeMemoryTracking=summary}, its native memory, into DIR/PHASE-*.txt.
   */
  private static void diagnose(long pid, String phase) throws Exception {
    String dir = System.getProperty("diagnose");
    if (dir == null) {
      return;
    }
    Files.createDirectories(Path.of(dir));
    for (String[] command : List.of(new String[] {"GC.class_histogram", "histogram"},
        new String[] {"VM.native_memory", "native"})) {
      new ProcessBuilder("jcmd", Long.toString(pid), command[0])
          .redirectOutput(Path.of(dir, phase + "-" + command[1] + ".txt").toFile()).start().waitFor(60, TimeUnit.SECONDS);
    }
  }

  /** The gateway's heap in MiB after a full GC, from its own /metrics. */
  private static long heapAfterGc(long pid, int port, String token) throws Exception {
    new ProcessBuilder("jcmd", Long.toString(pid), "GC.run").redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start().waitFor(30, TimeUnit.SECONDS);
    return (long) metric(port, token, "jvm_memory_used_bytes\\{area=\"heap\"[^}]*}") >> 20;
  }

  /** The sum of the gateway's /metrics lines whose name and labels match {@code series} (a regex). */
  private static double metric(int port, String token, String series) throws Exception {
    String text = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
        .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString()).body();
    Matcher m = Pattern.compile("(?m)^" + series + " ([0-9.eE+-]+)$").matcher(text);
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
    }
    return sum;
  }

  private static String grep(Path file, String what) throws Exception {
    return Files.readAllLines(file).stream().filter(l -> l.contains(what)).findFirst().orElse("(no such line)").strip();
  }

  private static double[] percentiles(long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
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
}
