package io.switchboard.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.Ports;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Nodes of a test cluster: real JVMs of the jar with the cluster libraries, on loopback ports, under one folder. */
final class LoopbackCluster implements AutoCloseable {
  final Path dir;
  final List<Process> processes = java.util.Collections.synchronizedList(new ArrayList<>());
  private static final List<String> NODE_FLAGS = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

  /**
   * A node's flags with a class-data archive of a node's boot (Hazelcast's classes are most of it),
   * made once per test JVM by a lone agent node started with {@code -XX:ArchiveClassesAtExit} and
   * stopped with SIGTERM: each boot then costs less CPU (the jar's archive halves a plain start's),
   * and the cluster tests boot ~30.
   */
  private static final class NodeArchive {
    static final List<String> FLAGS = make();

    private static List<String> make() {
      try {
        Path dir = Files.createDirectories(JarGateway.JAR.getParent().resolve("it-cds-node"));
        Path archive = dir.resolve("node.jsa");
        Files.deleteIfExists(archive);
        LoopbackCluster alone = new LoopbackCluster(Files.createTempDirectory(dir, "cluster"));
        int port = Ports.free();
        Path config = alone.config("cds", "agent", port, members(new int[] {port}));
        List<String> argv = new ArrayList<>(List.of("java"));
        argv.addAll(NODE_FLAGS);
        argv.addAll(List.of("-XX:ArchiveClassesAtExit=" + archive, "-cp", JarGateway.JAR + java.io.File.pathSeparator
            + JarGateway.CLUSTER_LIBS + "/*", "io.switchboard.Main", "--config", config.toString()));
        Path log = dir.resolve("node.log");
        Process node = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!Files.readString(log).contains("agent node cds (incarnation") && node.isAlive()
            && System.nanoTime() < deadline) {
          Thread.sleep(100);
        }
        node.destroy(); // SIGTERM: the archive is written as the JVM exits
        if (!node.waitFor(1, TimeUnit.MINUTES) || !Files.exists(archive)) {
          node.destroyForcibly();
          throw new IllegalStateException("no class-data archive of a node was made; see " + log);
        }
        return List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto");
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
  }

  private static List<String> nodeFlags() {
    List<String> flags = new ArrayList<>(NODE_FLAGS);
    flags.addAll(NodeArchive.FLAGS);
    return flags;
  }

  LoopbackCluster(Path dir) {
    this.dir = dir;
  }

  /** {@code 127.0.0.1:port} of each membership port: every node's {@code members}. */
  static List<String> members(int[] ports) {
    return java.util.Arrays.stream(ports).mapToObj(p -> "127.0.0.1:" + p).toList();
  }

  /** The {@code cluster} section of a node. */
  static JsonObject section(String node, String role, int port, List<String> members) throws Exception {
    return new JsonObject().put("node", node).put("role", role).put("host", "127.0.0.1").put("port", port)
        .put("busPort", Ports.free()).put("members", new JsonArray(members));
  }

  Path config(String node, String role, int port, List<String> members) throws Exception {
    return config(node, node, role, port, members);
  }

  /**
   * A node's config file; {@code home}: the folder of its data and config (two nodes may be given one
   * name). The node gets its certificate from the cluster's authority (made at the first node), in its
   * data directory's {@code cluster-tls}, as {@code switchboard cluster cert} writes it.
   */
  Path config(String home, String node, String role, int port, List<String> members) throws Exception {
    certify(home, node);
    return write(home, new JsonObject().put("dataDir", dataDir(home).toString())
        .put("http", new JsonObject().put("port", 0)).put("cluster", section(node, role, port, members)));
  }

  Path write(String home, JsonObject config) throws Exception {
    Path file = dir.resolve(home + ".json");
    Files.writeString(file, config.encodePrettily());
    return file;
  }

  /** Issues node {@code node} (data in {@code home}) its certificate, unless it has one. */
  void certify(String home, String node) throws Exception {
    Path tls = dataDir(home).resolve(io.switchboard.config.Settings.Cluster.DEFAULT_TLS_DIR);
    if (!Files.exists(tls)) {
      java.time.Instant now = java.time.Instant.now();
      if (!Files.exists(authority())) {
        ClusterAuthority.create(authority(), now);
      }
      ClusterAuthority.issue(authority(), node, "127.0.0.1", tls, 90, now); // no renewal warning
    }
  }

