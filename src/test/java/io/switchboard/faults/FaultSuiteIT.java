package io.switchboard.faults;

import io.switchboard.process.ProcessTree;
import io.switchboard.store.LedgerReader;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.FakePlugin;
import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.PermissionHarness;
import io.switchboard.testkit.PluginControl;
import io.switchboard.testkit.SeededRuns;
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
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Fault injection against the real jar. A browser socket drives four threads: one with the demo
 * agent and three with agents that misbehave on purpose (a Node script, no JVM: one asks and exits
 * in the same breath, one asks under a session id the gateway never opened, one forks children,
 * one of them in a session of its own, and dies). Two scripted IM plugins drive the demo agent: one
 * in the acp dialect, one in the vibearound dialect. At seeded random points the agents, the
 * plugins or the gateway itself are SIGKILLed (the gateway is then started again), the acp plugin
 * dies before acknowledging, the vibearound plugin dies after reading outputs but before answering
 * the read receipt that confirms them (its platform then sends again the messages it had taken), a
 * third plugin answers every card by itself naming no one, sockets are cut and readers stall.
 * After each run the
 * ledger, what every surface received and the processes left are checked (docs/reliability.md).
 * Seeds are printed; {@code -Dfault.seed=N} replays one, {@code -Dfault.runs=N} sets how many
 * (default 2 in CI).
 */
class FaultSuiteIT extends JarFaultSuite {
  static final Path BAD_AGENT = Path.of("src", "test", "badpeers", "bad-agent.js").toAbsolutePath();
  static final List<String> BAD_MODES = List.of("ask-exit", "foreign-session", "fork-exit");
  /** Plugin deaths we cause per gateway process and plugin: more would trip its circuit breaker. */
  static final int DEATHS_PER_PLUGIN = 2;
  /** How many times the gateway asks a refused card again (OutboxDelivery.MAX_REASKS, package-private there). */
  static final int REASKS = 3;

  ChatClient web;
  PluginControl im;
  PluginControl va;
  /** An acp plugin that answers every card itself, naming no one (refused: not an approver). */
  PluginControl auto;
  /** Gateway processes started in this run (each one's re-asks are bounded afresh). */
  int gatewayStarts;
  final Map<String, String> threads = new HashMap<>();
  final List<JsonObject> webFrames = new ArrayList<>();
  final Map<String, Integer> deaths = new HashMap<>();
  final Map<String, Integer> faultCounts = new TreeMap<>();

  @Test
  void seededRunsKeepEveryInvariant() throws Exception {
    int runs = SeededRuns.play("fault", "fault.seed", "fault.runs", 2, this::run, () -> log);
    System.out.println("faults injected in " + runs + " runs: " + faultCounts);
  }

  private void fault(String name) {
    log.add(name);
    faultCounts.merge(name, 1, Integer::sum);
  }

