package io.switchboard.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.switchboard.config.AgentSpec;
import io.switchboard.jsonrpc.StdioProcess;
import io.switchboard.process.AgentState;
import io.switchboard.process.Sandbox;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.MockAnthropicApi;
import io.switchboard.testkit.Peers;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The real agents from npm (Claude Code's adapter, Gemini CLI, Codex's adapter) under the closed
 * sandbox, each with a fresh HOME, no key and no network but npm's: each starts, answers
 * {@code initialize} and {@code session/new} (or asks for a login, which the thread shows with the
 * agent's own words and its ways to log in), writes its own state folder in HOME, and nothing else
 * of HOME changes. A state folder {@link AgentState} does not know would show here as a crash
 * before the login error, or as EROFS on the agent's stderr. Claude Code also runs whole turns on a
 * mock of its model's API and resumes its session after the gateway restarts. OpenCode is not among them: opencode-ai
 * 1.18.33 installs two 177 MB builds of its program (354 MB), too much for every test machine's
 * {@code npm ci}; run by hand the same way, it opened a session and wrote only its four XDG folders
 * and {@code ~/.npm}.
 */
@ExtendWith(VertxExtension.class)
class RealAgentsSandboxTest {
  private static final org.slf4j.Logger log = LoggerFactory.getLogger(RealAgentsSandboxTest.class);

  @TempDir
  Path dir;

  @Test
  void claudeCodeOpensASessionAndAsksForALoginAtThePrompt(Vertx vertx) throws Exception {
    // As root the adapter only starts sessions when told it runs in a sandbox (IS_SANDBOX).
    Map<String, Path> wrote = run(vertx, "claude", Peers.claudeAgentAcp(), Map.of("IS_SANDBOX", "1",
        "ANTHROPIC_API_KEY", ""), "READY", "needs you to log in");
    // The sandbox made ~/.claude.json holding "{}"; Claude Code wrote its settings into it in place.
    assertTrue(wrote.containsKey(".claude.json"), "what it wrote: " + wrote.keySet());
  }

  @Test
  void geminiCliAsksForALoginAtSessionNew(Vertx vertx) throws Exception {
    Map<String, Path> wrote = run(vertx, "gemini", Peers.geminiCli(), Map.of(), null,
        "needs you to log in first (Gemini API key is missing or not configured.)",
        // Its authMethods from initialize, offered as agents[].authMethod values.
        "gemini-api-key (Gemini API key: ");
    for (String own : List.of(".gemini/installation_id", ".gemini/projects.json")) {
      assertTrue(wrote.containsKey(own), own + " in what it wrote: " + wrote.keySet());
    }
  }

  @Test
  void codexAsksForALoginAtSessionNew(Vertx vertx) throws Exception {
    Map<String, Path> wrote = run(vertx, "codex", Peers.codexAcp(), Map.of(), null,
        "needs you to log in first (Authentication required)",
        // The variable its API-key login needs is named: the method's id alone did not log it in.
        "codex-api-key (Use CODEX_API_KEY: Requires setting the `CODEX_API_KEY` environment variable.), with "
            + "CODEX_API_KEY set in agents[].env");
    assertTrue(wrote.containsKey(".codex/installation_id"), "what it wrote: " + wrote.keySet());
  }

  /**
   * Runs {@code argv} sandboxed with a fresh HOME (and its own {@code env}), prompts once, and checks
   * the thread's error says {@code says} and the process reached {@code state} (null: any); stops
   * it. What it wrote in HOME (relative path to the path), all of it inside its own state.
   */
  private Map<String, Path> run(Vertx vertx, String id, List<String> argv, Map<String, String> own, String state,
                                String... says) throws Exception {
    assertEquals(null, Sandbox.probe(), "bubblewrap must run here (scripts/test.sh installs it)");
    Path home = personsHome(dir.resolve("home"));
    Map<String, String> env = homeEnv(home, own);
    Map<String, String> before = snapshot(home);

    Logger processLog = (Logger) LoggerFactory.getLogger(StdioProcess.class);
    ListAppender<ILoggingEvent> stderr = new ListAppender<>();
    stderr.start();
    processLog.addAppender(stderr);
    AgentHarness gateway = new AgentHarness(vertx, dir.resolve("data"), new AgentRoom.Timings(120_000, 5_000),
        new AgentSpec(id, id, null, argv, env, null, null, Sandbox.Mode.BWRAP)).start();
    try {
      String t = gateway.thread(id, "web");
      gateway.prompt(t, "hello");
      assertEquals("error", gateway.awaitTurnEnd(t, 1), gateway.summary(t));
      String text = gateway.eventsOfKind(t, "system").stream().filter(e -> "error".equals(e.getString("level")))
          .map(e -> e.getString("text")).findFirst().orElseThrow();
      // The agent's own words: it ran and answered, rather than dying in the sandbox.
      for (String said : says) {
        assertTrue(text.contains(said), "\"" + said + "\" in: " + text);
      }
      if (state != null) {
        JsonObject status = gateway.agentStatus(t);
        assertEquals(state, status == null ? null : status.getString("state"), String.valueOf(status));
      }
      gateway.stop();
    } finally {
      processLog.detachAppender(stderr);
      gateway.close();
    }
    List<String> refused = stderr.list.stream().map(ILoggingEvent::getFormattedMessage)
        .filter(line -> line.toLowerCase(Locale.ROOT).contains("erofs")
            || line.toLowerCase(Locale.ROOT).contains("read-only file system"))
        .toList();
    assertEquals(List.of(), refused, "the agent was refused a write");

    return ownWrites(id, argv, env, home, before);
  }

  /**
   * "On a mock model": Claude Code against a loopback stand-in for its Messages API runs a whole turn
   * in the sandbox; after the gateway restarts, the thread's next prompt resumes the same session
   * (session/resume), and the model is sent the conversation so far.
   */
  @Test
  void claudeCodeRunsAWholeTurnOnAMockModelAndResumesItAfterARestart(Vertx vertx) throws Exception {
    assertEquals(null, Sandbox.probe(), "bubblewrap must run here (scripts/test.sh installs it)");
    String reply = "Noted, from the mock model.";
    MockAnthropicApi model = MockAnthropicApi.start(vertx, reply);
    Path home = personsHome(dir.resolve("home"));
    List<String> argv = Peers.claudeAgentAcp();
    Map<String, String> env = homeEnv(home, Map.of("IS_SANDBOX", "1", "ANTHROPIC_API_KEY", "sk-mock",
        "ANTHROPIC_BASE_URL", model.baseUrl(),
        // No telemetry, update checks or other calls beside the model's.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"));
    Map<String, String> before = snapshot(home);
    AgentSpec claude = new AgentSpec("claude", "Claude Code", null, argv, env, null, null, Sandbox.Mode.BWRAP);
    Path data = dir.resolve("data");
    AgentRoom.Timings timings = new AgentRoom.Timings(120_000, 5_000);
    String t;
    String session;
    AgentHarness gateway = new AgentHarness(vertx, data, timings, claude).start();
    try {
      t = gateway.thread("claude", "web");
      gateway.prompt(t, "Remember the word pelican.");
      assertEquals("end_turn", gateway.awaitTurnEnd(t, 1), gateway.summary(t));
      assertEquals(reply, gateway.text(t));
      session = gateway.agentStatus(t).getString("acpSessionId");
      gateway.stop();
    } finally {
      gateway.close();
    }
    assertTrue(model.requests.size() >= 1, "the model was asked");

    AgentHarness restarted = new AgentHarness(vertx, data, timings, claude).start();
    try {
      restarted.follow(t);
      restarted.prompt(t, "Which word was it?");
      assertEquals("end_turn", restarted.awaitTurnEnd(t, 1), restarted.summary(t));
      assertEquals(reply, restarted.text(t));
      assertEquals(session, restarted.agentStatus(t).getString("acpSessionId"), "the same session, resumed");
      assertEquals(List.of(), restarted.eventsOfKind(t, "system"), "no word of a new session or a failure");
      restarted.stop();
    } finally {
      restarted.close();
      model.close();
    }
    // The resumed turn sent the model the first turn too: the agent remembered it across the restart.
    List<String> asked = java.util.stream.IntStream.range(0, model.requests.size()).mapToObj(model::conversation).toList();
    assertTrue(asked.stream().anyMatch(c -> c.contains("pelican") && c.contains(reply) && c.contains("Which word was it?")),
        "what the model was sent: " + asked);
    ownWrites("claude", argv, env, home, before);
  }

  /** The agent's environment for a fresh {@code home}, over its {@code own}. */
  private static Map<String, String> homeEnv(Path home, Map<String, String> own) {
    Map<String, String> env = new HashMap<>(own);
    env.put("HOME", home.toString());
    // The XDG defaults, named: a test machine's own XDG_* would send the agent's writes elsewhere.
    env.put("XDG_CONFIG_HOME", home.resolve(".config").toString());
    env.put("XDG_DATA_HOME", home.resolve(".local/share").toString());
    env.put("XDG_CACHE_HOME", home.resolve(".cache").toString());
    env.put("XDG_STATE_HOME", home.resolve(".local/state").toString());
    return Map.copyOf(env);
  }

  /**
   * What the agent run as {@code argv} with {@code env} wrote in {@code home} since {@code before}
   * (relative path to the path), checked to be all its own state, nothing gone.
   */
  private static Map<String, Path> ownWrites(String id, List<String> argv, Map<String, String> env, Path home,
                                             Map<String, String> before) throws Exception {
    Map<String, String> after = snapshot(home);
    List<String> gone = before.keySet().stream().filter(p -> !after.containsKey(p)).toList();
    assertEquals(List.of(), gone, "removed from HOME");
    AgentState.Paths allowed = AgentState.of(argv, env);
    List<Path> ownPaths = Stream.concat(allowed.folders().stream(), allowed.files().stream().map(f -> f.path())).toList();
    Map<String, Path> wrote = new TreeMap<>();
    after.forEach((p, what) -> {
      Path path = home.resolve(p);
      // The sandbox makes the folders that lead to the agent's own (~/.local for ~/.local/share/x).
      boolean leadsToOwn = what.equals("folder") && ownPaths.stream().anyMatch(o -> o.startsWith(path) && !o.equals(path));
      if (!what.equals(before.get(p)) && !leadsToOwn) {
        wrote.put(p, path);
      }
    });
    log.info("{} wrote {} paths in its HOME, in: {}", id, wrote.size(),
        wrote.keySet().stream().map(p -> Path.of(p).subpath(0, Math.min(2, Path.of(p).getNameCount())).toString())
            .distinct().toList());
    for (Path p : wrote.values()) {
      assertTrue(allowed.folders().stream().anyMatch(p::startsWith)
              || allowed.files().stream().anyMatch(f -> f.path().equals(p)),
          home.relativize(p) + " is not the agent's own state (" + allowed + "); all it wrote: " + wrote.keySet());
    }
    return wrote;
  }

  /** A HOME with what a person keeps there, which no agent may change. */
  private static Path personsHome(Path home) throws IOException {
    Files.createDirectories(home.resolve(".ssh"));
    Files.writeString(home.resolve(".ssh").resolve("authorized_keys"), "ssh-ed25519 AAAA person\n");
    Files.writeString(home.resolve(".bashrc"), "# the person's own\n");
    Files.writeString(home.resolve(".gitconfig"), "[user]\n\tname = Person\n");
    Files.createDirectories(home.resolve(".config").resolve("git"));
    Files.writeString(home.resolve(".config").resolve("git").resolve("ignore"), "*.swp\n");
    return home;
  }

  /** Every path under {@code home} (relative) with what it is: a folder, a link's target, a file's digest. */
  private static Map<String, String> snapshot(Path home) throws Exception {
    Map<String, String> seen = new TreeMap<>();
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    List<Path> paths = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(home)) {
      walk.forEach(paths::add);
    }
    for (Path p : paths) {
      String what;
      if (Files.isSymbolicLink(p)) {
        what = "link to " + Files.readSymbolicLink(p);
      } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
        what = "folder";
      } else {
        what = HexFormat.of().formatHex(sha.digest(Files.readAllBytes(p)));
      }
      seen.put(home.relativize(p).toString(), what);
    }
    return seen;
  }
}
