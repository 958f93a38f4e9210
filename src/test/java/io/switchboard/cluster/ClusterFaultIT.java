package io.switchboard.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.Ports;
import io.switchboard.testkit.SeededRuns;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The cluster fault suite: three real JVMs of the jar on loopback (an edge and two agent nodes,
 * each agent node with a thread of the demo agent), and at seeded random steps a page on the edge
 * prompts, answers (some answers twice), and the nodes are SIGKILLed and started again on their
 * data, or paused (SIGSTOP) below and above the member timeout and resumed, or have their
 * event-bus connections go dark one way (nftables) while an answer is sent and are then cut
 * ({@code ss -K}; both as root), so that the answer, or its reply and the facts, are lost. After each run, with
 * every node up again: no card on the page is left stale some seconds after the heal; every card
 * still open is pending in its node's ledger and answerable (each is answered, and each answer
 * ends its request); every request in each node's ledger ended once, as the page was told, and
 * the ledger's hash chain verifies; no request the page made waited without a bound (a prompt to a
 * node that is down is refused within seconds). Seeds are printed; {@code -Dcluster.seed=N}
 * replays one, {@code -Dcluster.runs=N} sets how many (1 in every run; the long run is docs/reliability.md's).
 */
@org.junit.jupiter.api.parallel.ResourceLock("cluster") // with ClusterIT (its own lock), two clusters at most at once
@org.junit.jupiter.api.Order(3) // the longest chains first (pom.xml, failsafe)
class ClusterFaultIT {
  static final List<String> AGENT_NODES = List.of("build-a", "build-b");
  static final int STEPS = 7;
  /** Pauses: below the 5 s member timeout, and above it (with the detection, ~6 s). */
  static final long SHORT_PAUSE_MS = 2_000;
  static final long LONG_PAUSE_MS = 9_000;
  /**
   * After a cut, how long the edge may take to learn of a fact that was lost in it: its check of
   * each node's fact count runs every 15 s (AgentNodes.SEQUENCE_CHECK_MS).
   */
  static final long CUT_RECOVERY_MS = 20_000;
  /** How long the link is dark before the cut: below the member timeout (the node stays a member). */
  static final long DARK_MS = 1_500;

  final Vertx vertx = Vertx.vertx();
  LoopbackCluster cluster;
  final Map<String, JarGateway> nodes = new HashMap<>();
  final Map<String, Path> configs = new HashMap<>();
  final Map<String, String> threads = new LinkedHashMap<>(); // node -> its thread
  final List<String> log = new ArrayList<>();
  final Map<String, Integer> faultCounts = new TreeMap<>();
  Path dir;
  String edgeToken;
  ChatClient page;
  Random random;
  int prompts;
  /** When the last cut was, for the final check (0: none this run). */
  long lastCut;

  @AfterEach
  void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  @Test
  void seededFaultsAcrossThreeNodesKeepEveryInvariant() throws Exception {
    int runs = SeededRuns.play("cluster fault", "cluster.seed", "cluster.runs", 1, seed -> {
      try {
        run(seed);
        System.out.println("steps: " + log);
        System.out.println("the edge recovered from lost messages: " + recoveries());
      } finally {
        cluster.close();
      }
    }, () -> log);
    System.out.println("cluster faults injected in " + runs + " runs: " + faultCounts);
  }

  private void run(long seed) throws Exception {
    random = new Random(seed);
    dir = Files.createTempDirectory("sb-cluster-fault-" + seed);
    cluster = new LoopbackCluster(dir);
    log.clear();
    nodes.clear();
    threads.clear();
    edgeToken = null;
    lastCut = 0;
    int[] ports = {Ports.free(), Ports.free(), Ports.free()};
    List<String> members = LoopbackCluster.members(ports);
    configs.put("edge", cluster.config("edge", "edge", ports[0], members));
    configs.put("build-a", cluster.config("build-a", "agent", ports[1], members));
    configs.put("build-b", cluster.config("build-b", "agent", ports[2], members));
    java.util.LinkedHashMap<String, java.nio.file.Path> first = new java.util.LinkedHashMap<>();
    for (String node : List.of("build-a", "build-b", "edge")) {
      first.put(node, configs.get(node));
    }
    nodes.putAll(cluster.startAll(first));
    LoopbackCluster.awaitAgentNodes(nodes.get("edge"), AGENT_NODES);
    openPage();
    for (String node : AGENT_NODES) {
      String ref = "new-" + node;
      JsonObject t = page.send(new JsonObject().put("type", "new_thread").put("agent", "demo").put("node", node)
          .put("clientRef", ref)).next(f -> ref.equals(f.getString("clientRef")), "the thread on " + node, 30);
      assertEquals(node, t.getString("node"), t.encode());
      threads.put(node, t.getString("threadId"));
      page.send(new JsonObject().put("type", "attach").put("threadId", t.getString("threadId")));
    }

    for (int step = 0; step < STEPS; step++) {
      int pick = random.nextInt(100);
      String node = AGENT_NODES.get(random.nextInt(AGENT_NODES.size()));
      if (step == STEPS - 1 && lastCut == 0) {
        cut(node); // every run cuts once at least
      } else if (pick < 26) {
        prompt(node);
      } else if (pick < 48) {
        answerSome();
      } else if (pick < 58) {
        killAndRestart(node);
      } else if (pick < 66) {
        pause(node, SHORT_PAUSE_MS, "pause-short");
      } else if (pick < 77) {
        pause(node, LONG_PAUSE_MS, "pause-long");
      } else if (pick < 86) {
        killEdge();
      } else {
        cut(node);
      }
    }
    checkAfterHeal();
  }

  // ---- steps ----

  /**
   * A prompt that makes the demo agent ask; its card must reach the page. The demo agent's turn
   * waits for its answer, so a thread with an open card is answered instead.
   */
  private void prompt(String node) {
    String thread = threads.get(node);
    if (model().open.values().stream().anyMatch(c -> thread.equals(c.getString("threadId")))) {
      answerSome();
      return;
    }
    fault("prompt");
    int n = ++prompts;
    String ref = "p" + n;
    page.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", "edit file " + n)
        .put("clientRef", ref));
    page.next(f -> "permission_request".equals(f.getString("type")) && thread.equals(f.getString("threadId"))
        && !knownBefore(f.getString("requestId")), "a card for prompt " + n + " on " + node, 30);
    log.add("prompt " + n + " on " + node);
  }

  private boolean knownBefore(String requestId) {
    int count = 0;
    for (JsonObject f : page.seen) {
      if ("permission_request".equals(f.getString("type")) && requestId.equals(f.getString("requestId"))) {
        count++;
      }
    }
    return count > 1;
  }

  /** Answers one open card, sometimes twice (a double tap): it ends once. */
  private void answerSome() {
    fault("answer");
    List<JsonObject> open = new ArrayList<>(model().open.values());
    open.removeIf(c -> c.getBoolean("stale", false));
    if (open.isEmpty()) {
      log.add("answer: nothing open");
      return;
    }
    JsonObject card = open.get(random.nextInt(open.size()));
    boolean twice = random.nextBoolean();
    // Allow once or reject: "always allow" would let the demo agent's next edits go unasked.
    String option = card.getJsonArray("options").getJsonObject(random.nextBoolean() ? 0 : 2).getString("optionId");
    JsonObject answer = new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
        .put("optionId", option);
    page.send(answer);
    if (twice) {
      page.send(answer);
    }
    page.next(f -> "permission_resolved".equals(f.getString("type"))
        && card.getString("requestId").equals(f.getString("requestId")), "the end of the answered card", 30);
    if (twice) {
      // The refusal may come before the end (the end is written to the ledger first).
      java.util.function.Predicate<JsonObject> refusal = f -> "error".equals(f.getString("type"))
          && card.getString("requestId").equals(f.getString("requestId"));
      page.drain();
      JsonObject second = page.seen.stream().filter(refusal).findFirst()
          .orElseGet(() -> page.next(refusal, "the second answer's refusal", 30));
      assertEquals("already_answered", second.getString("code"), second.encode());
    }
    log.add("answer " + card.getString("requestId") + (twice ? " twice" : ""));
  }

  /**
   * The node's event-bus link goes dark one way, an answer to one of its cards is sent, and its
   * connections are cut: the answer is lost on its way (dark to the node), or it wins and its reply
   * and the end fact are lost (dark from the node). The page is told how the
   * card ended (by the answer tried again with its key, or by the edge's check of the node's facts)
   * or, if the node was declared gone meanwhile, that it is unavailable; never that someone else
   * answered it.
   */
  private void cut(String node) throws Exception {
    fault("cut-sockets");
    List<JsonObject> open = openCardsOf(node);
    if (open.isEmpty()) {
      prompt(node); // a question to answer across the cut
      open = openCardsOf(node);
    }
    JsonObject card = open.isEmpty() ? null : open.get(random.nextInt(open.size()));
    java.util.Set<Integer> ports = new java.util.HashSet<>();
    for (Path config : configs.values()) {
      ports.add(LoopbackCluster.busPort(config));
    }
    // The link goes dark one way (what is sent then waits in the sender's socket), the answer is sent,
    // and the node's connections are cut: what waited is lost, the request to the node or its reply
    // and facts from it.
    LoopbackCluster.Direction way = random.nextBoolean() ? LoopbackCluster.Direction.TO_NODE
        : LoopbackCluster.Direction.FROM_NODE;
    int cut;
    try (AutoCloseable dark = LoopbackCluster.blackhole(nodes.get(node).process(),
        LoopbackCluster.busPort(configs.get(node)), ports, way)) {
      if (card != null) {
        page.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
            .put("optionId", card.getJsonArray("options").getJsonObject(2).getString("optionId")));
      }
      Thread.sleep(DARK_MS);
      cut = LoopbackCluster.cutSockets(nodes.get(node).process(), ports);
    }
    lastCut = System.nanoTime();
    String told = "";
    if (card != null) {
      String id = card.getString("requestId");
      JsonObject said = page.next(f -> id.equals(f.getString("requestId")) && ("permission_resolved".equals(
          f.getString("type")) || "error".equals(f.getString("type"))), "how the answer to " + id
          + " sent as the connections were cut ended", 60);
      if ("error".equals(said.getString("type"))) {
        assertEquals("unavailable", said.getString("code"), "the answer was sent once, so it cannot have lost to "
            + "another: " + said.encode());
      }
      told = ", answer to " + id + ": " + ("error".equals(said.getString("type")) ? said.getString("code")
          : said.getJsonObject("outcome").getString("optionId", said.getJsonObject("outcome").getString("reason")));
    }
    awaitUsable(node);
    log.add("cut " + cut + " sockets of " + node + " dark " + way + told);
  }

  private List<JsonObject> openCardsOf(String node) {
    List<JsonObject> open = new ArrayList<>(model().open.values());
    open.removeIf(c -> c.getBoolean("stale", false) || !node.equals(c.getString("node")));
    return open;
  }

  /** SIGKILL, then a start on the same data: its pending requests end voided-by-restart. */
  private void killAndRestart(String node) throws Exception {
    fault("kill-agent-node");
    List<String> hadOpen = model().open.values().stream().filter(c -> node.equals(c.getString("node")))
        .map(c -> c.getString("requestId")).toList();
    kill(node);
    awaitLeft(node, 30);
    // What the page asks of it now is refused within seconds, naming it: no unbounded wait.
    long t0 = System.nanoTime();
    String ref = "down-" + (++prompts);
    page.send(new JsonObject().put("type", "prompt").put("threadId", threads.get(node)).put("text", "hello")
        .put("clientRef", ref));
    JsonObject refused = page.next(f -> "error".equals(f.getString("type")) && ref.equals(f.getString("clientRef")),
        "the refusal of a prompt to a dead node", 10);
    assertEquals("unavailable", refused.getString("code"), refused.encode());
    assertTrue(refused.getString("message").contains(node), refused.encode());
    assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10));
    start(node);
    for (String id : hadOpen) {
      JsonObject ended = page.next(f -> "permission_resolved".equals(f.getString("type"))
          && id.equals(f.getString("requestId")), "the end of " + id + " after its node's restart", 60);
      assertEquals("voided-by-restart", ended.getJsonObject("outcome").getString("reason"), ended.encode());
    }
    awaitUsable(node);
    log.add("killed and restarted " + node + " (" + hadOpen.size() + " voided)");
  }

  private void pause(String node, long ms, String name) throws Exception {
    fault(name);
    List<String> hadOpen = model().open.values().stream().filter(c -> node.equals(c.getString("node")))
        .map(c -> c.getString("requestId")).toList();
    LoopbackCluster.signal("STOP", nodes.get(node).process());
    Thread.sleep(ms);
    LoopbackCluster.signal("CONT", nodes.get(node).process());
    long resumed = System.nanoTime();
    if (ms > 5_000) {
      // Declared gone while paused: its cards went stale; resumed, the same incarnation merges back
      // with its requests still pending, and the page is told they are answerable again.
      awaitLeft(node, 30);
      if (!hadOpen.isEmpty()) {
        page.next(f -> "permission_stale".equals(f.getString("type")) && !f.getBoolean("stale")
            && node.equals(f.getString("node")), "the cards of " + node + " answerable again", 90);
      }
    }
    awaitUsable(node);
    log.add(name + " " + node + " " + ms + " ms (usable again " + (System.nanoTime() - resumed) / 1_000_000
        + " ms after SIGCONT)");
  }

  /** Until the page's requests to the node's thread are served again (attach answers), at most 90 s. */
  private void awaitUsable(String node) throws Exception {
    String thread = threads.get(node);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (true) {
      String ref = "probe-" + (++prompts);
      page.send(new JsonObject().put("type", "attach").put("threadId", thread).put("afterSeq", 1_000_000_000L)
          .put("clientRef", ref));
      JsonObject said = page.next(f -> ("turn".equals(f.getString("type")) && thread.equals(f.getString("threadId"))
          && f.getBoolean("attached", false)) || ("error".equals(f.getString("type"))
          && "unavailable".equals(f.getString("code"))), "an answer to the attach of " + thread, 40);
      if ("turn".equals(said.getString("type"))) {
        return;
      }
      assertTrue(System.nanoTime() < deadline, node + " still does not answer: " + said.encode());
      Thread.sleep(1_000);
    }
  }

  /** The edge dies and is started again: a new page attaches both threads from the start. */
  private void killEdge() throws Exception {
    fault("kill-edge");
    page.close();
    kill("edge");
    start("edge");
    openPage();
    for (String thread : threads.values()) {
      page.send(new JsonObject().put("type", "attach").put("threadId", thread));
      page.next(f -> "turn".equals(f.getString("type")) && thread.equals(f.getString("threadId"))
          && f.getBoolean("attached", false), "the attach of " + thread + " on the new edge", 30);
    }
    log.add("killed and restarted the edge");
  }

  // ---- the checks ----

  private void checkAfterHeal() throws Exception {
    // A fact lost in a cut is learnt at the edge's next check of the node's fact count.
    long sinceCut = lastCut == 0 ? Long.MAX_VALUE : (System.nanoTime() - lastCut) / 1_000_000;
    if (sinceCut < CUT_RECOVERY_MS) {
      Thread.sleep(CUT_RECOVERY_MS - sinceCut);
    }
    // Some seconds after every node is back, no card is stale.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    Model m = model();
    while (m.open.values().stream().anyMatch(c -> c.getBoolean("stale", false)) && System.nanoTime() < deadline) {
      Thread.sleep(200);
      m = model();
    }
    List<String> stale = m.open.values().stream().filter(c -> c.getBoolean("stale", false))
        .map(c -> c.getString("requestId")).toList();
    assertTrue(stale.isEmpty(), "cards still stale 90 s after the heal: " + stale);

    // Every open card is pending in its node's ledger and answerable now: each answer ends it.
    for (JsonObject card : new ArrayList<>(m.open.values())) {
      page.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
          .put("optionId", card.getJsonArray("options").getJsonObject(0).getString("optionId")));
      page.next(f -> "permission_resolved".equals(f.getString("type"))
          && card.getString("requestId").equals(f.getString("requestId")), "the end of open card "
          + card.getString("requestId") + " after the heal", 30);
    }
    m = model();
    assertTrue(m.open.isEmpty(), "cards open after answering them all: " + m.open.keySet());

    // Each node's ledger: every request ended once, as the page was told; the chain verifies.
    for (String node : AGENT_NODES) {
      Path data = dir.resolve(node).resolve("data");
      JsonArray ledger = LoopbackCluster.ledger(data);
      Map<String, Integer> ids = new HashMap<>();
      for (Object o : ledger) {
        JsonObject row = (JsonObject) o;
        ids.merge(row.getString("requestId"), 1, Integer::sum);
        assertNotNull(row.getJsonObject("outcome"), node + ": a request still pending: " + row.encode());
        JsonObject told = m.ended.get(row.getString("requestId"));
        if (told != null) {
          assertEquals(row.getJsonObject("outcome").getString("outcome"), told.getString("outcome"),
              node + ": the page was told another end than the ledger's for " + row.getString("requestId"));
        }
      }
      assertTrue(ids.values().stream().allMatch(c -> c == 1), node + ": a request twice in the ledger: " + ids);
      Process verify = new ProcessBuilder("java", "-jar", JarGateway.JAR.toString(), "ledger", "verify", "--data-dir",
          data.toString()).redirectErrorStream(true).start();
      String said = new String(verify.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      assertTrue(verify.waitFor(30, TimeUnit.SECONDS));
      assertEquals(0, verify.exitValue(), node + ": ledger verify: " + said);
    }
    // The page lists every thread as its node has it (a thread fact lost in a cut is listed again):
    // a page opened now, listed afresh by the nodes, shows the same titles.
    Map<String, String> titles = new HashMap<>();
    for (JsonObject f : page.seen) {
      if ("welcome".equals(f.getString("type"))) {
        f.getJsonArray("threads").forEach(t -> titles.put(((JsonObject) t).getString("threadId"),
            ((JsonObject) t).getString("title")));
      } else if ("thread".equals(f.getString("type")) && f.getString("title") != null) {
        titles.put(f.getString("threadId"), f.getString("title"));
      }
    }
    try (ChatClient fresh = ChatClient.open(vertx, nodes.get("edge").port(), edgeToken)) {
      for (Object o : fresh.next("welcome").getJsonArray("threads")) {
        JsonObject t = (JsonObject) o;
        assertEquals(t.getString("title"), titles.get(t.getString("threadId")), "the page's title of thread "
            + t.getString("threadId"));
      }
    }
    // Every card the page was shown is in its node's ledger.
    for (Map.Entry<String, JsonObject> shown : m.shown.entrySet()) {
      String node = shown.getValue().getString("node");
      assertTrue(LoopbackCluster.ledger(dir.resolve(node).resolve("data")).stream()
          .anyMatch(r -> shown.getKey().equals(((JsonObject) r).getString("requestId"))),
          "card " + shown.getKey() + " is not in " + node + "'s ledger");
    }
  }

  /** What the page shows, from every frame it got: cards open (and whether stale) and how the others ended. */
  private record Model(Map<String, JsonObject> open, Map<String, JsonObject> ended, Map<String, JsonObject> shown) {}

  private Model model() {
    page.drain();
    Map<String, JsonObject> open = new LinkedHashMap<>();
    Map<String, JsonObject> ended = new HashMap<>();
    Map<String, JsonObject> shown = new HashMap<>();
    for (JsonObject f : page.seen) {
      String id = f.getString("requestId");
      switch (f.getString("type")) {
        case "permission_request" -> {
          shown.put(id, f);
          if (!ended.containsKey(id)) {
            open.putIfAbsent(id, f.copy());
          }
        }
        case "permission_resolved" -> {
          JsonObject earlier = ended.put(id, f.getJsonObject("outcome"));
          if (earlier != null) {
            assertEquals(earlier.getString("outcome"), f.getJsonObject("outcome").getString("outcome"),
                "request " + id + " told to end two ways");
          }
          open.remove(id);
        }
        case "permission_stale" -> f.getJsonArray("requestIds").forEach(r -> {
          JsonObject card = open.get((String) r);
          if (card != null) {
            card.put("stale", f.getBoolean("stale"));
          }
        });
        default -> { }
      }
    }
    return new Model(open, ended, shown);
  }

  /** What the edge's log says it did about messages lost in cuts (the suite's proof they were lost). */
  private Map<String, Long> recoveries() throws Exception {
    Map<String, Long> counts = new TreeMap<>();
    Path edgeLog = dir.resolve("edge").resolve("gateway.log");
    List<String> lines = Files.exists(edgeLog) ? Files.readAllLines(edgeLog) : List.of();
    Map<String, String> marks = Map.of("answers tried again", "sending it again",
        "permission facts missed", "permission facts of agent node",
        "thread facts missed", "thread facts of agent node",
        "fact counts found short", "this edge heard",
        "thread events replayed", "did not arrive; replaying");
    marks.forEach((name, mark) -> counts.put(name, lines.stream().filter(l -> l.contains(mark)).count()));
    return counts;
  }

  // ---- nodes ----

  private void start(String node) throws Exception {
    nodes.put(node, cluster.start(node, configs.get(node)));
  }

  private void kill(String node) throws Exception {
    LoopbackCluster.kill(nodes.get(node).process());
  }

  private void openPage() {
    JarGateway edge = nodes.get("edge");
    if (edgeToken == null) {
      edgeToken = edge.token(); // printed at the first start only
    }
    page = ChatClient.open(vertx, edge.port(), edgeToken);
    page.next("welcome");
  }

  private void awaitLeft(String node, long seconds) {
    page.next(f -> "error".equals(f.getString("type")) && f.getString("message", "")
        .startsWith("agent node " + node + " left the cluster"), "the notice that " + node + " left", seconds);
  }



  private void fault(String name) {
    faultCounts.merge(name, 1, Integer::sum);
  }
}