  private void run(long seed) throws Exception {
    Random random = new Random(seed);
    dir = Files.createTempDirectory("sb-fault-" + seed);
    token = null;
    webFrames.clear();
    log.clear();
    threads.clear();
    deaths.clear();
    im = new PluginControl(dir.resolve("im"));
    va = new PluginControl(dir.resolve("va"));
    auto = new PluginControl(dir.resolve("auto"));
    gatewayStarts = 0;
    Files.writeString(dir.resolve("switchboard.json"), config().encode());

    start();
    im.awaitType("initialized", 1);
    va.awaitType("initialized", 1);
    auto.awaitType("initialized", 1);
    connectWeb();
    int steps = 8 + random.nextInt(10);
    for (int step = 0; step < steps; step++) {
      int action = random.nextInt(100);
      if (action < 16) {
        log.add("web prompt");
        webPrompt("demo", "web " + step);
      } else if (action < 24) {
        String mode = BAD_MODES.get(random.nextInt(BAD_MODES.size()));
        fault("bad agent " + mode);
        webPrompt(mode, "bad " + step);
      } else if (action < 36) {
        log.add("im prompt");
        im.prompt("42", "42", "im " + step);
      } else if (action < 42) {
        log.add("va prompt");
        // With the platform's message id: a process that dies with it gets it sent again to the next.
        va.prompt("7", "7", "va " + step, "va-" + seed + "-" + step);
      } else if (action < 44) {
        log.add("auto prompt");
        auto.prompt("5", "5", "auto " + step);
      } else if (action < 54) {
        answerWeb(random);
      } else if (action < 62) {
        tap(im, random, "42");
      } else if (action < 68) {
        tap(va, random, null);
      } else if (action < 71) {
        log.add("web cancel");
        web.ws.writeTextMessage(new JsonObject().put("type", "cancel").put("threadId", threads.get("demo")).encode());
      } else if (action < 77) {
        killAgent(random);
      } else if (action < 80) {
        // Either dialect's plugin: the plugin steps run in both.
        boolean acp = random.nextBoolean();
        if (mayKill(acp ? "im" : "va")) {
          fault("kill -9 " + (acp ? "im" : "va") + " plugin");
          restart(acp ? im : va, () -> { });
        }
      } else if (action < 83) {
        if (mayKill("im")) {
          fault("im plugin dies before acknowledging");
          restart(im, () -> {
            im.act(new JsonObject().put("acking", false));
            sleep(100 + random.nextInt(1_500));
          });
        }
      } else if (action < 86) {
        if (mayKill("va")) {
          fault("va plugin dies before answering the read receipt");
          // The help text is an output: the read receipt that would confirm it kills the process instead.
          restart(va, () -> {
            va.act(new JsonObject().put("dieOnReceipt", true));
            sleep(100);
            va.prompt("7", "7", "/help");
          });
        }
      } else if (action < 90) {
        fault("kill -9 gateway, restart");
        gateway.destroyForcibly();
        gateway.waitFor(20, TimeUnit.SECONDS);
        int imUp = initialized(im);
        int vaUp = initialized(va);
        int autoUp = initialized(auto);
        start();
        deaths.clear();
        im.awaitType("initialized", imUp + 1);
        va.awaitType("initialized", vaUp + 1);
        auto.awaitType("initialized", autoUp + 1);
        web.close();
        connectWeb();
      } else if (action < 95) {
        fault("cut the socket");
        web.close();
        connectWeb();
      } else {
        fault("stall the reader");
        web.ws.pause();
        Thread.sleep(400);
        web.ws.resume();
      }
      Thread.sleep(50 + random.nextInt(250));
    }
    // Every chat still answers prompts after whatever its plugin went through.
    finalPrompt(im, "42", "42");
    finalPrompt(va, "7", null);
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

  /** The jar's config: the demo agent, the three bad agents, and the two fake plugins. */
  private JsonObject config() {
    JsonArray agents = new JsonArray().add(new JsonObject().put("id", "demo").put("builtin", "demo")
        .put("env", new JsonObject().put("DEMO_AGENT_DELAY_MS", "3")));
    for (String mode : BAD_MODES) {
      agents.add(new JsonObject().put("id", mode).put("command", new JsonArray().add("node")
          .add(BAD_AGENT.toString()).add(mode)));
    }
    JsonArray plugins = new JsonArray()
        .add(plugin("im", "acp", im))
        .add(plugin("va", "vibearound", va, "redeliver"))
        .add(plugin("auto", "acp", auto, "auto-tap=allow-once"));
    return new JsonObject().put("http", new JsonObject().put("port", 0))
        .put("dataDir", dir.resolve("data").toString()).put("agents", agents).put("plugins", plugins);
  }

  private static JsonObject plugin(String id, String dialect, PluginControl control, String... flags) {
    List<String> args = new ArrayList<>(List.of(dialect, control.dir.toString()));
    args.addAll(List.of(flags));
    return new JsonObject().put("id", id).put("dialect", dialect).put("agent", "demo")
        .put("users", new JsonArray().add("*"))
        .put("command", new JsonArray(AgentHarness.javaArgv(FakePlugin.class, args.toArray(String[]::new))));
  }

  private void start() throws Exception {
    JarGateway started = JarGateway.start(dir, dir.resolve("switchboard.json"));
    gatewayStarts++;
    gateway = started.process();
    port = started.port();
    if (token == null) {
      token = started.token(); // printed once, by the first start on this data directory
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private boolean mayKill(String plugin) {
    if (deaths.getOrDefault(plugin, 0) >= DEATHS_PER_PLUGIN) {
      log.add("(no more deaths for " + plugin + " in this gateway process)");
      return false;
    }
    deaths.merge(plugin, 1, Integer::sum);
    return true;
  }

  private static int initialized(PluginControl plugin) {
    return plugin.received(r -> "initialized".equals(r.getString("type"))).size();
  }

  /** Arms a death (or none), kills the plugin's current process, and waits for the next one to start. */
  private void restart(PluginControl plugin, Runnable arm) {
    int up = initialized(plugin);
    List<JsonObject> starts = plugin.received(r -> "started".equals(r.getString("type")));
    long pid = starts.get(starts.size() - 1).getLong("pid");
    arm.run();
    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly); // already dead if the armed death came
    plugin.awaitType("initialized", up + 1);
  }

  /** Connects a browser socket: makes the four threads on the first connect, then resumes each. */
  private void connectWeb() {
    web = ChatClient.open(vertx, port, token);
    web.ws.textMessageHandler(t -> {
      synchronized (webFrames) {
        webFrames.add(new JsonObject(t));
      }
    });
    if (threads.isEmpty()) {
      List<String> agents = new ArrayList<>(List.of("demo"));
      agents.addAll(BAD_MODES);
      for (String agent : agents) {
        web.ws.writeTextMessage(new JsonObject().put("type", "new_thread").put("agent", agent).put("clientRef", agent)
            .encode());
        // Our own answer carries our clientRef (every page also hears of the thread without one).
        PermissionHarness.waitFor(() -> frames("thread").stream().anyMatch(f -> agent.equals(f.getValue("clientRef"))),
            "the " + agent + " thread");
        threads.put(agent, frames("thread").stream().filter(f -> agent.equals(f.getValue("clientRef"))).findFirst()
            .orElseThrow().getString("threadId"));
      }
    }
    for (String thread : threads.values()) {
      long after = frames("event").stream().filter(f -> thread.equals(f.getString("threadId")))
          .mapToLong(f -> f.getLong("seq")).max().orElse(0);
      web.ws.writeTextMessage(new JsonObject().put("type", "attach").put("threadId", thread).put("afterSeq", after)
          .encode());
    }
  }

  private void webPrompt(String agent, String text) {
    web.ws.writeTextMessage(new JsonObject().put("type", "prompt").put("threadId", threads.get(agent))
        .put("text", text).encode());
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
    List<String> options = card.getJsonArray("options").stream().map(o -> ((JsonObject) o).getString("optionId"))
        .toList();
    String option = options.get(random.nextInt(options.size()));
    log.add("web answer " + option);
    web.ws.writeTextMessage(new JsonObject().put("type", "permission_answer")
        .put("requestId", card.getString("requestId")).put("optionId", option).encode());
  }

  private void tap(PluginControl plugin, Random random, String sender) {
    List<JsonObject> cards = plugin.received(r -> "card".equals(r.getString("type")));
    if (cards.isEmpty()) {
      log.add("tap (no card)");
      return;
    }
    JsonObject card = cards.get(random.nextInt(cards.size()));
    String option = random.nextBoolean() ? "allow-once" : "reject";
    log.add((plugin == im ? "im" : "va") + " tap " + option);
    plugin.tap(card.getString("key"), option, sender);
  }

  /**
   * A last prompt from a plugin's chat must run and end, whatever the plugin went through: every
   * card that comes meanwhile (this prompt's, or those of prompts still queued in the chat's lane)
   * is tapped on the plugin's current process.
   */
  private void finalPrompt(PluginControl plugin, String chat, String sender) {
    String text = "final " + chat;
    plugin.prompt(chat, chat, text);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    Set<String> tapped = new HashSet<>();
    while (plugin.received(r -> "prompt_result".equals(r.getString("type"))
        && text.equals(r.getString("prompt"))).isEmpty()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("chat " + chat + " no longer answers prompts; the plugin saw " + plugin.summary());
      }
      // Only cards of the current process can be tapped: earlier ones died with theirs.
      List<JsonObject> all = plugin.received();
      int lastStart = 0;
      for (int i = 0; i < all.size(); i++) {
        if ("started".equals(all.get(i).getString("type"))) {
          lastStart = i;
        }
      }
      // Each card as it arrives, a card shown again included (the vibearound SDK rejects the cards it
      // shows when a prompt starts; the gateway shows them again under the same key).
      for (int i = lastStart; i < all.size(); i++) {
        JsonObject r = all.get(i);
        if ("card".equals(r.getString("type")) && tapped.add(r.getString("key") + "#" + i)) {
          plugin.tap(r.getString("key"), "allow-once", sender);
        }
      }
      sleep(50);
    }
    log.add("final prompt of " + chat + " answered");
  }

  private void killAgent(Random random) {
    List<ProcessHandle> agents = gateway.toHandle().descendants()
        .filter(p -> p.info().arguments().map(a -> String.join(" ", a).contains("DemoAgent")).orElse(false))
        .toList();
    if (agents.isEmpty()) {
      log.add("kill -9 agent (none running)");
      return;
    }
    fault("kill -9 agent");
    agents.get(random.nextInt(agents.size())).destroyForcibly();
  }

  /** The invariants, from the ledger, from what the surfaces received, and from the processes left. */
  private void check() throws Exception {
    // No process the gateway started outlives it: agents, their children (setsid ones too), plugins.
    String owner = ProcessTree.ownerOf(dir.resolve("data"));
    PermissionHarness.waitFor(() -> ProcessTree.carrying(ProcessTree.OWNER_VARIABLE, owner).isEmpty(),
        "every process the gateway started to be gone; left: " + describe(ProcessTree.carrying(
            ProcessTree.OWNER_VARIABLE, owner)), 10_000);

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
      // A request of an agent that exits in the same breath never waits for the shutdown to end it.
      if (r.getString("threadId").equals(threads.get("ask-exit")) && "shutdown".equals(outcome.getString("reason"))) {
        throw new AssertionError("request " + id + " of an agent that had exited waited until the shutdown: " + r);
      }
      // The session is the gateway's, whatever id the agent wrote.
      if ("someone-elses-session".equals(r.getString("sessionId"))) {
        throw new AssertionError("request " + id + " carries the agent's claimed session id: " + r);
      }
    }
    // What the browser was told agrees with the ledger.
    for (JsonObject f : frames("permission_resolved")) {
      JsonObject row = byId.get(f.getString("requestId"));
      if (row == null || !row.getJsonObject("outcome").equals(f.getJsonObject("outcome"))) {
        throw new AssertionError("the web saw " + f + " but the ledger has " + row);
      }
    }
    checkAcpOutputs(db);
    checkVibearoundOutputs(db);
    checkNoUpdateAfterItsPromptsAnswer();
    checkBoundedReasks();
  }

