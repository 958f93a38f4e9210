package io.switchboard.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.Settings;
import io.switchboard.testkit.Ports;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The event bus between members is mutual TLS under the cluster's authority: two members with their
 * certificates talk; a stranger that joins Hazelcast without one, or with one from another
 * authority, neither delivers to them nor receives from them (three Vert.x nodes in this JVM, loopback).
 */
class ClusterTlsTest {
  @TempDir
  Path dir;

  @Test
  void onlyMembersWithTheClustersCertificatesTalkOnTheBus() throws Exception {
    Instant now = Instant.now();
    ClusterAuthority.create(dir.resolve("ca"), now);
    ClusterAuthority.create(dir.resolve("other-ca"), now);
    ClusterAuthority.issue(dir.resolve("ca"), "build-1", "127.0.0.1", dir.resolve("build-1"), 90, now);
    ClusterAuthority.issue(dir.resolve("ca"), "edge", "127.0.0.1", dir.resolve("edge"), 90, now);
    ClusterAuthority.issue(dir.resolve("other-ca"), "stranger", "127.0.0.1", dir.resolve("stranger"), 90, now);
    int[] ports = {Ports.free(), Ports.free(), Ports.free(),
        Ports.free()};
    List<String> members = LoopbackCluster.members(ports);
    List<Vertx> nodes = new ArrayList<>();
    try {
      Vertx agent = join(nodes, "build-1", Settings.Cluster.Role.AGENT, ports[0], members, dir.resolve("build-1"));
      Vertx edge = join(nodes, "edge", Settings.Cluster.Role.EDGE, ports[1], members, dir.resolve("edge"));
      // The membership port listens on cluster.host alone, not on every interface.
      assertEquals(List.of("0100007F"), listeners(ports[0]), "the membership port's listening addresses");
      List<String> heardByAgent = new CopyOnWriteArrayList<>();
      agent.eventBus().<String>consumer("sb.node.build-1.permission.answer", m -> {
        heardByAgent.add(m.body());
        m.reply("ok");
      }).completion().await(30, TimeUnit.SECONDS);
      // The first send opens the TLS link (a handshake each way): a loaded host took over 10 s once.
      assertEquals("ok", edge.eventBus().request("sb.node.build-1.permission.answer", "from the edge",
          new DeliveryOptions().setSendTimeout(30_000)).await(40, TimeUnit.SECONDS).body());

      // A node's own command, served to itself alone (as NodeScope serves the plain addresses).
      agent.eventBus().<String>localConsumer("sb.permission.register", m -> m.reply("here"))
          .completion().await(30, TimeUnit.SECONDS);

      // A stranger with no certificate, then one with a certificate of another authority.
      Vertx plain = join(nodes, "stranger-plain", Settings.Cluster.Role.AGENT, ports[2], members, null);
      Vertx forged = join(nodes, "stranger", Settings.Cluster.Role.AGENT, ports[3], members, dir.resolve("stranger"));
      for (Vertx stranger : List.of(plain, forged)) {
        List<String> heardByStranger = new CopyOnWriteArrayList<>();
        stranger.eventBus().<String>consumer("sb.permission.cards", m -> heardByStranger.add(m.body()))
            .completion().await(30, TimeUnit.SECONDS);
        // It registers the node's own command address too: the edge, which does not serve it, now finds the
        // stranger there (and cannot reach it), while the node keeps every one of its own sends.
        stranger.eventBus().<String>consumer("sb.permission.register", m -> m.reply("stranger"))
            .completion().await(30, TimeUnit.SECONDS);
        assertThrows(Exception.class, () -> edge.eventBus().request("sb.permission.register", "x",
            new DeliveryOptions().setSendTimeout(2_000)).await(30, TimeUnit.SECONDS), "the stranger's registration");
        for (int i = 0; i < 6; i++) {
          assertEquals("here", agent.eventBus().<String>request("sb.permission.register", "ask",
              new DeliveryOptions().setSendTimeout(5_000)).await(30, TimeUnit.SECONDS).body(), "send " + i);
        }
        Future<Object> sent = stranger.eventBus().request("sb.node.build-1.permission.answer", "from a stranger",
            new DeliveryOptions().setSendTimeout(5_000)).map(m -> m.body());
        assertThrows(Exception.class, () -> sent.await(30, TimeUnit.SECONDS), "a stranger's answer was delivered");
        // Not for want of a handler (the node has one, registered cluster-wide): its link was never opened.
        assertTrue(sent.cause() instanceof io.vertx.core.eventbus.ReplyException r
            && r.failureType() == io.vertx.core.eventbus.ReplyFailure.TIMEOUT, String.valueOf(sent.cause()));
        // A card published by the agent reaches the edge's subscriber, never the stranger.
        List<String> heardByEdge = new CopyOnWriteArrayList<>();
        MessageConsumer<String> edgeCards = edge.eventBus().consumer("sb.permission.cards",
            m -> heardByEdge.add(m.body()));
        edgeCards.completion().await(30, TimeUnit.SECONDS);
        agent.eventBus().publish("sb.permission.cards", "card");
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (heardByEdge.isEmpty() && System.nanoTime() < until) {
          Thread.sleep(20);
        }
        assertEquals(List.of("card"), heardByEdge);
        // The edge heard it: the stranger was sent it at the same moment, over a link it cannot open.
        edgeCards.unregister().await(30, TimeUnit.SECONDS);
        assertEquals(List.of(), heardByStranger);
        stranger.close().await(30, TimeUnit.SECONDS);
      }
      assertEquals(List.of("from the edge"), heardByAgent);
    } finally {
      for (Vertx v : nodes) {
        v.close().await(30, TimeUnit.SECONDS);
      }
    }
  }

  /** The addresses (as /proc/net/tcp writes them) on which a TCP port of this machine listens. */
  private static List<String> listeners(int port) throws Exception {
    List<String> out = new ArrayList<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      Path file = Path.of(table);
      if (!java.nio.file.Files.exists(file)) {
        continue;
      }
      for (String line : java.nio.file.Files.readAllLines(file)) {
        String[] f = line.trim().split("\\s+");
        if (f.length > 3 && f[3].equals("0A") && f[1].endsWith(String.format(":%04X", port))) {
          String address = f[1].substring(0, f[1].indexOf(':'));
          // An IPv4 address bound through an IPv6 socket is written as ::ffff:a.b.c.d.
          out.add(address.startsWith("0000000000000000FFFF0000") ? address.substring(24) : address);
        }
      }
    }
    return out;
  }

  private static Vertx join(List<Vertx> nodes, String name, Settings.Cluster.Role role, int port, List<String> members,
                            Path tls) throws Exception {
    Vertx vertx = ClusterNode.join(new VertxOptions(), new Settings.Cluster(name, role, "127.0.0.1", port,
        Ports.free(), members, 5, 60, tls), name).await(60, TimeUnit.SECONDS);
    nodes.add(vertx);
    return vertx;
  }
}
