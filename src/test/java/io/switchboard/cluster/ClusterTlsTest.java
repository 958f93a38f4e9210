package io.switchboard.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.Settings;
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
    ClusterAuthority.issue(dir.resolve("ca"), "build-1", "127.0.0.1", dir.resolve("build-1"), 2, now);
    ClusterAuthority.issue(dir.resolve("ca"), "edge", "127.0.0.1", dir.resolve("edge"), 2, now);
    ClusterAuthority.issue(dir.resolve("other-ca"), "stranger", "127.0.0.1", dir.resolve("stranger"), 2, now);
    int[] ports = {LoopbackCluster.freePort(), LoopbackCluster.freePort(), LoopbackCluster.freePort(),
        LoopbackCluster.freePort()};
    List<String> members = LoopbackCluster.members(ports);
    List<Vertx> nodes = new ArrayList<>();
    try {
      Vertx agent = join(nodes, "build-1", Settings.Cluster.Role.AGENT, ports[0], members, dir.resolve("build-1"));
      Vertx edge = join(nodes, "edge", Settings.Cluster.Role.EDGE, ports[1], members, dir.resolve("edge"));
      List<String> heardByAgent = new CopyOnWriteArrayList<>();
      agent.eventBus().<String>consumer("sb.node.build-1.permission.answer", m -> {
        heardByAgent.add(m.body());
        m.reply("ok");
      }).completion().await(30, TimeUnit.SECONDS);
      assertEquals("ok", edge.eventBus().request("sb.node.build-1.permission.answer", "from the edge",
          new DeliveryOptions().setSendTimeout(10_000)).await(30, TimeUnit.SECONDS).body());

      // A stranger with no certificate, then one with a certificate of another authority.
      Vertx plain = join(nodes, "stranger-plain", Settings.Cluster.Role.AGENT, ports[2], members, null);
      Vertx forged = join(nodes, "stranger", Settings.Cluster.Role.AGENT, ports[3], members, dir.resolve("stranger"));
      for (Vertx stranger : List.of(plain, forged)) {
        List<String> heardByStranger = new CopyOnWriteArrayList<>();
        stranger.eventBus().<String>consumer("sb.permission.cards", m -> heardByStranger.add(m.body()))
            .completion().await(30, TimeUnit.SECONDS);
        Future<Object> sent = stranger.eventBus().request("sb.node.build-1.permission.answer", "from a stranger",
            new DeliveryOptions().setSendTimeout(5_000)).map(m -> m.body());
        Exception refused = assertThrows(Exception.class, () -> sent.await(30, TimeUnit.SECONDS),
            "a stranger's answer was delivered");
        assertTrue(sent.failed(), refused.toString());
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

  private static Vertx join(List<Vertx> nodes, String name, Settings.Cluster.Role role, int port, List<String> members,
                            Path tls) throws Exception {
    Vertx vertx = ClusterNode.join(new VertxOptions(), new Settings.Cluster(name, role, "127.0.0.1", port,
        LoopbackCluster.freePort(), members, 5, 60, tls), name).await(60, TimeUnit.SECONDS);
    nodes.add(vertx);
    return vertx;
  }
}
