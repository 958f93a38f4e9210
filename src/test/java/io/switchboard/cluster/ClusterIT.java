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
 * Cluster mode with real JVMs on loopback: an edge node (web) and two agent nodes (the demo agent,
 * each its own ledger), each the jar with the cluster libraries. A page on the edge drives a thread
 * on each agent node and answers their questions; each node's ledger ends its requests once. One
 * agent node is killed (SIGKILL): the page is told, in bounded time, that node's cards go stale and
 * its thread refuses at once, while the other node's thread goes on; started again on the same
 * data, its thread goes on too. Then the edge is killed and restarted: a new page answers what
 * waits on either node.
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

  static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  static List<String> members(int[] ports) {
    return java.util.Arrays.stream(ports).mapToObj(p -> "127.0.0.1:" + p).toList();
  }

  private Path config(String node, String role, int port, int busPort, List<String> members) throws Exception {
    return config(node, node, role, port, busPort, members);
  }

  /** {@code home}: the folder of the node's data and config (two nodes may be given one name). */
  private Path config(String home, String node, String role, int port, int busPort, List<String> members)
      throws Exception {
    JsonObject config = new JsonObject().put("dataDir", dir.resolve(home).resolve("data").toString())
        .put("http", new JsonObject().put("port", 0))
        .put("cluster", new JsonObject().put("node", node).put("role", role).put("host", "127.0.0.1")
            .put("port", port).put("busPort", busPort).put("members", new JsonArray(members)));
    Path file = dir.resolve(home + ".json");
    Files.writeString(file, config.encodePrettily());
    return file;
  }

  private JarGateway start(String node, Path config) throws Exception {
    JarGateway started = JarGateway.startNode(dir.resolve(node), config, List.of("-Xmx256m", "-XX:+UseSerialGC"));
    nodes.add(started.process());
    return started;
  }

  @Test
  void anEdgeDrivesTwoAgentNodesAndOneNodesDeathLeavesTheOtherAtWork() throws Exception {
    int[] ports = {freePort(), freePort(), freePort()};
    Path edgeConfig = config("edge", "edge", ports[0], freePort(), members(ports));
    Path aConfig = config("build-a", "agent", ports[1], freePort(), members(ports));
    Path bConfig = config("build-b", "agent", ports[2], freePort(), members(ports));

    start("build-a", aConfig);
    JarGateway b = start("build-b", bConfig);
    JarGateway edge = start("edge", edgeConfig);
    assertTrue(edge.port() > 0, "the edge serves the web");

    ChatClient web = ChatClient.open(vertx, edge.port(), edge.token());
    JsonObject welcome = web.next("welcome");
    assertEquals(new JsonArray().add("build-a").add("build-b"), welcome.getJsonArray("nodes"), welcome.encode());
    // A thread goes where the page says; without a node, to the first agent node that runs its agent.
    String onA = newThread(web, "build-a", "a");
    String onB = newThread(web, "build-b", "b");
    String unplaced = newThread(web, null, "c");
    JsonObject bad = web.send(new JsonObject().put("type", "new_thread").put("agent", "demo").put("node", "nowhere")
        .put("clientRef", "bad")).next(f -> "bad".equals(f.getString("clientRef")), "the refusal");
    assertEquals("error", bad.getString("type"), bad.encode());
    assertTrue(bad.getString("message").contains("no agent node named nowhere in the cluster (agent nodes: build-a, "
        + "build-b)"), bad.encode());

    // Each node's agent asks; each card names its node and is answered from the one page.
    JsonObject cardA = ask(web, onA, "edit on a", null);
    JsonObject cardB = ask(web, onB, "edit on b", null);
    assertEquals("build-a", cardA.getString("node"), cardA.encode());
    assertEquals("build-b", cardB.getString("node"), cardB.encode());
    assertTrue(cardA.getString("incarnation", "").length() > 0, cardA.encode());
    for (JsonObject card : List.of(cardA, cardB)) {
      web.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
          .put("optionId", card.getJsonArray("options").getJsonObject(0).getString("optionId")));
      JsonObject resolved = web.next(f -> "permission_resolved".equals(f.getString("type"))
          && card.getString("requestId").equals(f.getString("requestId")), "the answer's end state");
      assertEquals("selected", resolved.getJsonObject("outcome").getString("outcome"));
    }
    // Each ledger has its own node's request, ended once by the web surface on the edge.
    for (String node : List.of("build-a", "build-b")) {
      JsonArray ledger = ledger(dir.resolve(node).resolve("data"));
      assertEquals(1, ledger.size(), node + ": " + ledger.encodePrettily());
      assertEquals("web", ledger.getJsonObject(0).getJsonObject("outcome").getJsonObject("answeredBy")
          .getString("surface"));
    }
    assertTrue(unplaced.startsWith("t_"), unplaced);
    web.drain();

    // A question waits on each node when build-b dies.
    JsonObject waitingA = ask(web, onA, "edit again on a", cardA.getString("requestId"));
    JsonObject waitingB = ask(web, onB, "edit again on b", cardB.getString("requestId"));
    b.process().destroyForcibly();
    assertTrue(b.process().waitFor(20, TimeUnit.SECONDS));
    long t0 = System.nanoTime();
    JsonObject left = web.next(f -> "error".equals(f.getString("type")) && f.getString("message", "")
        .contains("left the cluster"), "the notice that build-b left", 60);
    assertEquals("unavailable", left.getString("code"));
    assertTrue(left.getString("message").startsWith("agent node build-b left the cluster"), left.encode());
    System.out.printf("cluster: the page heard build-b left %d ms after its SIGKILL%n",
        (System.nanoTime() - t0) / 1_000_000);
    // Only build-b's card is stale; build-a's is answered and its thread goes on.
    JsonObject stale = web.next(f -> "permission_stale".equals(f.getString("type")), "the stale mark", 10);
    assertTrue(stale.getBoolean("stale"));
    assertEquals(new JsonArray().add(waitingB.getString("requestId")), stale.getJsonArray("requestIds"));
    web.send(new JsonObject().put("type", "permission_answer").put("requestId", waitingA.getString("requestId"))
        .put("optionId", waitingA.getJsonArray("options").getJsonObject(0).getString("optionId")));
    web.next(f -> "permission_resolved".equals(f.getString("type"))
        && waitingA.getString("requestId").equals(f.getString("requestId")), "build-a's answer while build-b is gone");
    // A prompt to build-b's thread is refused at once by the edge, naming the node.
    long t1 = System.nanoTime();
    web.send(new JsonObject().put("type", "prompt").put("threadId", onB).put("text", "hello").put("clientRef", "p2"));
    JsonObject refused = web.next(f -> "error".equals(f.getString("type")) && "p2".equals(f.getString("clientRef")),
        "an error for the prompt", 60);
    assertEquals("unavailable", refused.getString("code"), refused.encode());
    assertTrue(refused.getString("message").startsWith("agent node build-b left the cluster"), refused.encode());
    System.out.printf("cluster: a prompt to the dead node's thread was refused in %d ms%n",
        (System.nanoTime() - t1) / 1_000_000);

    // build-b again on the same data: its waiting request ends (voided by the restart, in its ledger
    // first), the page hears it, and the thread goes on.
    start("build-b", bConfig);
    JsonObject voided = web.next(f -> "permission_resolved".equals(f.getString("type"))
        && waitingB.getString("requestId").equals(f.getString("requestId")), "the waiting request's end", 60);
    assertEquals("voided-by-restart", voided.getJsonObject("outcome").getString("reason"), voided.encode());
    promptUntilHeard(web, onB, "hello again");

    // The edge dies and comes back: a new page sees what waits on either node and answers it.
    JsonObject pendingB = ask(web, onB, "edit after the restart", waitingB.getString("requestId"));
    JsonObject pendingA = ask(web, onA, "edit a third time", waitingA.getString("requestId"));
    edge.process().destroyForcibly();
    assertTrue(edge.process().waitFor(20, TimeUnit.SECONDS));
    JarGateway edge2 = start("edge", edgeConfig);
    ChatClient page = ChatClient.open(vertx, edge2.port(), edge2.token());
    page.next("welcome");
    for (JsonObject card : List.of(pendingA, pendingB)) {
      String thread = card == pendingA ? onA : onB;
      page.send(new JsonObject().put("type", "attach").put("threadId", thread).put("afterSeq", 1_000_000));
      page.next(f -> "permission_request".equals(f.getString("type"))
          && card.getString("requestId").equals(f.getString("requestId")), "the card still waiting on " + thread, 30);
      page.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
          .put("optionId", card.getJsonArray("options").getJsonObject(2).getString("optionId")));
      page.next(f -> "permission_resolved".equals(f.getString("type"))
          && card.getString("requestId").equals(f.getString("requestId")), "its end after the edge's restart", 30);
    }

    // Each node's ledger: every request ended, once.
    for (String node : List.of("build-a", "build-b")) {
      JsonArray after = ledger(dir.resolve(node).resolve("data"));
      assertEquals(3, after.size(), node + ": " + after.encodePrettily());
      assertTrue(after.stream().allMatch(r -> ((JsonObject) r).getJsonObject("outcome") != null),
          after.encodePrettily());
    }
  }

  private static String newThread(ChatClient web, String node, String ref) {
    JsonObject create = new JsonObject().put("type", "new_thread").put("agent", "demo").put("clientRef", ref);
    if (node != null) {
      create.put("node", node);
    }
    JsonObject thread = web.send(create).next(f -> "thread".equals(f.getString("type"))
        && ref.equals(f.getString("clientRef")), "the new thread");
    assertEquals(node == null ? "build-a" : node, thread.getString("node"), thread.encode());
    String id = thread.getString("threadId");
    web.send(new JsonObject().put("type", "attach").put("threadId", id));
    return id;
  }

  /** Prompts the demo agent to edit: returns its card (a new one, not {@code notThis}). */
  private static JsonObject ask(ChatClient web, String thread, String text, String notThis) {
    web.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", text));
    return web.next(f -> "permission_request".equals(f.getString("type")) && thread.equals(f.getString("threadId"))
        && !f.getString("requestId").equals(notThis), "the card of " + thread);
  }

  /** A node that just came back may refuse a moment longer: prompt until the agent hears it. */
  private static void promptUntilHeard(ChatClient web, String thread, String text) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      web.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", text));
      try {
        web.next(f -> "event".equals(f.getString("type"))
            && "user_message".equals(f.getJsonObject("event").getString("kind"))
            && text.equals(f.getJsonObject("event").getString("text")), "the prompt through the restarted node", 3);
        return;
      } catch (AssertionError notYet) {
        if (System.nanoTime() > deadline) {
          throw notYet;
        }
      }
    }
  }

  @Test
  void aSecondNodeOfOneNameIsRefusedAndAClusterWithoutItsLibrariesSaysWhatIsMissing() throws Exception {
    int[] ports = {freePort(), freePort()};
    start("build", config("build", "agent", ports[0], freePort(), members(ports)));
    Path other = config("build-2", "build", "agent", ports[1], freePort(), members(ports));
    // Its commands' addresses are named after it: the second node of that name stops instead.
    String out = exitsWithError("-Xmx256m", "-cp", JarGateway.JAR + java.io.File.pathSeparator + JarGateway.CLUSTER_LIBS
        + "/*", "io.switchboard.Main", "--config", other.toString());
    assertTrue(out.contains("a member named build already runs in this cluster (agent node build"), out);

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

  static JsonArray ledger(Path dataDir) throws Exception {
    Process p = new ProcessBuilder("java", "-jar", JarGateway.JAR.toString(), "ledger", "--data-dir",
        dataDir.toString(), "--json").redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    return new JsonArray(out);
  }
}