  /**
   * vibearound: a chat's live output reaches a process only while one of that chat's prompts is open
   * there — never after the prompt was answered (the SDK closed its message; the rest would show as
   * stray messages), a prompt the platform sent again after its process died included.
   */
  private void checkNoUpdateAfterItsPromptsAnswer() {
    Map<String, Integer> open = new HashMap<>();
    for (JsonObject r : va.received()) {
      String type = r.getString("type");
      if ("started".equals(type)) {
        open.clear(); // a new process: what the dead one held open is gone with it
      } else if ("prompt_sent".equals(type)) {
        open.merge(r.getString("chat"), 1, Integer::sum);
      } else if ("prompt_result".equals(type)) {
        open.merge(r.getString("chat"), -1, Integer::sum);
      } else if ("_va/thread_reply".equals(r.getString("method"))) {
        String chat = r.getJsonObject("params").getJsonObject("target").getString("chatId");
        if (open.getOrDefault(chat, 0) <= 0) {
          throw new AssertionError("chat " + chat + " got live output with no prompt of it open: " + r
              + "; the plugin saw " + va.summary());
        }
      }
    }
  }

  /** A plugin that answers every card itself is asked again a bounded number of times a request. */
  private void checkBoundedReasks() {
    Map<String, Integer> cards = new HashMap<>();
    for (JsonObject r : auto.received(c -> "card".equals(c.getString("type")))) {
      cards.merge(r.getJsonObject("params").getJsonObject("_meta").getJsonObject("switchboard")
          .getString("requestId"), 1, Integer::sum);
    }
    // Each gateway start shows a waiting card once and asks it again at most MAX_REASKS times.
    int bound = (1 + REASKS) * gatewayStarts;
    cards.forEach((request, n) -> {
      if (n > bound) {
        throw new AssertionError("request " + request + " was shown " + n + " times to a plugin that taps by "
            + "itself (at most " + bound + " over " + gatewayStarts + " gateway starts)");
      }
    });
    if (!cards.isEmpty()) {
      fault("self-tapping plugin: " + cards.values().stream().mapToInt(Integer::intValue).sum() + " cards");
    }
  }

