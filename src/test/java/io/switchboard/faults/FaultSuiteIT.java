package io.switchboard.faults;

import io.switchboard.store.LedgerReader;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.PermissionHarness;
import io.switchboard.testkit.PluginControl;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Fault injection against the real jar: a browser socket and a scripted IM plugin drive the demo
 * agent while, at seeded random points, the agent, the plugin or the gateway itself is SIGKILLed
 * (the gateway is then started again), sockets are cut and readers stall. After each run the
 * ledger and what every surface received are checked (docs/reliability.md). Seeds are printed;
 * {@code -Dfault.seed=N} replays one, {@code -Dfault.runs=N} sets how many (default 4 in CI).
 */
class FaultSuiteIT {

  Vertx vertx;
  Path dir;
  Process gateway;
  int port;
  String token;
  ChatClient web;
  PluginControl plugin;
  final List<JsonObject> webFrames = new ArrayList<>();
  final List<String> log = new ArrayList<>();

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void tearDown() {
    if (gateway != null) {
      gateway.destroyForcibly();
    }
    PermissionHarness.await(vertx.close());
  }

  @Test
  void seededRunsKeepEveryInvariant() throws Exception {
    String fixed = System.getProperty("fault.seed", "").isBlank() ? null : System.getProperty("fault.seed");
    int runs = Integer.getInteger("fault.runs", 4);
    long base = fixed != null ? Long.parseLong(fixed) : System.nanoTime();
    for (int i = 0; i < (fixed != null ? 1 : runs); i++) {
      long seed = base + i;
      System.out.println("fault run seed " + seed);
      try {
        run(seed);
      } catch (Throwable t) {
        throw new AssertionError("fault run with seed " + seed + " broke an invariant (replay with -Dfault.seed="
            + seed + "): " + t.getMessage() + "\nsteps: " + log, t);
      }
    }
  }

  private void run(long seed) throws Exception {
    Random random = new Random(seed);
    dir = Files.createTempDirectory("sb-fault-" + seed);
    webFrames.clear();
    log.clear();
    plugin = new PluginControl(dir.resolve("plugin"));
    JsonObject config = plugin.gatewayConfig(dir.resolve("data"));
    Files.writeString(dir.resolve("switchboard.json"), config.encode());

    start();
    String thread = connectWeb(null);
    int pluginStarts = 1;
    plugin.awaitType("initialized", pluginStarts);
    int steps = 8 + random.nextInt(10);
    for (int step = 0; step < steps; step++) {
      int action = random.nextInt(100);
      if (action < 25) {
        log.add("web prompt");
        web.ws.writeTextMessage(new JsonObject().put("type", "prompt").put("threadId", thread)
            .put("text", "web " + step).encode());
      } else if (action < 45) {
        log.add("plugin prompt");
        plugin.prompt("42", "42", "plugin " + step);
      } else if (action < 57) {
        answerWeb(random);
      } else if (action < 67) {
        answerPlugin(random);
      } else if (action < 72) {
        log.add("web cancel");
        web.ws.writeTextMessage(new JsonObject().put("type", "cancel").put("threadId", thread).encode());
      } else if (action < 80) {
        killAgent(random);
      } else if (action < 86) {
        log.add("kill -9 plugin");
        List<JsonObject> starts = plugin.received(r -> "started".equals(r.getString("type")));
        ProcessHandle.of(starts.get(starts.size() - 1).getLong("pid")).ifPresent(ProcessHandle::destroyForcibly);
        pluginStarts++;
        plugin.awaitType("initialized", pluginStarts);
      } else if (action < 91) {
        log.add("kill -9 gateway, restart");
        gateway.destroyForcibly();
        gateway.waitFor(20, TimeUnit.SECONDS);
        start();
        pluginStarts++;
        plugin.awaitType("initialized", pluginStarts);
        connectWeb(thread);
      } else if (action < 96) {
        log.add("cut the socket");
        web.close();
        connectWeb(thread);
      } else {
        log.add("stall the reader");
        web.ws.pause();
        Thread.sleep(400);
        web.ws.resume();
      }
      Thread.sleep(50 + random.nextInt(250));
    }
    // Let what is running settle, then stop gracefully: the pending table is cancelled and recorded.
    Thread.sleep(1_000);
    gateway.destroy();
    if (!gateway.waitFor(60, TimeUnit.SECONDS) || gateway.exitValue() != 0) {
      throw new AssertionError("the gateway did not stop cleanly on SIGTERM");
    }
    web.close();
    check();
    System.out.println("  passed: " + log + "; " + LedgerReader.requests(dir.resolve("data").resolve("switchboard.db"),
        false, 10_000).size() + " permission requests");
  }

  private void start() throws Exception {
    JarGateway started = JarGateway.start(dir, dir.resolve("switchboard.json"));
    gateway = started.process();
    port = started.port();
    token = Files.readString(dir.resolve("data").resolve("token")).trim();
  }