  /** The folder of the cluster's authority (ca.crt, ca.key). */
  Path authority() {
    return dir.resolve("cluster-ca");
  }

  Path dataDir(String home) {
    return dir.resolve(home).resolve("data");
  }

  /** Starts a node and waits until it says it is ready. */
  JarGateway start(String home, Path config) throws Exception {
    JarGateway started = JarGateway.startNode(dir.resolve(home), config, nodeFlags());
    processes.add(started.process());
    return started;
  }

  /**
   * Starts the first node, then the others side by side, and returns them by name once each is
   * ready: the others join the first as their cluster's master (nodes that all start at once would
   * each claim it), and a node's boot, ~7 s of a core, is not waited for one after the other.
   */
  java.util.Map<String, JarGateway> startAll(java.util.LinkedHashMap<String, Path> configs) throws Exception {
    java.util.Map<String, JarGateway> started = new java.util.LinkedHashMap<>();
    java.util.Iterator<java.util.Map.Entry<String, Path>> first = configs.entrySet().iterator();
    java.util.Map.Entry<String, Path> master = first.next();
    started.put(master.getKey(), start(master.getKey(), master.getValue()));
    java.util.Map<String, java.util.concurrent.CompletableFuture<JarGateway>> others = new java.util.LinkedHashMap<>();
    first.forEachRemaining(e -> others.put(e.getKey(), java.util.concurrent.CompletableFuture.supplyAsync(() -> {
      try {
        return JarGateway.startNode(dir.resolve(e.getKey()), e.getValue(), nodeFlags());
      } catch (Exception failed) {
        throw new java.util.concurrent.CompletionException(failed);
      }
    })));
    others.values().forEach(f -> f.thenAccept(node -> processes.add(node.process()))); // closed even if one fails
    for (var e : others.entrySet()) {
      try {
        started.put(e.getKey(), e.getValue().get(3, TimeUnit.MINUTES));
      } catch (java.util.concurrent.ExecutionException failed) {
        throw new AssertionError("node " + e.getKey() + " did not start: " + failed.getCause().getMessage(),
            failed.getCause());
      }
    }
    return started;
  }

  /**
   * Until the edge counts these agent nodes as members (the page lists the nodes as they are when
   * it loads).
   */
  static void awaitAgentNodes(JarGateway edge, List<String> expected) throws Exception {
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    java.net.http.HttpRequest request = java.net.http.HttpRequest.newBuilder(java.net.URI.create(
        "http://127.0.0.1:" + edge.port() + "/api/agents")).header("Authorization", "Bearer " + edge.token()).build();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    String last = "";
    while (System.nanoTime() < deadline) {
      java.net.http.HttpResponse<String> reply = http.send(request, java.net.http.HttpResponse.BodyHandlers.ofString());
      last = reply.statusCode() + " " + reply.body();
      if (reply.statusCode() == 200) {
        JsonObject nodes = new JsonObject(reply.body()).getJsonObject("nodes");
        if (nodes != null && nodes.fieldNames().containsAll(expected)) {
          return;
        }
      }
      Thread.sleep(200);
    }
    throw new AssertionError("the edge did not see agent nodes " + expected + " within 60 s: " + last);
  }

  static void kill(Process p) throws Exception {
    p.destroyForcibly();
    assertTrue(p.waitFor(20, TimeUnit.SECONDS));
  }

  /** Sends a signal (STOP, CONT) to a node. */
  static void signal(String name, Process p) throws Exception {
    assertTrue(new ProcessBuilder("kill", "-" + name, Long.toString(p.pid())).start().waitFor() == 0);
  }

  /** The event-bus port a node's config gives it. */
  static int busPort(Path config) throws Exception {
    return new JsonObject(Files.readString(config)).getJsonObject("cluster").getInteger("busPort");
  }

  /** Which way a blackhole drops a node's event-bus traffic. */
  enum Direction { TO_NODE, FROM_NODE }

