package io.switchboard.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.JarGateway;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster mode with real JVMs on loopback: an edge node (web) and an agent node (the demo agent,
 * its ledger), each the jar with the cluster libraries. A browser on the edge drives the agent on
 * the other node and answers its question; the agent node's ledger ends the request once. Then the
 * agent node is killed (SIGKILL): the edge's page is told, in bounded time, instead of waiting;
 * started again on the same data, the same thread goes on.
 */
class ClusterIT {
  @TempDir
  Path dir;
  final List<Process> nodes = new ArrayList<>();
  final Vertx vertx = Vertx.vertx();

  @AfterEach
  void stop() throws Exception {
    nodes.forEach(Process::destroyForcibly);
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static List<String> members(int[] ports) {
    return java.util.Arrays.stream(ports).mapToObj(p -> "127.0.0.1:" + p).toList();
  }

  private Path config(String node, String role, int port, int busPort, List<String> members) throws Exception {
    JsonObject config = new JsonObject().put("dataDir", dir.resolve(node).resolve("data").toString())
        .put("http", new JsonObject().put("port", 0))
        .put("cluster", new JsonObject().put("node", node).put("role", role).put("host", "127.0.0.1")
            .put("port", port).put("busPort", busPort).put("members", new JsonArray(members)));
    Path file = dir.resolve(node + ".json");
    Files.writeString(file, config.encodePrettily());
    return file;
  }

  private JarGateway start(String node, Path config) throws Exception {
    JarGateway started = JarGateway.startNode(dir.resolve(node), config, List.of("-Xmx256m", "-XX:+UseSerialGC"));
    nodes.add(started.process());
    return started;
  }

  @Test
  void anEdgeAndAnAgentNodeServeOneChatAndTheEdgeIsToldWhenTheAgentNodeDies() throws Exception {
    int[] ports = {freePort(), freePort()};
    Path edgeConfig = config("edge", "edge", ports[0], freePort(), members(ports));
    Path agentConfig = config("build", "agent", ports[1], freePort(), members(ports));

    JarGateway agentNode = start("build", agentConfig);
    JarGateway edge = start("edge", edgeConfig);
    assertTrue(edge.port() > 0, "the edge serves the web");

    ChatClient web = ChatClient.open(vertx, edge.port(), edge.token());
    web.next("welcome");
    String thread = web.send(new JsonObject().put("type", "new_thread").put("agent", "demo").put("clientRef", "c1"))
        .next(f -> "thread".equals(f.getString("type")) && "c1".equals(f.getString("clientRef")), "the new thread")
        .getString("threadId");
    web.send(new JsonObject().put("type", "attach").put("threadId", thread));
    web.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", "edit something"));
    JsonObject card = web.next("permission_request");
    web.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
        .put("optionId", card.getJsonArray("options").getJsonObject(0).getString("optionId")));
    JsonObject resolved = web.next(f -> "permission_resolved".equals(f.getString("type"))
        && card.getString("requestId").equals(f.getString("requestId")), "the answer's end state");
    assertEquals("selected", resolved.getJsonObject("outcome").getString("outcome"));
    web.next(f -> "event".equals(f.getString("type"))
        && "turn_ended".equals(f.getJsonObject("event").getString("kind")), "the turn's end");

    // The agent node's ledger has the request, ended once, by the web surface on the edge.
    JsonArray ledger = ledger(dir.resolve("build").resolve("data"));
    assertEquals(1, ledger.size(), ledger.encodePrettily());
    assertEquals("web", ledger.getJsonObject(0).getJsonObject("outcome").getJsonObject("answeredBy")
        .getString("surface"));
    web.drain();

    // A second question, left waiting when the agent node dies.
    web.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", "edit again"));
    JsonObject waiting = web.next(f -> "permission_request".equals(f.getString("type"))
        && !card.getString("requestId").equals(f.getString("requestId")), "the second card");

    // SIGKILL the agent node: the page is told it left (the cluster notices within its member
    // timeout), the waiting card is marked stale, and a prompt then is refused at once as
    // unavailable, not left waiting.
    agentNode.process().destroyForcibly();
    assertTrue(agentNode.process().waitFor(20, TimeUnit.SECONDS));
    long t0 = System.nanoTime();
    JsonObject left = web.next(f -> "error".equals(f.getString("type")) && f.getString("message", "")
        .contains("left the cluster"), "the notice that the agent node left", 60);
    assertEquals("unavailable", left.getString("code"));
    assertTrue(left.getString("message").startsWith("agent node build left the cluster"), left.encode());
    System.out.printf("cluster: the page heard the agent node left %d ms after its SIGKILL%n",
        (System.nanoTime() - t0) / 1_000_000);
    JsonObject stale = web.next(f -> "permission_stale".equals(f.getString("type")), "the stale mark", 10);
    assertTrue(stale.getBoolean("stale"));
    assertEquals(new JsonArray().add(waiting.getString("requestId")), stale.getJsonArray("requestIds"));
    long t1 = System.nanoTime();
    web.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", "hello").put("clientRef", "p2"));
    JsonObject refused = web.next(f -> "error".equals(f.getString("type")) && "p2".equals(f.getString("clientRef")),
        "an error for the prompt", 60);
    assertEquals("unavailable", refused.getString("code"), refused.encode());
    // Refused by the edge, which knows the node left: not a 30 s wait on a dead node's connection.
    assertTrue(refused.getString("message").startsWith("agent node build left the cluster"), refused.encode());
    System.out.printf("cluster: a prompt while the agent node was gone was refused in %d ms: %s%n",
        (System.nanoTime() - t1) / 1_000_000, refused.encode());

    // Started again on the same data: the request that died with it ends (voided by the restart, in
    // its ledger first) and the page hears it; the thread goes on from the edge's page.
    start("build", agentConfig);
    JsonObject voided = web.next(f -> "permission_resolved".equals(f.getString("type"))
        && waiting.getString("requestId").equals(f.getString("requestId")), "the waiting request's end", 60);
    assertEquals("voided-by-restart", voided.getJsonObject("outcome").getString("reason"), voided.encode());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      web.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", "hello again"));
      try {
        web.next(f -> "event".equals(f.getString("type"))
            && "user_message".equals(f.getJsonObject("event").getString("kind"))
            && "hello again".equals(f.getJsonObject("event").getString("text")), "the prompt through the restarted "
            + "agent node", 3);
        break;
      } catch (AssertionError notYet) {
        if (System.nanoTime() > deadline) {
          throw notYet;
        }
      }
    }
    // Each request ended once in the agent node's ledger: the answered one and the voided one.
    JsonArray after = ledger(dir.resolve("build").resolve("data"));
    assertEquals(2, after.size(), after.encodePrettily());
    assertTrue(after.stream().allMatch(r -> ((JsonObject) r).getJsonObject("outcome") != null), after.encodePrettily());
  }

  @Test
  void aSecondAgentNodeIsRefusedAndAClusterWithoutItsLibrariesSaysWhatIsMissing() throws Exception {
    int[] ports = {freePort(), freePort()};
    start("build", config("build", "agent", ports[0], freePort(), members(ports)));
    Path other = config("build-2", "agent", ports[1], freePort(), members(ports));
    // Two stores would each answer half of the requests: the second agent node stops instead.
    String out = exitsWithError("-Xmx256m", "-cp", JarGateway.JAR + java.io.File.pathSeparator + JarGateway.CLUSTER_LIBS
        + "/*", "io.switchboard.Main", "--config", other.toString());
    assertTrue(out.contains("another agent node already runs in this cluster (agent node build"), out);

    // The jar alone (as `java -jar`) has no cluster manager: it says so and what to run instead.
    String said = exitsWithError("-jar", JarGateway.JAR.toString(), "--config", other.toString());
    assertTrue(said.contains("cluster mode needs the cluster libraries on the class path"), said);
  }

  /** Runs java with these arguments; it must exit 1 within a minute. Returns what it printed. */
  private String exitsWithError(String... args) throws Exception {
    List<String> argv = new ArrayList<>(List.of("java"));
    argv.addAll(List.of(args));
    Path out = Files.createTempFile(dir, "out", ".txt");
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    nodes.add(p);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "still running: " + Files.readString(out));
    String printed = Files.readString(out);
    assertEquals(1, p.exitValue(), printed);
    return printed;
  }

  private static JsonArray ledger(Path dataDir) throws Exception {
    Process p = new ProcessBuilder("java", "-jar", JarGateway.JAR.toString(), "ledger", "--data-dir",
        dataDir.toString(), "--json").redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    return new JsonArray(out);
  }
}
