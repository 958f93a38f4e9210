package io.switchboard.cluster;

import static io.switchboard.cluster.LoopbackCluster.ledger;
import static io.switchboard.cluster.LoopbackCluster.members;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.Ports;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
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
@org.junit.jupiter.api.parallel.ResourceLock("second-cluster") // two clusters at most at once (docs/reliability.md)
@org.junit.jupiter.api.Order(1) // the longest chains first (pom.xml, failsafe)
class ClusterIT {
  @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS) // a failed run keeps its nodes' logs
  Path dir;
  LoopbackCluster cluster;
  final Vertx vertx = Vertx.vertx();

  @org.junit.jupiter.api.BeforeEach
  void setUp() {
    cluster = new LoopbackCluster(dir);
  }

  @AfterEach
  void stop() throws Exception {
    cluster.close();
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  private Path config(String node, String role, int port, List<String> members) throws Exception {
    return cluster.config(node, role, port, members);
  }

  private JarGateway start(String node, Path config) throws Exception {
    return cluster.start(node, config);
  }

  @Test
  void anEdgeDrivesTwoAgentNodesAndOneNodesDeathLeavesTheOtherAtWork() throws Exception {
    int[] ports = {Ports.free(), Ports.free(), Ports.free()};
    Path edgeConfig = config("edge", "edge", ports[0], members(ports));
    Path aConfig = config("build-a", "agent", ports[1], members(ports));
    Path bConfig = config("build-b", "agent", ports[2], members(ports));

    java.util.LinkedHashMap<String, Path> configs = new java.util.LinkedHashMap<>();
    configs.put("build-a", aConfig);
    configs.put("build-b", bConfig);
    configs.put("edge", edgeConfig);
    java.util.Map<String, JarGateway> nodes = cluster.startAll(configs);
    JarGateway b = nodes.get("build-b");
    JarGateway edge = nodes.get("edge");
    assertTrue(edge.port() > 0, "the edge serves the web");
    LoopbackCluster.awaitAgentNodes(edge, List.of("build-a", "build-b"));

    String token = edge.token(); // printed at the first start only
    ChatClient web = ChatClient.open(vertx, edge.port(), token);
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
      JsonArray ledger = ledger(cluster.dataDir(node));
      assertEquals(1, ledger.size(), node + ": " + ledger.encodePrettily());
      assertEquals("web", ledger.getJsonObject(0).getJsonObject("outcome").getJsonObject("answeredBy")
          .getString("surface"));
    }
    assertTrue(unplaced.startsWith("t_"), unplaced);
    web.drain();

    aSecondNodeOfOneNameOrASecondEdgeIsRefused(ports);
    strangersNeitherReadNorAnswer(web, onA, ports);
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
    // Its card is answered before the next prompt, which would otherwise wait behind it in the turn queue.
    JsonObject hello = ask(web, onB, null, waitingB.getString("requestId"));
    web.send(new JsonObject().put("type", "permission_answer").put("requestId", hello.getString("requestId"))
        .put("optionId", hello.getJsonArray("options").getJsonObject(0).getString("optionId")));
    web.next(f -> "permission_resolved".equals(f.getString("type"))
        && hello.getString("requestId").equals(f.getString("requestId")), "the end of the card after the restart");

    // The edge dies and comes back: a new page sees what waits on either node and answers it.
    JsonObject pendingB = ask(web, onB, "edit after the restart", waitingB.getString("requestId"));
    JsonObject pendingA = ask(web, onA, "edit a third time", waitingA.getString("requestId"));
    edge.process().destroyForcibly();
    assertTrue(edge.process().waitFor(20, TimeUnit.SECONDS));
    JarGateway edge2 = start("edge", edgeConfig);
    ChatClient page = ChatClient.open(vertx, edge2.port(), token);
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
      JsonArray after = ledger(cluster.dataDir(node));
      // build-a's has the two cards answered while strangers listened; build-b's the card of the prompt after its
      // restart.
      assertEquals(node.equals("build-a") ? 5 : 4, after.size(), node + ": " + after.encodePrettily());
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

  /** Prompts the demo agent to edit (no prompt: one sent already): returns its card (a new one, not {@code notThis}). */
  private static JsonObject ask(ChatClient web, String thread, String text, String notThis) {
    if (text != null) {
      web.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", text));
    }
    return web.next(f -> "permission_request".equals(f.getString("type")) && thread.equals(f.getString("threadId"))
        && !f.getString("requestId").equals(notThis), "the card of " + thread);
  }

  /** A node that just came back may refuse a moment longer: prompt until the agent hears it. */
  private static void promptUntilHeard(ChatClient web, String thread, String text) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    for (int attempt = 0; ; attempt++) {
      // Sent again only when refused: a prompt taken but slow to show would otherwise be sent twice,
      // and its second card would wait in the ledger.
      String ref = "again-" + attempt;
      web.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", text).put("clientRef", ref));
      JsonObject heard = web.next(f -> "error".equals(f.getString("type")) && ref.equals(f.getString("clientRef"))
          || "event".equals(f.getString("type")) && "user_message".equals(f.getJsonObject("event").getString("kind"))
          && text.equals(f.getJsonObject("event").getString("text")), "the prompt through the restarted node", 60);
      if (!"error".equals(heard.getString("type"))) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the restarted node still refuses the prompt: " + heard.encode());
      }
      Thread.sleep(200);
    }
  }

  /**
   * An IM chat on the edge drives the agent node: its thread starts there, the card comes from that
   * node's outbox and the tap ends the request in its ledger; the chat's own texts come from the
   * edge's store. Each output is delivered once (acknowledged to the store that holds it). With
   * the agent node gone the chat is told at once, unasked, that its card cannot be answered now;
 * started again, the card's end reaches the chat, and the chat is told the node is back.
   */
  @Test
  void anImChatOnTheEdgeDrivesTheAgentNodeThroughBothStores() throws Exception {
    int[] ports = {Ports.free(), Ports.free()};
    io.switchboard.testkit.PluginControl im = new io.switchboard.testkit.PluginControl(dir.resolve("im"));
    cluster.certify("edge", "edge");
    Path edgeConfig = cluster.write("edge", im.gatewayConfig(cluster.dataDir("edge"))
        .put("cluster", LoopbackCluster.section("edge", "edge", ports[0], members(ports))));
    Path agentConfig = config("build-1", "agent", ports[1], members(ports));
    JarGateway agentNode = start("build-1", agentConfig);
    JarGateway edge = start("edge", edgeConfig);
    im.awaitType("initialized", 1);

    im.prompt("42", "42", "/help");
    im.await(r -> "_switchboard/text".equals(r.getString("method")), 1, "the help text from the edge's store");
    im.prompt("42", "42", "edit something");
    JsonObject card = im.awaitType("card", 1);
    String requestId = card.getJsonObject("params").getJsonObject("_meta").getJsonObject("switchboard")
        .getString("requestId");
    im.tap(card.getString("key"), "allow-once", "42");
    im.await(r -> "_switchboard/permission_resolved".equals(r.getString("method"))
        && requestId.equals(r.getJsonObject("params").getString("requestId")), 1, "the card's end");
    JsonArray ledger = ledger(cluster.dataDir("build-1"));
    assertEquals(1, ledger.size(), ledger.encodePrettily());
    assertEquals("im:42", ledger.getJsonObject(0).getJsonObject("outcome").getJsonObject("answeredBy")
        .getString("surface"));

    // A second question waits when the agent node dies: a prompt then is answered at once.
    im.prompt("42", "42", "edit again");
    JsonObject second = im.awaitType("card", 2);
    String secondId = second.getJsonObject("params").getJsonObject("_meta").getJsonObject("switchboard")
        .getString("requestId");
    agentNode.process().destroyForcibly();
    assertTrue(agentNode.process().waitFor(20, TimeUnit.SECONDS));
    // The chat with its card open is told, unasked, that the card cannot be answered now (its stale mark).
    JsonObject stale = im.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").startsWith("Agent node build-1 left the cluster"), 1,
        "the chat told its card's node is gone");
    assertEquals("42", stale.getJsonObject("params").getString("chatId"), stale.encode());
    im.prompt("42", "42", "/status");
    JsonObject told = im.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").contains("agent node build-1 left the cluster"), 1,
        "the chat told the node is gone");
    System.out.println("cluster: the chat was told: " + told.getJsonObject("params").getString("text"));

    // Back on its data: the card's request was voided, and the chat learns it from that node's outbox.
    JarGateway restarted = start("build-1", agentConfig);
    JsonObject end = im.await(r -> "_switchboard/permission_resolved".equals(r.getString("method"))
        && secondId.equals(r.getJsonObject("params").getString("requestId")), 1, "the voided card's end");
    assertEquals("voided-by-restart", end.getJsonObject("params").getJsonObject("outcome").getString("reason"));
    im.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").startsWith("Agent node build-1 is back, restarted"), 1,
        "the chat told its card's node is back");
    // Every output reached the chat once: acknowledged to the store that holds it, never sent again.
    Thread.sleep(1_000);
    java.util.Map<String, Long> perOutput = im.received().stream()
        .filter(r -> r.getJsonObject("params") != null && r.getJsonObject("params").getString("outputId") != null)
        .collect(java.util.stream.Collectors.groupingBy(r -> r.getJsonObject("params").getString("outputId"),
            java.util.stream.Collectors.counting()));
    assertTrue(perOutput.size() >= 3, perOutput.toString());
    assertTrue(perOutput.values().stream().allMatch(n -> n == 1), "an output delivered twice: " + perOutput);
    assertEquals(2, im.received(r -> "card".equals(r.getString("type"))).size(), "each card delivered once");
    String threadLine = told.getJsonObject("params").getString("text").split(" does not answer")[0];

    // The edge starts again while the agent node is down, then the node: the chat gets its thread
    // back from the node as it comes (not a new thread on its next message).
    LoopbackCluster.kill(restarted.process());
    LoopbackCluster.kill(edge.process());
    start("edge", edgeConfig);
    im.awaitType("initialized", 2);
    start("build-1", agentConfig);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    int asked = 1;
    while (true) {
      im.prompt("42", "42", "/status");
      int n = ++asked;
      JsonObject status = im.await(r -> "_switchboard/text".equals(r.getString("method"))
          && (r.getJsonObject("params").getString("text").startsWith("Thread ")
          || r.getJsonObject("params").getString("text").startsWith("No conversation yet")), n, "/status " + n);
      if (status.getJsonObject("params").getString("text").startsWith(threadLine + " with agent demo on build-1")) {
        break;
      }
      assertTrue(System.nanoTime() < deadline, "the chat's thread did not come back: " + status.encode());
      Thread.sleep(1_000);
    }
  }

  /**
   * On the running cluster: a second node of a name already there stops (its commands' addresses are
   * named after it) and the edge still counts the first as live; a second edge (another name) stops,
   * as it would run the same plugins again; the jar alone (as {@code java -jar}) has no cluster manager
   * and says what to run instead.
   */
  private void aSecondNodeOfOneNameOrASecondEdgeIsRefused(int[] ports) throws Exception {
    Path twin = cluster.config("build-a-twin", "build-a", "agent", Ports.free(), members(ports));
    String out = exitsWithError("-Xmx256m", "-cp", JarGateway.JAR + java.io.File.pathSeparator + JarGateway.CLUSTER_LIBS
        + "/*", "io.switchboard.Main", "--config", twin.toString());
    assertTrue(out.contains("a member named build-a already runs in this cluster (agent node build-a"), out);
    String second = exitsWithError("-Xmx256m", "-cp", JarGateway.JAR + java.io.File.pathSeparator
        + JarGateway.CLUSTER_LIBS + "/*", "io.switchboard.Main", "--config", config("edge-2", "edge", Ports.free(),
        members(ports)).toString());
    assertTrue(second.contains("an edge node already runs in this cluster (edge node edge"), second);
    String said = exitsWithError("-jar", JarGateway.JAR.toString(), "--config", twin.toString());
    assertTrue(said.contains("cluster mode needs the cluster libraries on the class path"), said);
  }

  /**
   * Strangers on the cluster's network: a JVM that joins its Hazelcast with no certificate, then one
   * with a certificate of another authority made by the gateway's own commands (even for the agent
   * node's name), listen where cards are published and where the node takes answers, and answer a
   * waiting card: nothing reaches them, nothing they send is delivered, and the card ends by the
   * page's answer alone. A node given another node's certificate, or none, does not start.
   */
  private void strangersNeitherReadNorAnswer(ChatClient web, String thread, int[] ports) throws Exception {

    Path otherAuthority = dir.resolve("other-ca");
    cli("cluster", "ca", "--dir", otherAuthority.toString());
    Path forged = dir.resolve("forged-build-a");
    String issued = cli("cluster", "cert", "--name", "build-a", "--address", "127.0.0.1", "--ca",
        otherAuthority.toString(), "--out", forged.toString());
    assertTrue(issued.contains("holds node.crt") && Files.exists(forged.resolve("node.key")), issued);

    for (String tls : List.of("-", forged.toString())) {
      Process intruder = new ProcessBuilder("java", "-Xmx128m", "-cp", JarGateway.JAR + java.io.File.pathSeparator
          + JarGateway.CLUSTER_LIBS + "/*" + java.io.File.pathSeparator + Path.of("target", "test-classes"),
          Intruder.class.getName(), Integer.toString(Ports.free()), Integer.toString(Ports.free()),
          String.join(",", members(ports)), "build-a", tls).redirectError(dir.resolve("intruder.log").toFile()).start();
      cluster.processes.add(intruder);
      java.io.BufferedReader said = new java.io.BufferedReader(new java.io.InputStreamReader(
          intruder.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
      JsonObject ready = new JsonObject(said.readLine());
      assertTrue(ready.getInteger("members", 0) >= 3, "the stranger did not join the cluster's Hazelcast: " + ready);

      // A card is asked for while the stranger listens; it reaches the page, not the stranger.
      JsonObject card = ask(web, thread, "edit while a stranger listens", null);
      JsonObject answer = new JsonObject().put("requestId", card.getString("requestId"))
          .put("optionId", card.getJsonArray("options").getJsonObject(0).getString("optionId")).put("surface", "web");
      java.io.Writer to = new java.io.OutputStreamWriter(intruder.getOutputStream(),
          java.nio.charset.StandardCharsets.UTF_8);
      // The node's answer address twice (the stranger listens there too: sends take turns between the
      // two), and the plain one.
      for (int i = 0; i < 2; i++) {
        to.write(new JsonObject().put("address", Addresses.onNode("build-a", Addresses.PERMISSION_ANSWER))
            .put("body", answer).encode() + "\n");
      }
      to.write(new JsonObject().put("address", Addresses.PERMISSION_ANSWER).put("body", answer).encode() + "\nquit\n");
      to.flush();
      List<JsonObject> lines = new ArrayList<>();
      for (String line = said.readLine(); line != null; line = said.readLine()) {
        lines.add(new JsonObject(line));
      }
      assertTrue(intruder.waitFor(60, TimeUnit.SECONDS));
      List<JsonObject> sends = lines.stream().filter(l -> l.containsKey("sent")).toList();
      List<String> sent = sends.stream().map(l -> l.getString("sent")).toList();
      // To the node's answer address (it has a handler there): the send that was not the stranger's own timed out
      // at a link it cannot open, not for want of a handler.
      assertTrue(sends.subList(0, 2).stream().anyMatch(l -> "failed".equals(l.getString("sent"))
          && l.getString("cause", "").contains("TIMEOUT")), "no send reached the node's link: " + lines);
      System.out.printf("cluster: a stranger (%s) said %s%n", tls.equals("-") ? "no certificate" : "another authority",
          lines);
      assertEquals(3, sent.size(), lines.toString());
      assertTrue(!sent.contains("delivered") && sent.contains("failed"), "a stranger's answer was delivered: " + lines);
      assertEquals(0, lines.get(lines.size() - 1).getInteger("heardTotal"), "a stranger heard the bus: " + lines);

      // The card still waits: the page's answer ends it, and the ledger names the page.
      web.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
          .put("optionId", answer.getString("optionId")));
      JsonObject resolved = web.next(f -> "permission_resolved".equals(f.getString("type"))
          && card.getString("requestId").equals(f.getString("requestId")), "the page's answer", 30);
      assertEquals("selected", resolved.getJsonObject("outcome").getString("outcome"), resolved.encode());
      JsonObject row = ledger(cluster.dataDir("build-a")).stream().map(r -> (JsonObject) r)
          .filter(r -> card.getString("requestId").equals(r.getString("requestId"))).findFirst().orElseThrow();
      assertEquals("web", row.getJsonObject("outcome").getJsonObject("answeredBy").getString("surface"), row.encode());
    }

    // Another node's certificate, or none: the node does not start, and says why.
    Path copied = cluster.write("build-3", new JsonObject(Files.readString(cluster.config("build-3", "build-3", "agent",
        Ports.free(), members(ports)))));
    Path tls = cluster.dataDir("build-3").resolve("cluster-tls");
    for (String file : List.of("node.crt", "node.key")) {
      Files.copy(cluster.dataDir("build-a").resolve("cluster-tls").resolve(file), tls.resolve(file),
          java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    String asAnother = exitsWithError("-Xmx128m", "-cp", JarGateway.JAR + java.io.File.pathSeparator
        + JarGateway.CLUSTER_LIBS + "/*", "io.switchboard.Main", "--config", copied.toString());
    assertTrue(asAnother.contains("is node \"build-a\"'s certificate, not \"build-3\"'s"), asAnother);
    Files.delete(tls.resolve("node.key"));
    String without = exitsWithError("-Xmx128m", "-cp", JarGateway.JAR + java.io.File.pathSeparator
        + JarGateway.CLUSTER_LIBS + "/*", "io.switchboard.Main", "--config", copied.toString());
    assertTrue(without.contains("node.key is missing"), without);
  }

  /** Runs a subcommand of the jar with the cluster libraries; it must exit 0. Returns what it printed. */
  private String cli(String... args) throws Exception {
    List<String> argv = new ArrayList<>(List.of("java", "-Xmx128m", "-cp", JarGateway.JAR + java.io.File.pathSeparator
        + JarGateway.CLUSTER_LIBS + "/*", "io.switchboard.Main"));
    argv.addAll(List.of(args));
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    String printed = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), printed);
    return printed;
  }

  /** Runs java with these arguments; it must exit 1 within a minute. Returns what it printed. */
  private String exitsWithError(String... args) throws Exception {
    List<String> argv = new ArrayList<>(List.of("java"));
    argv.addAll(List.of(args));
    Path out = Files.createTempFile(dir, "out", ".txt");
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    cluster.processes.add(p);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "still running: " + Files.readString(out));
    String printed = Files.readString(out);
    assertEquals(1, p.exitValue(), printed);
    return printed;
  }


}
