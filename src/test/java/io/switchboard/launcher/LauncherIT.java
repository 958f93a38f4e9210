package io.switchboard.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real fat jar as a process: the command line, exit codes, the printed URL, signals. */
class LauncherIT {
  static final Path JAR = Path.of(System.getProperty("switchboard.jar", "target/switchboard.jar")).toAbsolutePath();
  static final Pattern URL = Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)/");

  @TempDir
  Path dir;
  final List<Process> started = new ArrayList<>();

  @AfterEach
  void killLeftovers() {
    started.forEach(Process::destroyForcibly);
  }

  record Result(int code, String out, String err) {}

  private Process start(String... args) throws IOException {
    return startJar(JAR, args);
  }

  private Process startJar(Path jar, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of("java", "-jar", jar.toString()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("SWITCHBOARD_"));
    pb.redirectError(dir.resolve("stderr-" + started.size() + ".txt").toFile());
    Process p = pb.start();
    started.add(p);
    return p;
  }

  private Result run(String... args) throws Exception {
    Process p = start(args);
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "exits");
    return new Result(p.exitValue(), out, stderrOf(started.size() - 1));
  }

  private String stderrOf(int index) throws IOException {
    return Files.readString(dir.resolve("stderr-" + index + ".txt"));
  }

  /** Reads stdout until the URL line and returns the port it names. */
  private static int awaitPort(Process p) throws IOException {
    return awaitStart(p, false).port();
  }

  record Started(int port, String token) {}

  /** The port of the URL line and, with {@code token}, the token printed on the next line (a first start). */
  private static Started awaitStart(Process p, boolean token) throws IOException {
    BufferedReader reader = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = reader.readLine()) != null) {
      Matcher m = URL.matcher(line);
      if (m.find()) {
        int port = Integer.parseInt(m.group(1));
        if (!token) {
          return new Started(port, null);
        }
        String next = reader.readLine();
        assertTrue(next != null && next.contains("(shown this once): "), "no token line: " + next);
        return new Started(port, next.substring(next.indexOf("(shown this once): ") + 19).trim());
      }
    }
    throw new AssertionError("the gateway printed no URL line");
  }

  private static HttpResponse<String> get(int port, String path) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(java.time.Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void portZeroPrintsThePortAnswersHealthAndStopsCleanlyOnSigterm() throws Exception {
    Process p = start("--port", "0");
    Started started = awaitStart(p, true);
    int port = started.port();
    assertNotEquals(0, port);
    HttpResponse<String> health = get(port, "/healthz");
    assertEquals(200, health.statusCode());
    HttpResponse<String> ready = get(port, "/readyz");
    assertEquals(200, ready.statusCode(), ready.body());
    assertEquals("ready", new JsonObject(ready.body()).getString("status"));

    Path token = dir.resolve("data").resolve("token");
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(token)));
    assertFalse(Files.readString(token).contains(started.token()), "the file keeps only the token's hash");
    // /metrics from the shaded jar (whose Prometheus client is trimmed) answers the text format.
    HttpResponse<String> metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/metrics"))
        .header("Authorization", "Bearer " + started.token()).timeout(java.time.Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, metrics.statusCode(), metrics.body());
    assertTrue(metrics.body().contains("switchboard_permissions_pending"), metrics.body());
    assertTrue(Files.exists(dir.resolve("data").resolve("switchboard.db")));
    // The page and the one build of each webjar it loads (as the build named them in its import map
    // and links) are in the jar: the shade keeps only those.
    String page = get(port, "/").body();
    List<String> assets = new java.util.ArrayList<>(List.of("/js/main.js"));
    java.util.regex.Matcher named = java.util.regex.Pattern.compile("\"(/webjars/[^\"]+)\"").matcher(page);
    while (named.find()) {
      assets.add(named.group(1));
    }
    assertEquals(6, assets.size(), "main.js, marked, DOMPurify, highlight.js and its two themes: " + assets);
    for (String asset : assets) {
      assertEquals(200, get(port, asset).statusCode(), asset);
    }

    // SIGTERM and SIGINT at once (a user pressing Ctrl-C while systemd stops it): one stop runs.
    p.destroy();
    new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start().waitFor();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "stops within 30 s");
    assertEquals(0, p.exitValue(), stderrOf(0));
    assertTrue(stderrOf(0).contains("stopped"));
    assertEquals(1, stderrOf(0).lines().filter(l -> l.endsWith(" stopping")).count(), stderrOf(0));
  }

  @Test
  void aBadConfigExitsTwoNamingTheKey() throws Exception {
    Files.writeString(dir.resolve("bad.json"), "{\"http\": {\"port\": \"eighty\"}}");
    Result r = run("--config", "bad.json");
    assertEquals(2, r.code());
    assertTrue(r.err().contains("http.port"), r.err());

    Files.writeString(dir.resolve("unknown.json"), "{\"agentz\": []}");
    Result unknown = run("--config", "unknown.json");
    assertEquals(2, unknown.code());
    assertTrue(unknown.err().contains("agentz"), unknown.err());
    assertFalse(Files.exists(dir.resolve("data")), "a refused configuration changes nothing");
  }

  /** The per-CPU jar (docs/operations.md, "Which jar") holds only its CPU's SQLite native, and runs. */
  @Test
  void theJarForThisCpuHoldsOnlyItsSqliteNativeAndRuns() throws Exception {
    String arch = switch (System.getProperty("os.arch")) {
      case "amd64", "x86_64" -> "x86_64";
      case "aarch64" -> "aarch64";
      default -> null;
    };
    org.junit.jupiter.api.Assumptions.assumeTrue(arch != null, "no per-CPU jar is built for " + System.getProperty("os.arch"));
    Path jar = JAR.resolveSibling("switchboard-linux-" + arch + ".jar");
    List<String> natives = new ArrayList<>();
    try (java.util.zip.ZipFile zip = new java.util.zip.ZipFile(jar.toFile())) {
      zip.stream().map(java.util.zip.ZipEntry::getName).filter(n -> n.endsWith(".so")).forEach(natives::add);
    }
    assertEquals(List.of("org/sqlite/native/Linux/" + arch + "/libsqlitejdbc.so"), natives);
    Process p = startJar(jar, "--port", "0");
    int port = awaitStart(p, true).port();
    HttpResponse<String> ready = get(port, "/readyz"); // the database took a write: the native loaded
    assertEquals(200, ready.statusCode(), ready.body());
    p.destroy();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
  }

  @Test
  void badUsageExitsTwo() throws Exception {
    Result r = run("--colour", "blue");
    assertEquals(2, r.code());
    assertTrue(r.err().contains("--colour"), r.err());
    Result port = run("--port", "http");
    assertEquals(2, port.code());
    assertTrue(port.err().contains("--port"), port.err());
  }

  @Test
  void helpAndVersion() throws Exception {
    Result help = run("--help");
    assertEquals(0, help.code());
    assertTrue(help.out().contains("token --rotate"));
    Result version = run("--version");
    assertEquals(0, version.code());
    assertTrue(version.out().matches("switchboard \\d+\\.\\d+\\.\\d+.*\\s*"), version.out());
  }

  @Test
  void tokenIsShownOnceKeptAsAHashAndRotates() throws Exception {
    Path file = dir.resolve("data").resolve("token");
    Result first = run("token");
    assertEquals(0, first.code());
    String token = first.out().trim();
    assertTrue(token.length() >= 40, token);
    assertFalse(Files.readString(file).contains(token), "the file keeps only the token's hash");
    Result again = run("token");
    assertEquals(1, again.code(), "a kept token cannot be shown again");
    assertTrue(again.err().contains("token --rotate"), again.err());
    Result rotated = run("token", "--rotate");
    assertEquals(0, rotated.code());
    String next = rotated.out().trim();
    assertNotEquals(token, next);
    assertFalse(Files.readString(file).contains(next));
    // A token an earlier release kept in clear: shown one last time, then only its hash is kept.
    Files.writeString(file, "an-old-token-kept-in-clear-by-an-earlier-release\n");
    Result legacy = run("token");
    assertEquals(0, legacy.code());
    assertEquals("an-old-token-kept-in-clear-by-an-earlier-release", legacy.out().trim());
    assertTrue(Files.readString(file).startsWith("sha256:"), Files.readString(file));
    // ...and it still logs in, to a gateway started on that file.
    Process p = start("--port", "0");
    int port = awaitPort(p);
    assertEquals(200, HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
            + "/api/permissions")).header("Authorization", "Bearer an-old-token-kept-in-clear-by-an-earlier-release")
        .build(), HttpResponse.BodyHandlers.ofString()).statusCode());
    p.destroy();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
  }

  @Test
  void aSecondGatewayOnTheSameDataDirIsRefused() throws Exception {
    Process first = start("--port", "0");
    awaitPort(first);
    Result second = run("--port", "0");
    assertEquals(1, second.code());
    assertTrue(second.err().contains("already running"), second.err());
    first.destroy();
    assertTrue(first.waitFor(30, TimeUnit.SECONDS));
  }

  @Test
  void aBusyPortExitsOneNamingIt() throws Exception {
    try (ServerSocket busy = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      Result r = run("--port", Integer.toString(busy.getLocalPort()));
      assertEquals(1, r.code());
      assertTrue(r.err().contains(Integer.toString(busy.getLocalPort())), r.err());
    }
  }

  @Test
  void doctorReportsAMissingAgentCommandAndABusyPort() throws Exception {
    try (ServerSocket busy = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      Files.writeString(dir.resolve("sick.json"), new JsonObject()
          .put("http", new JsonObject().put("port", busy.getLocalPort()))
          .put("defaultAgent", "ghost")
          .put("agentProcesses", new JsonObject().put("max", 3).put("idleStopSeconds", 90))
          .put("agents", new io.vertx.core.json.JsonArray()
              .add(new JsonObject().put("id", "ghost").put("command", new io.vertx.core.json.JsonArray()
                  .add("/nonexistent/agent-binary")).put("maxProcesses", 2).put("shareProcess", true))
              .add(new JsonObject().put("id", "demo").put("builtin", "demo"))).encode());
      Result sick = run("doctor", "--config", "sick.json");
      assertEquals(1, sick.code(), sick.out());
      assertTrue(sick.out().contains("FAIL  agent ghost: command /nonexistent/agent-binary not found"), sick.out());
      assertTrue(sick.out().contains("port " + busy.getLocalPort() + " on 127.0.0.1 is busy"), sick.out());
      assertTrue(sick.out().contains("ok    agent demo"), sick.out());
      assertTrue(sick.out().contains("agent processes: at most 3 at once") && sick.out().contains("after 90 s"),
          sick.out());
      assertTrue(sick.out().contains("warn  agent ghost: one process serves all its threads (\"shareProcess\": true), "
          + "at most 2 of its own"), sick.out());
      assertTrue(sick.out().contains("ok    agent demo: one process for all its threads"), sick.out());
      assertTrue(sick.out().contains("running now under this data directory: 0 agent"), sick.out());
    }
    Result healthy = run("doctor", "--port", "0");
    assertEquals(0, healthy.code(), healthy.out());
    assertTrue(healthy.out().contains("All checks passed."));
  }

  @Test
  void ledgerListsWhatHappenedAlsoWhileTheGatewayRuns() throws Exception {
    Path data = dir.resolve("data");
    long asked = java.time.Instant.parse("2026-12-02T12:00:00Z").toEpochMilli();
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    try {
      String store = vertx.deployVerticle(new io.switchboard.store.StoreRoom(data.resolve("switchboard.db")))
          .await(20, TimeUnit.SECONDS);
      for (String id : List.of("pr_answered", "pr_waiting")) {
        vertx.eventBus().request(io.switchboard.bus.Addresses.STORE_LEDGER_APPEND, new JsonObject()
            .put("requestId", id).put("threadId", "t_1").put("sessionId", "s")
            .put("toolCall", new JsonObject().put("toolCallId", "c").put("title", "Edit notes.md"))
            .put("options", new io.vertx.core.json.JsonArray()).put("eligible", new io.vertx.core.json.JsonArray()
                .add("web")).put("createdAt", asked)).await(20, TimeUnit.SECONDS);
      }
      vertx.eventBus().request(io.switchboard.bus.Addresses.STORE_LEDGER_END, new JsonObject()
          .put("requestId", "pr_answered").put("state", "selected").put("optionId", "allow").put("optionKind",
              "allow_once").put("surface", "web").put("user", "alice")).await(20, TimeUnit.SECONDS);
      // The waiting one was pushed after quiet hours, then reminded of: steps the table shows.
      for (String step : List.of("push", "remind")) {
        vertx.eventBus().request(io.switchboard.bus.Addresses.STORE_LEDGER_ATTEND, new JsonObject()
            .put("requestId", "pr_waiting").put("step", step).put("at", asked + (step.equals("push") ? 1 : 6) * 60_000)
            .put("text", "Still waiting")).await(20, TimeUnit.SECONDS);
      }
      vertx.undeploy(store).await(20, TimeUnit.SECONDS);
    } finally {
      vertx.close().await(20, TimeUnit.SECONDS);
    }
    Result all = run("ledger", "--json");
    assertEquals(0, all.code(), all.err());
    io.vertx.core.json.JsonArray rows = new io.vertx.core.json.JsonArray(all.out());
    assertEquals(2, rows.size());
    JsonObject answered = rows.stream().map(r -> (JsonObject) r)
        .filter(r -> r.getString("requestId").equals("pr_answered")).findFirst().orElseThrow();
    assertEquals("alice", answered.getJsonObject("outcome").getJsonObject("answeredBy").getString("user"));
    Result table = run("ledger", "--state", "pending");
    assertEquals(0, table.code());
    assertTrue(table.out().contains("pr_waiting") && !table.out().contains("pr_answered"), table.out());
    assertTrue(table.out().contains("\n  pushed 12:01, reminded 12:06\n"), "each request's steps: " + table.out());
    // While a gateway runs on the same data: it voided pr_waiting at its start, and ledger still reads.
    Process gateway = start("--port", "0");
    awaitPort(gateway);
    Result running = run("ledger", "--json");
    assertEquals(0, running.code(), running.err());
    assertTrue(running.out().contains("voided-by-restart"), running.out());
    gateway.destroy();
    assertTrue(gateway.waitFor(30, TimeUnit.SECONDS));
    assertEquals(2, run("ledger", "--limit", "0").code(), "a bad limit is bad usage");
    // The chain holds what happened (registered x2, selected, pushed, reminded, voided); one edited event breaks it.
    Result intact = run("ledger", "verify");
    assertEquals(0, intact.code(), intact.out() + intact.err());
    assertTrue(intact.out().contains("intact: 6 audit events chained"), intact.out());
    try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + data.resolve("switchboard.db"))) {
      c.createStatement().execute("UPDATE permission_event SET user_name = 'mallory' WHERE event = 'selected'");
    }
    Result broken = run("ledger", "verify");
    assertEquals(1, broken.code(), broken.out());
    assertTrue(broken.out().contains("broken at audit event 3 (request pr_answered)"), broken.out());
  }

  @Test
  void jsonLogsParseAndNeverCarryTheToken() throws Exception {
    Process p = start("--port", "0", "--log-format", "json");
    String token = awaitStart(p, true).token();
    p.destroy();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    String log = stderrOf(0);
    assertFalse(log.isBlank());
    for (String line : log.split("\n")) {
      JsonObject entry = new JsonObject(line);
      assertTrue(entry.containsKey("level") && entry.containsKey("msg"), line);
    }
    assertFalse(log.contains(token));
  }
}