  /**
   * Drops (nftables, as root) the event-bus data going to a node, or coming from it, until closed:
   * what is sent meanwhile waits in the sender's socket, to be lost when the socket is cut. Only
   * that node's connections: the other nodes' and the pages' traffic flows on.
   */
  static AutoCloseable blackhole(Process node, int nodeBusPort, java.util.Collection<Integer> busPorts,
                                 Direction direction) throws Exception {
    String table = "sbcut" + ProcessHandle.current().pid();
    String rule;
    if (direction == Direction.TO_NODE) {
      rule = "tcp dport " + nodeBusPort + " drop";
    } else {
      // The node's own connections to the others: from its local ports, to their bus ports.
      java.util.Set<Integer> local = new java.util.TreeSet<>();
      for (String[] s : sockets(node, busPorts)) {
        if (busPorts.contains(port(s[1])) && port(s[1]) != nodeBusPort) {
          local.add(port(s[0]));
        }
      }
      if (local.isEmpty()) {
        local.add(0); // none open now: nothing of it to drop (port 0 matches no packet)
      }
      rule = "tcp sport { " + String.join(", ", local.stream().map(String::valueOf).toList()) + " } drop";
    }
    nft("add table inet " + table + "\nadd chain inet " + table
        + " out { type filter hook output priority 0; policy accept; }\nadd rule inet " + table + " out " + rule);
    return () -> nft("delete table inet " + table);
  }

  private static void nft(String script) throws Exception {
    Path file = Files.createTempFile("sb-nft", ".txt");
    try {
      Files.writeString(file, script + "\n");
      Process p = new ProcessBuilder("nft", "-f", file.toString()).redirectErrorStream(true).start();
      String said = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      assertTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, "nft (nftables, as root) failed: " + said);
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /**
   * Cuts a node's connections to the other members: every established TCP socket of its process
   * whose own or peer port is one of {@code ports} is destroyed ({@code ss -K}, as root: the kernel
   * aborts it and resets the peer), as a network fault would. Returns how many were cut; fails if
   * some are still there (no root, or a kernel without socket destroy).
   */
  static int cutSockets(Process p, java.util.Collection<Integer> ports) throws Exception {
    List<String[]> mine = sockets(p, ports);
    if (mine.isEmpty()) {
      return 0;
    }
    StringBuilder filter = new StringBuilder();
    for (String[] s : mine) {
      filter.append(filter.length() == 0 ? "( " : " or ").append("( sport = :").append(port(s[0]))
          .append(" and dport = :").append(port(s[1])).append(" )");
    }
    filter.append(" )");
    Process ss = new ProcessBuilder("ss", "-K", "-tnH", "state", "established", filter.toString())
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    assertTrue(ss.waitFor(10, TimeUnit.SECONDS) && ss.exitValue() == 0, "ss -K failed: it cuts sockets as root");
    List<String[]> left = sockets(p, ports);
    left.removeIf(s -> mine.stream().noneMatch(m -> m[0].equals(s[0]) && m[1].equals(s[1])));
    assertTrue(left.isEmpty(), "ss -K left " + left.size() + " of " + mine.size() + " sockets of the node: cutting "
        + "sockets needs root and a kernel with CONFIG_INET_DIAG_DESTROY");
    return mine.size();
  }

  /** Established TCP sockets of the process on those ports: {local, peer} addresses. */
  private static List<String[]> sockets(Process p, java.util.Collection<Integer> ports) throws Exception {
    Process ss = new ProcessBuilder("ss", "-tnpH", "state", "established").redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
    String out = new String(ss.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(ss.waitFor(10, TimeUnit.SECONDS) && ss.exitValue() == 0, "ss (iproute2) lists no sockets");
    List<String[]> found = new ArrayList<>();
    for (String line : out.split("\n")) {
      String[] f = line.trim().split("\\s+");
      if (f.length >= 5 && line.contains("pid=" + p.pid() + ",")
          && (ports.contains(port(f[2])) || ports.contains(port(f[3])))) {
        found.add(new String[] {f[2], f[3]});
      }
    }
    return found;
  }

  private static int port(String address) {
    return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
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