  /** Connects a browser socket, makes the web thread (or resumes it after the last event seen). */
  private String connectWeb(String thread) {
    web = ChatClient.open(vertx, port, token);
    web.ws.textMessageHandler(t -> {
      synchronized (webFrames) {
        webFrames.add(new JsonObject(t));
      }
    });
    if (thread == null) {
      web.ws.writeTextMessage(new JsonObject().put("type", "new_thread").put("clientRef", "t").encode());
      PermissionHarness.waitFor(() -> frames("thread").size() == 1, "the web thread");
      thread = frames("thread").get(0).getString("threadId");
    }
    long after = frames("event").stream().mapToLong(f -> f.getLong("seq")).max().orElse(0);
    web.ws.writeTextMessage(new JsonObject().put("type", "attach").put("threadId", thread).put("afterSeq", after)
        .encode());
    return thread;
  }

  private List<JsonObject> frames(String type) {
    synchronized (webFrames) {
      return webFrames.stream().filter(f -> type.equals(f.getString("type"))).toList();
    }
  }

  private void answerWeb(Random random) {
    Set<String> ended = new HashSet<>();
    frames("permission_resolved").forEach(f -> ended.add(f.getString("requestId")));
    List<JsonObject> open = frames("permission_request").stream()
        .filter(f -> !ended.contains(f.getString("requestId"))).toList();
    if (open.isEmpty()) {
      log.add("web answer (no card)");
      return;
    }
    JsonObject card = open.get(random.nextInt(open.size()));
    String option = random.nextBoolean() ? "allow-once" : "reject";
    log.add("web answer " + option);
    web.ws.writeTextMessage(new JsonObject().put("type", "permission_answer")
        .put("requestId", card.getString("requestId")).put("optionId", option).encode());
  }

  private void answerPlugin(Random random) {
    List<JsonObject> cards = plugin.received(r -> "card".equals(r.getString("type")));
    if (cards.isEmpty()) {
      log.add("plugin tap (no card)");
      return;
    }
    JsonObject card = cards.get(random.nextInt(cards.size()));
    String option = random.nextBoolean() ? "allow-once" : "reject";
    log.add("plugin tap " + option);
    plugin.tap(card.getString("key"), option, "42");
  }

  private void killAgent(Random random) {
    List<ProcessHandle> agents = gateway.toHandle().descendants()
        .filter(p -> p.info().arguments().map(a -> String.join(" ", a).contains("DemoAgent")).orElse(false))
        .toList();
    if (agents.isEmpty()) {
      log.add("kill -9 agent (none running)");
      return;
    }
    log.add("kill -9 agent");
    agents.get(random.nextInt(agents.size())).destroyForcibly();
  }

  /** The invariants, from the ledger and from what the surfaces received. */
  private void check() throws Exception {
    Path db = dir.resolve("data").resolve("switchboard.db");
    JsonArray requests = LedgerReader.requests(db, false, 10_000);
    Map<String, JsonObject> byId = new HashMap<>();
    for (Object o : requests) {
      JsonObject r = (JsonObject) o;
      byId.put(r.getString("requestId"), r);
      String id = r.getString("requestId");
      if ("pending".equals(r.getString("state"))) {
        throw new AssertionError("request " + id + " is still pending after a graceful stop");
      }
      long ends = r.getJsonArray("events").stream().map(e -> ((JsonObject) e).getString("event"))
          .filter(e -> e.equals("selected") || e.equals("cancelled")).count();
      if (ends != 1) {
        throw new AssertionError("request " + id + " ended " + ends + " times: " + r.getJsonArray("events"));
      }
      JsonObject outcome = r.getJsonObject("outcome");
      if ("selected".equals(outcome.getString("outcome"))) {
        String surface = outcome.getJsonObject("answeredBy").getString("surface");
        if (!r.getJsonArray("eligible").contains(surface)) {
          throw new AssertionError("request " + id + " answered from " + surface + ", outside " + r.getJsonArray("eligible"));
        }
      }
    }
    // What the browser was told agrees with the ledger.
    for (JsonObject f : frames("permission_resolved")) {
      JsonObject row = byId.get(f.getString("requestId"));
      if (row == null || !row.getJsonObject("outcome").equals(f.getJsonObject("outcome"))) {
        throw new AssertionError("the web saw " + f + " but the ledger has " + row);
      }
    }
    // Every output marked delivered reached the plugin, under one id with one body.
    Map<String, String> seenBodies = new HashMap<>();
    for (JsonObject r : plugin.received()) {
      JsonObject params = r.getJsonObject("params");
      String id = params == null ? null : params.getString("outputId");
      if (id == null && "card".equals(r.getString("type"))) {
        id = r.getString("key");
      }
      if (id != null) {
        String body = params.getString("text", params.getString("requestId", ""));
        String before = seenBodies.putIfAbsent(id, body);
        if (before != null && !before.equals(body)) {
          throw new AssertionError("output " + id + " came with two different bodies");
        }
      }
    }
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db + "?open_mode=1");
         ResultSet rs = c.createStatement().executeQuery("SELECT output_id, kind FROM outbox WHERE state = 'delivered'")) {
      while (rs.next()) {
        if (!seenBodies.containsKey(rs.getString(1))) {
          throw new AssertionError("output " + rs.getString(1) + " (" + rs.getString(2)
              + ") is marked delivered but the plugin never got it");
        }
      }
    }
  }
}
