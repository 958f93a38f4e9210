package io.switchboard.testkit;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The real fat jar started as a process with a config file; its stderr is appended to {@code gateway.log}. */
public record JarGateway(Process process, int port, Path dir) {
  public static final Path JAR =
      Path.of(System.getProperty("switchboard.jar", "target/switchboard.jar")).toAbsolutePath();
  private static final Pattern URL = Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)/");

  /** The cluster libraries the build copies beside the jar (cluster mode runs with them on the class path). */
  public static final Path CLUSTER_LIBS =
      Path.of(System.getProperty("switchboard.cluster.libs", "target/cluster")).toAbsolutePath();
  private static final Pattern AGENT_NODE_READY = Pattern.compile("agent node \\S+ \\(incarnation \\S+\\) ready");

  /**
   * A cluster node: the jar with the cluster libraries, as {@code java -cp 'switchboard.jar:cluster/*'
   * io.switchboard.Main}. Returns once it is ready: an edge node when it printed its URL (after an
   * agent node answered), an agent node when it said it is ready (its {@code port} is then -1).
   */
  public static JarGateway startNode(Path dir, Path config, java.util.List<String> jvmFlags) throws Exception {
    java.util.List<String> argv = new java.util.ArrayList<>(jvmFlags);
    argv.addAll(java.util.List.of("-cp", JAR + java.io.File.pathSeparator + CLUSTER_LIBS + "/*", "io.switchboard.Main",
        "--config", config.toString()));
    java.nio.file.Files.createDirectories(dir);
    return launch(dir, argv, java.util.Map.of(), true);
  }

  /** Starts it in {@code dir} and returns once it printed its URL line. */
  public static JarGateway start(Path dir, Path config) throws Exception {
    return start(dir, config, java.util.List.of());
  }

  /** The same with JVM flags before {@code -jar} (heap size, GC, ...). */
  public static JarGateway start(Path dir, Path config, java.util.List<String> jvmFlags) throws Exception {
    return start(dir, config, jvmFlags, 0);
  }

  /** The same on a given port (0: a free one). */
  public static JarGateway start(Path dir, Path config, java.util.List<String> jvmFlags, int port) throws Exception {
    return start(dir, config, jvmFlags, port, java.util.Map.of());
  }

  /** The same with more environment variables (as a unit's {@code Environment=} lines). */
  public static JarGateway start(Path dir, Path config, java.util.List<String> jvmFlags, int port,
                                 java.util.Map<String, String> env) throws Exception {
    java.util.List<String> argv = new java.util.ArrayList<>();
    if (jvmFlags.stream().noneMatch(f -> f.startsWith("-XX:SharedArchiveFile") || f.startsWith("-Xshare:"))) {
      argv.addAll(Archive.FLAGS);
    }
    argv.addAll(jvmFlags);
    argv.addAll(java.util.List.of("-jar", JAR.toString(), "--config", config.toString(), "--port",
        Integer.toString(port)));
    return launch(dir, argv, env, false);
  }

  /**
   * Runs {@code java argv} in {@code dir} (stderr appended to gateway.log) until it prints its URL
   * line, or, for {@code agentNode} allowed, an agent node's ready line (port -1); then keeps
   * reading its stdout into gateway.out.
   */
  private static JarGateway launch(Path dir, java.util.List<String> argv, java.util.Map<String, String> env,
                                   boolean agentNode) throws Exception {
    // The systemd unit's compiler and collector (packaging/switchboard.service); a test's own flags come after and win.
    java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of("java", "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC"));
    command.addAll(argv);
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile())
        .redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("gateway.log").toFile()));
    pb.environment().putAll(env);
    Process p = pb.start();
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = out.readLine()) != null) {
      Matcher url = URL.matcher(line);
      boolean ready = url.find();
      if (ready || agentNode && AGENT_NODE_READY.matcher(line).find()) {
        drain(out, dir.resolve("gateway.out"), agentNode ? line : null);
        return new JarGateway(p, ready ? Integer.parseInt(url.group(1)) : -1, dir);
      }
    }
    throw new AssertionError(notStarted(p, dir.resolve("gateway.log")));
  }

  /**
   * Why a start failed, as CI prints it: the exit code and the log's last lines (the folder is a
   * test's temporary one, gone when the report is read).
   */
  private static String notStarted(Process p, Path log) {
    String exit;
    try {
      exit = p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS) ? "exited with " + p.exitValue() : "still running";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      exit = "interrupted";
    }
    String tail;
    try {
      java.util.List<String> lines = java.nio.file.Files.readAllLines(log, StandardCharsets.UTF_8);
      tail = String.join("\n", lines.subList(Math.max(0, lines.size() - 25), lines.size()));
    } catch (java.io.IOException e) {
      tail = "(no log: " + e.getMessage() + ")";
    }
    return "the gateway did not start (" + exit + "); the end of " + log + ":\n" + tail;
  }

  /**
   * The jar's gateways start as the systemd unit's does, with a class-data archive made for the jar by
   * {@code scripts/cds-archive.sh} (half the CPU of a start: ~1 s instead of ~1.9 s). Made once per
   * test JVM (the jar is new with every build), in {@code target/it-cds}; a test that names an archive
   * or {@code -Xshare} itself gets none added.
   */
  private static final class Archive {
    static final java.util.List<String> FLAGS = make();

    private static java.util.List<String> make() {
      try {
        Path dir = java.nio.file.Files.createDirectories(JAR.getParent().resolve("it-cds"));
        return java.util.List.of("-XX:SharedArchiveFile=" + classDataArchive(dir, java.util.List.of(
            "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")), "-Xshare:auto",
            "-Dorg.sqlite.lib.path=" + dir.resolve("native"));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /**
   * Makes {@code dir/switchboard.jsa} for this jar run with {@code flags} (scripts/cds-archive.sh, which
   * also puts the jar's SQLite library in {@code dir/native}); returns its path.
   */
  public static String classDataArchive(Path dir, java.util.List<String> flags) throws Exception {
    Path archive = dir.resolve("switchboard.jsa");
    java.nio.file.Files.deleteIfExists(archive);
    java.util.List<String> argv = new java.util.ArrayList<>(java.util.List.of("bash", "scripts/cds-archive.sh",
        JAR.toString(), archive.toString()));
    argv.addAll(flags);
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(dir.resolve("cds.log").toFile())
        .start();
    if (!p.waitFor(2, java.util.concurrent.TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new IllegalStateException("no class-data archive was made; see " + dir.resolve("cds.log"));
    }
    return archive.toString();
  }

  /**
   * The access token, as the gateway printed it once on stdout when it made it (the token file
   * keeps only its hash). Only a first start on a data directory prints it.
   */
  public String token() {
    Path out = dir.resolve("gateway.out");
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      try {
        for (String line : java.nio.file.Files.readAllLines(out)) {
          int at = line.indexOf("(shown this once): ");
          if (at >= 0) {
            return line.substring(at + "(shown this once): ".length()).trim();
          }
        }
        Thread.sleep(20);
      } catch (java.io.IOException e) {
        // not written yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    throw new AssertionError("the gateway printed no token in " + out + " (only a first start does)");
  }

  /** Keeps reading its stdout into a file (the JVM's own last words, such as an out-of-memory exit, go there). */
  private static void drain(BufferedReader out, Path file, String first) {
    Thread t = new Thread(() -> {
      try (var w = java.nio.file.Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
        if (first != null) {
          w.write(first);
          w.newLine();
        }
        String line;
        while ((line = out.readLine()) != null) {
          w.write(line);
          w.newLine();
          w.flush();
        }
      } catch (java.io.IOException ignored) {
        // the process ended
      }
    }, "gateway-stdout");
    t.setDaemon(true);
    t.start();
  }
}
