package io.switchboard.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import io.switchboard.agent.AgentRoom;
import io.switchboard.bus.Addresses;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.Settings;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.Ports;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.LoggerFactory;

/**
 * Agent-path figures for docs/performance.md, each beside a raw-pipe baseline run in the same
 * process: text chunks per second from an agent to a thread subscriber (through the agent room,
 * the thread room's numbering and transcript, and the bus), and the permission round trip an agent
 * sees through the gateway versus a client that answers on the raw pipe at once.
 *
 * <p>Run: {@code mvn -q -B -DskipTests package && java -cp target/switchboard.jar:target/test-classes
 * io.switchboard.bench.AgentBenchmark}; with {@code -Dcluster=true} and {@code target/cluster/*} on the
 * class path, the same again with the surface on another cluster node (loopback).
 */
public final class AgentBenchmark {
  static final int CHUNKS = 20_000;
  static final int PERMISSIONS = 500;

  public static void main(String[] args) throws Exception {
    ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger("ROOT").setLevel(Level.WARN);
    System.out.printf("java %s, %d cores%n", System.getProperty("java.version"),
        Runtime.getRuntime().availableProcessors());
    boolean cluster = Boolean.getBoolean("cluster");
    for (int round = 0; round < 2; round++) {
      String label = round == 0 ? "warm-up" : "measured";
      double raw = rawStream();
      double gateway = gatewayStream(Nodes.single());
      System.out.printf("%s: chunks/s raw pipe %,.0f; through the gateway to a subscriber %,.0f (%.0f%%)%n",
          label, raw, gateway, 100 * gateway / raw);
      for (boolean tls : cluster ? new boolean[] {false, true} : new boolean[0]) {
        double crossNode = gatewayStream(Nodes.cluster(tls));
        System.out.printf("%s: chunks/s to a subscriber on another cluster node%s %,.0f (%.0f%% of the raw pipe)%n",
            label, tls ? " (mutual TLS)" : " (plain bus)", crossNode, 100 * crossNode / raw);
      }
      JsonObject rawRtt = rawPermissions();
      JsonObject gatewayRtt = gatewayPermissions(Nodes.single());
      for (boolean tls : cluster ? new boolean[] {false, true} : new boolean[0]) {
        JsonObject crossRtt = gatewayPermissions(Nodes.cluster(tls));
        System.out.printf("%s: permission round trip answered from another cluster node%s (us) p50 %d p99 %d mean %d; "
                + "added p50 %d us; agent's send to card shown %d, answer to its reply %d%n", label,
            tls ? " (mutual TLS)" : " (plain bus)",
            crossRtt.getLong("p50"), crossRtt.getLong("p99"), crossRtt.getLong("mean"),
            crossRtt.getLong("p50") - rawRtt.getLong("p50"), crossRtt.getLong("toCardP50"),
            crossRtt.getLong("answerToEndedP50"));
      }
      System.out.printf("%s: permission round trip (us) raw pipe p50 %d p99 %d mean %d; gateway p50 %d p99 %d "
              + "mean %d; added p50 %d us%n", label, rawRtt.getLong("p50"), rawRtt.getLong("p99"),
          rawRtt.getLong("mean"), gatewayRtt.getLong("p50"), gatewayRtt.getLong("p99"), gatewayRtt.getLong("mean"),
          gatewayRtt.getLong("p50") - rawRtt.getLong("p50"));
      System.out.printf("%s: of the gateway's round trip, p50 (us): agent's send to card shown %d (ledger row committed "
              + "first); answer to its reply %d (end committed first); the way back to the agent, the rest%n", label,
          gatewayRtt.getLong("toCardP50"), gatewayRtt.getLong("answerToEndedP50"));
    }
    System.exit(0);
  }

  private static long median(List<Long> values) {
    List<Long> sorted;
    synchronized (values) {
      sorted = new ArrayList<>(values);
    }
    Collections.sort(sorted);
    return sorted.isEmpty() ? -1 : sorted.get(sorted.size() / 2);
  }

  private static AgentSpec agent(String mode, int n) {
    return AgentHarness.javaMain("bench", BenchAgent.class, mode, Integer.toString(n));
  }

  /** A client that speaks to the agent on the raw pipe: answers at once, counts chunks. */
  private static final class RawClient implements AutoCloseable {
    final Process process;
    final OutputStream in;
    final BufferedReader out;