  private static String describe(List<ProcessHandle> processes) {
    return processes.stream().map(p -> p.pid() + " " + p.info().commandLine().orElse("?")).toList().toString();
  }

  /** acp: every output marked delivered reached the plugin, under one id with one body. */
  private void checkAcpOutputs(Path db) throws Exception {
    Map<String, String> seenBodies = new HashMap<>();
    for (JsonObject r : im.received()) {
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
    for (String[] row : delivered(db, "im")) {
      if (!seenBodies.containsKey(row[0])) {
        throw new AssertionError("output " + row[0] + " (" + row[1] + ") is marked delivered but the plugin never got it");
      }
    }
  }

  /**
   * vibearound (no acknowledgements): every output marked delivered reached a process of the plugin
   * that answered a read receipt after receiving it.
   */
  private void checkVibearoundOutputs(Path db) throws Exception {
    // Per process: what it received before each read receipt it answered.
    List<JsonObject> all = va.received();
    Set<String> confirmedTexts = new HashSet<>();
    Set<String> confirmedCards = new HashSet<>();
    List<JsonObject> sinceStart = new ArrayList<>();
    for (JsonObject r : all) {
      if ("started".equals(r.getString("type"))) {
        sinceStart.clear();
      } else if ("request".equals(r.getString("type")) && "terminal/release".equals(r.getString("method"))) {
        for (JsonObject got : sinceStart) {
          JsonObject params = got.getJsonObject("params", new JsonObject());
          if ("card".equals(got.getString("type"))) {
            confirmedCards.add(got.getString("key"));
          } else if (params.getValue("text") instanceof String text) {
            confirmedTexts.add(text);
          }
        }
      } else {
        sinceStart.add(r);
      }
    }
    for (String[] row : delivered(db, "va")) {
      JsonObject body = new JsonObject(row[2]);
      boolean ok = switch (row[1]) {
        case "card" -> confirmedCards.contains(row[0])
            || confirmedTexts.stream().anyMatch(t -> t.startsWith("A permission request is waiting"));
        // Not sent at all when the chat's own tap answered it (the card shows the choice already).
        case "card_end" -> confirmedTexts.stream().anyMatch(t -> t.startsWith("The permission request"))
            || body.getJsonObject("outcome", new JsonObject()).getJsonObject("answeredBy", new JsonObject())
                .getString("surface", "").startsWith("va:");
        case "final" -> confirmedTexts.stream().anyMatch(t -> t.contains(body.getString("text")))
            || body.getInteger("streamedTo") != null;
        default -> confirmedTexts.contains(body.getString("text"));
      };
      if (!ok) {
        throw new AssertionError("output " + row[0] + " (" + row[1] + ": " + row[2] + ") is marked delivered but no "
            + "process of the vibearound plugin confirmed it; it saw " + va.summary());
      }
    }
  }

  private static List<String[]> delivered(Path db, String pluginId) throws Exception {
    List<String[]> rows = new ArrayList<>();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db + "?open_mode=1");
         var st = c.prepareStatement("SELECT output_id, kind, body FROM outbox WHERE plugin_id = ? AND state = 'delivered'")) {
      st.setString(1, pluginId);
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          rows.add(new String[] {rs.getString(1), rs.getString(2), rs.getString(3)});
        }
      }
    }
    return rows;
  }
}
