package io.switchboard.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.JarGateway;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Nodes of a test cluster: real JVMs of the jar with the cluster libraries, on loopback ports, under one folder. */
final class LoopbackCluster implements AutoCloseable {
  final Path dir;
  final List<Process> processes = new ArrayList<>();

  LoopbackCluster(Path dir) {
    this.dir = dir;
  }

  static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** {@code 127.0.0.1:port} of each membership port: every node's {@code members}. */
  static List<String> members(int[] ports) {
    return java.util.Arrays.stream(ports).mapToObj(p -> "127.0.0.1:" + p).toList();
  }

  /** The {@code cluster} section of a node. */
  static JsonObject section(String node, String role, int port, List<String> members) throws Exception {
    return new JsonObject().put("node", node).put("role", role).put("host", "127.0.0.1").put("port", port)
        .put("busPort", freePort()).put("members", new JsonArray(members));
  }

  Path config(String node, String role, int port, List<String> members) throws Exception {
    return config(node, node, role, port, members);
  }

  /** A node's config file; {@code home}: the folder of its data and config (two nodes may be given one name). */
  Path config(String home, String node, String role, int port, List<String> members) throws Exception {
    return write(home, new JsonObject().put("dataDir", dataDir(home).toString())
        .put("http", new JsonObject().put("port", 0)).put("cluster", section(node, role, port, members)));
  }

  Path write(String home, JsonObject config) throws Exception {
    Path file = dir.resolve(home + ".json");
    Files.writeString(file, config.encodePrettily());
    return file;
  }

  Path dataDir(String home) {
    return dir.resolve(home).resolve("data");
  }

  /** Starts a node and waits until it says it is ready. */
  JarGateway start(String home, Path config) throws Exception {
    JarGateway started = JarGateway.startNode(dir.resolve(home), config,
        List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
    processes.add(started.process());
    return started;
  }

  static void kill(Process p) throws Exception {
    p.destroyForcibly();
    assertTrue(p.waitFor(20, TimeUnit.SECONDS));
  }

  /** Sends a signal (STOP, CONT) to a node. */
  static void signal(String name, Process p) throws Exception {
    assertTrue(new ProcessBuilder("kill", "-" + name, Long.toString(p.pid())).start().waitFor() == 0);
  }

  /** A node's ledger, as {@code ledger --json} prints it. */
  static JsonArray ledger(Path dataDir) throws Exception {
    Process p = new ProcessBuilder("java", "-jar", JarGateway.JAR.toString(), "ledger", "--data-dir",
        dataDir.toString(), "--json").redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    return new JsonArray(out);
  }

  @Override
  public void close() {
    processes.forEach(p -> {
      p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    });
    processes.clear();
  }
}