    RawClient(AgentSpec spec) throws Exception {
      process = new ProcessBuilder(spec.command()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
      in = process.getOutputStream();
      out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      send("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}");
      out.readLine();
      send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/tmp\",\"mcpServers\":[]}}");
      out.readLine();
    }

    void send(String line) throws Exception {
      in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      in.flush();
    }

    /** Sends a prompt and serves the agent until the prompt's response; returns the last chunk text. */
    String turn(AtomicLong chunks) throws Exception {
      send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"bench\","
          + "\"prompt\":[{\"type\":\"text\",\"text\":\"go\"}]}}");
      String last = null;
      String line;
      while ((line = out.readLine()) != null) {
        JsonObject m = new JsonObject(line);
        if ("session/request_permission".equals(m.getString("method"))) {
          send(new JsonObject().put("jsonrpc", "2.0").put("id", m.getValue("id")).put("result", new JsonObject()
              .put("outcome", new JsonObject().put("outcome", "selected").put("optionId", "allow"))).encode());
        } else if ("session/update".equals(m.getString("method"))) {
          chunks.incrementAndGet();
          last = m.getJsonObject("params").getJsonObject("update").getJsonObject("content").getString("text");
        } else if (Integer.valueOf(2).equals(m.getInteger("id"))) {
          return last;
        }
      }
      throw new IllegalStateException("the agent went away");
    }

