package io.switchboard.bench;

import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.JarGateway;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * A user who keeps opening threads: against the real jar at the systemd unit's flags
 * ({@code -Xmx64m}, SerialGC), one new thread after another for a while, each with a demo turn
 * and its card answered (a fresh {@code /ws/chat} socket per thread, as a page reload would).
 * Every few seconds it records the agent processes under the gateway, their resident memory and
 * the gateway's own; at the end SIGTERM, and the ledger is checked for requests left pending.
 * Writes {@code <out>.csv} and a chart {@code <out>.svg}, and prints a summary line for
 * docs/performance.md.
 *
 * <pre>
 * mvn -q -B -DskipTests package
 * java -Xmx256m -cp target/switchboard.jar:target/test-classes io.switchboard.bench.SoakBenchmark
 *   -Dminutes=10 -DpauseMs=400 -DidleStopSeconds=60 -Dshare=true -Dmax=0 -Dout=docs/soak-shared
 * </pre>
 * {@code -Dshare=false}: the demo agent with a process per thread (as external agents run);
 * {@code -Dmax=N}: {@code agentProcesses.max} (0: the gateway's default for this host).
 */
public final class SoakBenchmark {
  static final double MINUTES = Double.parseDouble(System.getProperty("minutes", "10"));
  static final long PAUSE_MS = Long.getLong("pauseMs", 400);
  static final int IDLE_STOP_SECONDS = Integer.getInteger("idleStopSeconds", 60);
  static final boolean SHARE = Boolean.parseBoolean(System.getProperty("share", "true"));
  static final int MAX = Integer.getInteger("max", 0);
  static final long SAMPLE_MS = Long.getLong("sampleMs", 5_000);
  static final String OUT = System.getProperty("out", "target/soak");

  /** One sample of the run. */
  record Sample(double seconds, int threads, int turns, int processes, double agentsMib, double gatewayMib) {}

  public static void main(String[] args) throws Exception {
    Path dir = Files.createTempDirectory("switchboard-soak");
    JsonObject agent = new JsonObject().put("id", "demo").put("name", "Demo agent").put("builtin", "demo")
        .put("env", new JsonObject().put("DEMO_AGENT_DELAY_MS", "2")).put("shareProcess", SHARE);
    JsonObject processes = new JsonObject().put("idleStopSeconds", IDLE_STOP_SECONDS);
    if (MAX > 0) {
      processes.put("max", MAX);
    }
    Path config = dir.resolve("switchboard.json");
    Files.writeString(config, new JsonObject().put("http", new JsonObject().put("port", 0))
        .put("dataDir", dir.resolve("data").toString()).put("defaultAgent", "demo")
        .put("agentProcesses", processes).put("agents", new JsonArray().add(agent)).encodePrettily());
    JarGateway gateway = JarGateway.start(dir, config, List.of("-Xmx64m", "-XX:+UseSerialGC"));
    String token = gateway.token();
    long pid = gateway.process().pid();
    Vertx vertx = Vertx.vertx();
    HttpClient http = HttpClient.newHttpClient();
    int cap = (int) metric(http, gateway.port(), token, "switchboard_agent_processes_max");

    List<Sample> samples = new ArrayList<>();
    long t0 = System.nanoTime();
    long end = t0 + (long) (MINUTES * 60e9);
    long nextSample = t0;
    int threads = 0;
    int turns = 0;
    int maxProcesses = 0;
    List<String> failures = new ArrayList<>();
    while (System.nanoTime() < end) {
      threads++;
      try (ChatClient web = ChatClient.open(vertx, gateway.port(), token)) {
        web.next("welcome");
        String thread = web.send(new JsonObject().put("type", "new_thread")).next("thread").getString("threadId");
        web.send(new JsonObject().put("type", "attach").put("threadId", thread));
        web.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", "soak " + threads));
        JsonObject card = web.next(f -> "permission_request".equals(f.getString("type")), "the card");
        web.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
            .put("optionId", "allow-once"));
        JsonObject ended = web.next(f -> "event".equals(f.getString("type"))
            && "turn_ended".equals(f.getJsonObject("event").getString("kind")), "the end of the turn");
        if ("end_turn".equals(ended.getJsonObject("event").getString("stopReason"))) {
          turns++;
        } else {
          failures.add("thread " + threads + ": " + ended.encode());
        }
      } catch (AssertionError e) {
        failures.add("thread " + threads + ": " + e.getMessage().substring(0, Math.min(300, e.getMessage().length())));
      }
      int running = agentProcesses(pid);
      maxProcesses = Math.max(maxProcesses, running);
      if (System.nanoTime() >= nextSample) {
        double agentsMib = (io.switchboard.process.ProcessTree.rssBytes(pid) - rss(pid)) / 1048576.0;
        Sample s = new Sample((System.nanoTime() - t0) / 1e9, threads, turns, running, agentsMib, rss(pid) / 1048576.0);
        samples.add(s);
        System.out.printf(Locale.ROOT, "%6.0f s: %5d threads, %5d turns, %2d agent processes (%.0f MiB), gateway %.0f MiB%n",
            s.seconds(), s.threads(), s.turns(), s.processes(), s.agentsMib(), s.gatewayMib());
        nextSample += SAMPLE_MS * 1_000_000;
      }
      Thread.sleep(PAUSE_MS);
    }
    double idleStops = metric(http, gateway.port(), token, "switchboard_agent_idle_stops_total");
    double evictions = metric(http, gateway.port(), token, "switchboard_agent_evictions_total");
    double pending = metric(http, gateway.port(), token, "switchboard_permissions_pending");

    gateway.process().destroy(); // SIGTERM
    boolean exited = gateway.process().waitFor(60, TimeUnit.SECONDS);
    int code = exited ? gateway.process().exitValue() : -1;
    Process ledger = new ProcessBuilder("java", "-jar", JarGateway.JAR.toString(), "ledger", "--state", "pending",
        "--data-dir", dir.resolve("data").toString()).redirectErrorStream(true).start();
    String leftPending = new String(ledger.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    ledger.waitFor(60, TimeUnit.SECONDS);
    vertx.close();

    Sample half = samples.stream().filter(s -> s.seconds() >= MINUTES * 30).findFirst().orElse(samples.get(0));
    Sample last = samples.get(samples.size() - 1);
    double secondHalfMax = samples.stream().filter(s -> s.seconds() >= half.seconds())
        .mapToDouble(Sample::gatewayMib).max().orElse(0);
    writeCsv(Path.of(OUT + ".csv"), samples);
    Files.writeString(Path.of(OUT + ".svg"), chart(samples, cap));
    System.out.printf(Locale.ROOT, "soak %.0f min, share=%s, cap %d, idle stop %d s: %d threads, %d turns completed, "
            + "%d failed; agent processes at most %d; gateway RSS %.0f MiB at half time, %.0f MiB at the end, "
            + "at most %.0f MiB in the second half (growth %.0f MiB); agents' RSS at the end %.0f MiB; "
            + "idle stops %.0f, evictions %.0f; pending before SIGTERM %.0f; exit code %d; ledger pending after: %s%n",
        MINUTES, SHARE, cap, IDLE_STOP_SECONDS, threads, turns, failures.size(), maxProcesses, half.gatewayMib(),
        last.gatewayMib(), secondHalfMax, secondHalfMax - half.gatewayMib(), last.agentsMib(), idleStops, evictions,
        pending, code, leftPending.isEmpty() || leftPending.startsWith("No permission") ? "none" : leftPending);
    failures.stream().limit(5).forEach(f -> System.out.println("  failed: " + f));
  }

  /** Agent processes under the gateway: its children (each agent, or its bwrap). */
  static int agentProcesses(long gatewayPid) {
    return (int) ProcessHandle.of(gatewayPid).map(p -> p.children().count()).orElse(0L).longValue();
  }

  static long rss(long pid) {
    return io.switchboard.process.ProcessTree.residentBytes(pid);
  }

  static double metric(HttpClient http, int port, String token, String name) throws Exception {
    String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
        .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString()).body();
    return body.lines().filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
  }

  static void writeCsv(Path file, List<Sample> samples) throws Exception {
    StringBuilder csv = new StringBuilder("seconds,threads,turns,agent_processes,agents_rss_mib,gateway_rss_mib\n");
    for (Sample s : samples) {
      csv.append(String.format(Locale.ROOT, "%.0f,%d,%d,%d,%.1f,%.1f%n", s.seconds(), s.threads(), s.turns(),
          s.processes(), s.agentsMib(), s.gatewayMib()));
    }
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.writeString(file, csv);
  }

  /** A plain SVG line chart: gateway RSS and agents' RSS (MiB, left), agent processes (right). */
  static String chart(List<Sample> samples, int cap) {
    int w = 720;
    int h = 320;
    int left = 60;
    int right = 60;
    int top = 30;
    int bottom = 40;
    double maxT = Math.max(1, samples.get(samples.size() - 1).seconds());
    double maxMib = Math.max(64, samples.stream().mapToDouble(s -> Math.max(s.gatewayMib(), s.agentsMib())).max()
        .orElse(64)) * 1.1;
    double maxProc = Math.max(cap, samples.stream().mapToInt(Sample::processes).max().orElse(1)) + 1;
    StringBuilder svg = new StringBuilder(String.format(Locale.ROOT,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
            + "font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n", w, h));
    int pw = w - left - right;
    int ph = h - top - bottom;
    svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
        + "stroke=\"#999\"/>%n", left, top, pw, ph));
    for (int i = 0; i <= 4; i++) {
      double mib = maxMib * i / 4;
      double y = top + ph - ph * i / 4.0;
      svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">%.0f</text>%n",
          left - 6, y + 4, mib));
      svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.0f\">%.1f</text>%n", left + pw + 6, y + 4,
          maxProc * i / 4));
      double t = maxT * i / 4;
      svg.append(String.format(Locale.ROOT, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">%.0f s</text>%n",
          left + pw * i / 4.0, top + ph + 16, t));
    }
    svg.append(line(samples, s -> s.gatewayMib() / maxMib, maxT, left, top, pw, ph, "#1f77b4"));
    svg.append(line(samples, s -> s.agentsMib() / maxMib, maxT, left, top, pw, ph, "#ff7f0e"));
    svg.append(line(samples, s -> s.processes() / maxProc, maxT, left, top, pw, ph, "#2ca02c"));
    double capY = top + ph - ph * cap / maxProc;
    svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#2ca02c\" "
        + "stroke-dasharray=\"4 4\"/>%n", left, left + pw, capY, capY));
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"18\"><tspan fill=\"#1f77b4\">gateway RSS (MiB, left)"
        + "</tspan>  <tspan fill=\"#ff7f0e\">agents' RSS (MiB, left)</tspan>  <tspan fill=\"#2ca02c\">agent "
        + "processes (right; dashed: the cap, %d)</tspan></text>%n", left, cap));
    return svg.append("</svg>\n").toString();
  }

  private static String line(List<Sample> samples, java.util.function.ToDoubleFunction<Sample> y, double maxT,
                             int left, int top, int pw, int ph, String colour) {
    StringBuilder points = new StringBuilder();
    for (Sample s : samples) {
      points.append(String.format(Locale.ROOT, "%.1f,%.1f ", left + pw * s.seconds() / maxT,
          top + ph - ph * Math.min(1, y.applyAsDouble(s))));
    }
    return "<polyline fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.5\" points=\"" + points.toString().strip()
        + "\"/>\n";
  }
}