    @Override
    public void close() throws Exception {
      in.close();
      process.waitFor(10, TimeUnit.SECONDS);
      process.destroyForcibly();
    }
  }

  private static double rawStream() throws Exception {
    try (RawClient client = new RawClient(agent("stream", CHUNKS))) {
      AtomicLong chunks = new AtomicLong();
      long t0 = System.nanoTime();
      client.turn(chunks);
      return chunks.get() / ((System.nanoTime() - t0) / 1e9);
    }
  }

  private static JsonObject rawPermissions() throws Exception {
    try (RawClient client = new RawClient(agent("permission", PERMISSIONS))) {
      return new JsonObject(client.turn(new AtomicLong()).substring("RTT:".length()));
    }
  }

  /**
   * Where the rooms run and where the surface that subscribes and answers runs: one Vert.x, or two
   * cluster nodes on loopback (an agent node and an edge, as {@code ClusterNode} joins them).
   */
  private record Nodes(Vertx agents, Vertx surfaces) {
    static Nodes single() {
      Vertx vertx = Vertx.vertx();
      return new Nodes(vertx, vertx);
    }

    /** {@code tls}: the event bus with the cluster's mutual TLS (as configured nodes run), else the plain bus to compare. */
    static Nodes cluster(boolean tls) throws Exception {
      int[] ports = {Ports.free(), Ports.free()};
      List<String> members = List.of("127.0.0.1:" + ports[0], "127.0.0.1:" + ports[1]);
      Path certs = tls ? Files.createTempDirectory("sb-bench-tls") : null;
      if (tls) {
        java.time.Instant now = java.time.Instant.now();
        io.switchboard.cluster.ClusterAuthority.create(certs.resolve("ca"), now);
        for (String node : List.of("bench-agents", "bench-edge")) {
          io.switchboard.cluster.ClusterAuthority.issue(certs.resolve("ca"), node, "127.0.0.1", certs.resolve(node), 90,
              now);
        }
      }
      Vertx agents = io.switchboard.cluster.ClusterNode.join(new io.vertx.core.VertxOptions(), new Settings.Cluster(
          "bench-agents", Settings.Cluster.Role.AGENT, "127.0.0.1", ports[0], Ports.free(), members, 5, 60,
          tls ? certs.resolve("bench-agents") : null), "a").await(60, TimeUnit.SECONDS);
      Vertx surfaces = io.switchboard.cluster.ClusterNode.join(new io.vertx.core.VertxOptions(), new Settings.Cluster(
          "bench-edge", Settings.Cluster.Role.EDGE, "127.0.0.1", ports[1], Ports.free(), members, 5, 60,
          tls ? certs.resolve("bench-edge") : null), "e").await(60, TimeUnit.SECONDS);
      return new Nodes(agents, surfaces);
    }

    void close() throws Exception {
      if (surfaces != agents) {
        surfaces.close().await(30, TimeUnit.SECONDS);
      }
      agents.close().await(30, TimeUnit.SECONDS);
    }

    /** A consumer on the surfaces' side, registered (cluster-wide) before anything is sent to it. */
    <T> void consumer(String address, io.vertx.core.Handler<io.vertx.core.eventbus.Message<T>> handler)
        throws Exception {
      surfaces.eventBus().<T>consumer(address, handler).completion().await(30, TimeUnit.SECONDS);
    }
  }

  private static double gatewayStream(Nodes nodes) throws Exception {
    Vertx vertx = nodes.agents();
    Path dir = Files.createTempDirectory("sb-agent-bench");
    try (AgentHarness gateway = new AgentHarness(vertx, dir, AgentRoom.Timings.DEFAULT, agent("stream", CHUNKS))) {
      gateway.start();
      String t = gateway.unrecordedThread("bench", "web");
      // Counted as they arrive, turns awaited on latches: the harness's recorded event list (copied
      // at every event) and polling it took up to a core from the gateway being measured.
      AtomicLong chunks = new AtomicLong();
      CountDownLatch warmEnded = new CountDownLatch(1);
      CountDownLatch ended = new CountDownLatch(2);
      nodes.<JsonObject>consumer(Addresses.threadEvents(t), m -> {
        String kind = m.body().getJsonObject("event").getString("kind");
        if ("acp".equals(kind)) {
          chunks.incrementAndGet();
        } else if ("turn_ended".equals(kind)) {
          warmEnded.countDown();
          ended.countDown();
        }
      });
      // Start the agent first so process start-up is not counted.
      gateway.prompt(t, "warm");
      await(warmEnded, "the first turn");
      long before = chunks.get();
      ThreadCpu cpu = new ThreadCpu();
      long t0 = System.nanoTime();
      gateway.prompt(t, "go");
      await(ended, "the streaming turn");
      double seconds = (System.nanoTime() - t0) / 1e9;
      System.out.printf("  streaming through the gateway: threads busy %s%n", cpu.report());
      long counted = chunks.get() - before;
      if (counted != CHUNKS) {
        throw new IllegalStateException("a subscriber saw " + counted + " of " + CHUNKS + " chunks");
      }
      return counted / seconds;
    } finally {
      nodes.close();
    }
  }

  private static void await(CountDownLatch latch, String what) throws InterruptedException {
    if (!latch.await(120, TimeUnit.SECONDS)) {
      throw new IllegalStateException(what + " did not end within 2 minutes");
    }
  }

  private static JsonObject gatewayPermissions(Nodes nodes) throws Exception {
    Vertx vertx = nodes.agents();
    Vertx surface = nodes.surfaces();
    Path dir = Files.createTempDirectory("sb-agent-bench");
    try (AgentHarness gateway = new AgentHarness(vertx, dir, AgentRoom.Timings.DEFAULT,
        agent("permission", PERMISSIONS))) {
      gateway.start();
      // The round trip's first two stages, timed by this surface: from the agent's send to the card
      // (pipe, agent room, ledger row committed, card published) and from the answer to its reply
      // (the end committed); the rest is the way back to the agent.
      List<Long> toCard = Collections.synchronizedList(new ArrayList<>());
      List<Long> answerToEnded = Collections.synchronizedList(new ArrayList<>());
      nodes.<JsonObject>consumer(Addresses.PERMISSION_SHOWN, m -> {
        long shown = BenchClock.micros();
        toCard.add(shown - m.body().getJsonObject("toolCall").getJsonObject("rawInput").getLong("sentAtMicros"));
        surface.eventBus().request(Addresses.PERMISSION_ANSWER, new JsonObject()
            .put("requestId", m.body().getString("requestId")).put("optionId", "allow").put("surface", "web"))
            .onSuccess(r -> answerToEnded.add(BenchClock.micros() - shown));
      });
      String t = gateway.unrecordedThread("bench", "web");
      CountDownLatch ended = new CountDownLatch(1);
      AtomicReference<String> report = new AtomicReference<>();
      nodes.<JsonObject>consumer(Addresses.threadEvents(t), m -> {
        JsonObject e = m.body().getJsonObject("event");
        String text = "acp".equals(e.getString("kind"))
            ? e.getJsonObject("update").getJsonObject("content", new JsonObject()).getString("text") : null;
        if (text != null && text.startsWith("RTT:")) {
          report.set(text.substring(4));
        } else if ("turn_ended".equals(e.getString("kind"))) {
          ended.countDown();
        }
      });
      gateway.prompt(t, "go");
      await(ended, "the permission turn");
      return new JsonObject(report.get())
          .put("toCardP50", median(toCard)).put("answerToEndedP50", median(answerToEnded));
    } finally {
      nodes.close();
    }
  }
}
