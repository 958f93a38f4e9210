package io.switchboard.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.Member;
import com.hazelcast.cluster.MembershipListener;
import io.switchboard.bus.Addresses;
import io.switchboard.config.Settings;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.security.SecureRandom;
import java.util.HexFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This JVM as a member of a Switchboard cluster: Vert.x's clustered event bus with Hazelcast as the
 * cluster manager, a fixed member list (TCP/IP, no multicast) and heartbeat limits short enough that
 * a dead node is noticed in seconds (docs/operations.md, "Cluster"). Only loaded in cluster mode:
 * the cluster libraries are not in the default jar.
 */
public final class ClusterNode {
  private static final Logger log = LoggerFactory.getLogger(ClusterNode.class);

  private static final String NODE = "switchboard.node";
  private static final String ROLE = "switchboard.role";
  private static final String INCARNATION = "switchboard.incarnation";
  /** A certificate that ends sooner is warned of at every start. */
  static final int RENEW_WITHIN_DAYS = 30;

  private ClusterNode() {}

  /** A name for this start of the node: a restarted node is another incarnation of the same name. */
  public static String newIncarnation() {
    byte[] bytes = new byte[6];
    new SecureRandom().nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /** Joins the cluster; the returned Vert.x's event bus spans its members. */
  public static Future<Vertx> join(VertxOptions options, Settings.Cluster cluster, String incarnation) {
    // Hazelcast logs its first lines before it reads its config: to the gateway's log, not to JUL.
    System.setProperty("hazelcast.logging.type", "slf4j");
    options.getEventBusOptions().setHost(cluster.host()).setPort(cluster.busPort())
        .setClusterPublicHost(cluster.host()).setClusterPublicPort(cluster.busPort());
    if (cluster.tlsDir() != null) {
      NodeCertificate certificate;
      try {
        certificate = NodeCertificate.load(cluster.tlsDir(), cluster.node(), cluster.host(), java.time.Instant.now());
      } catch (IllegalStateException e) {
        return Future.failedFuture(e);
      }
      java.time.Duration caLeft = java.time.Duration.between(java.time.Instant.now(),
          certificate.authority().getNotAfter().toInstant());
      if (caLeft.toDays() < RENEW_WITHIN_DAYS) {
        log.warn("the cluster's authority {} ends in {} days: make a new one and issue every node its certificate "
            + "(docs/operations.md, \"Renewing certificates\")", cluster.tlsDir().resolve(NodeCertificate.AUTHORITY),
            caLeft.toDays());
      }
      java.time.Duration left = certificate.left(java.time.Instant.now());
      if (left.toDays() < RENEW_WITHIN_DAYS) {
        log.warn("this node's cluster certificate {} ends in {} days ({}): issue a new one and restart the node "
            + "(docs/operations.md, \"Renewing certificates\")", cluster.tlsDir().resolve(NodeCertificate.CERTIFICATE),
            left.toDays(), certificate.certificate().getNotAfter().toInstant());
      }
      certificate.secure(options.getEventBusOptions());
    } else {
      log.warn("the event bus between nodes is plain TCP: no certificates were given (a benchmark's or a test's "
          + "set-up; a configured node always has them)");
    }
    HazelcastClusterManager manager = new LocalFirst(hazelcast(cluster, incarnation));
    return Vertx.builder().with(options).withClusterManager(manager).buildClustered()
        .compose(vertx -> {
          HazelcastInstance hazelcast = manager.getHazelcastInstance();
          Member other = sameName(hazelcast, cluster.node());
          if (other != null) {
            return vertx.close().transform(x -> Future.failedFuture(new IllegalStateException(
                "a member named " + cluster.node() + " already runs in this cluster (" + describe(other) + "): every "
                    + "node needs a name of its own (cluster.node)")));
          }
          Member edge = otherEdge(hazelcast, cluster);
          if (edge != null) {
            return vertx.close().transform(x -> Future.failedFuture(new IllegalStateException(
                "an edge node already runs in this cluster (" + describe(edge) + "): a cluster has one edge node in "
                    + "this release (two would both run the plugins and answer as the same surfaces); make this "
                    + "node an agent node (cluster.role) or stop the other")));
          }
          watchMembers(vertx, hazelcast, cluster);
          return Future.succeededFuture(vertx);
        });
  }

  /**
   * An agent node's commands are served at addresses named after it ({@code sb.node.<name>.…}): two
   * members of one name would each get half of the other's requests. The member list is agreed when
   * a node joins, so the check is exact then; two clusters that merge later are caught by
   * {@link #watchMembers}.
   */
  private static Member sameName(HazelcastInstance hazelcast, String node) {
    Member self = hazelcast.getCluster().getLocalMember();
    return hazelcast.getCluster().getMembers().stream()
        .filter(m -> !m.equals(self) && node.equals(m.getAttribute(NODE))).findFirst().orElse(null);
  }

  /** For an edge node: another edge member, of another name (a restarted edge has this one's). */
  private static Member otherEdge(HazelcastInstance hazelcast, Settings.Cluster cluster) {
    if (!"edge".equals(role(cluster))) {
      return null;
    }
    Member self = hazelcast.getCluster().getLocalMember();
    return hazelcast.getCluster().getMembers().stream().filter(m -> !m.equals(self)
        && "edge".equals(m.getAttribute(ROLE)) && !cluster.node().equals(m.getAttribute(NODE))).findFirst()
        .orElse(null);
  }

  private static String role(Settings.Cluster cluster) {
    return cluster.role().name().toLowerCase(java.util.Locale.ROOT);
  }

  static Config hazelcast(Settings.Cluster cluster, String incarnation) {
    Config config = ConfigUtil.loadConfig(); // Vert.x's maps and multimaps for its subscriptions
    // Who a member is, for the other nodes' logs and pages.
    config.getMemberAttributeConfig().setAttribute(NODE, cluster.node())
        .setAttribute(ROLE, role(cluster))
        .setAttribute(INCARNATION, incarnation);
    config.setClusterName("switchboard");
    config.setInstanceName("switchboard-" + cluster.node());
    config.setProperty("hazelcast.logging.type", "slf4j");
    config.setProperty("hazelcast.phone.home.enabled", "false");
    // Vert.x leaves the cluster when the gateway stops, after the permission requests are ended.
    config.setProperty("hazelcast.shutdownhook.enabled", "false");
    // Defaults declare a silent member gone after a minute and merge a split after minutes.
    config.setProperty("hazelcast.heartbeat.interval.seconds", "1");
    config.setProperty("hazelcast.max.no.heartbeat.seconds", Integer.toString(cluster.memberTimeoutSeconds()));
    config.setProperty("hazelcast.merge.first.run.delay.seconds", "5");
    config.setProperty("hazelcast.merge.next.run.delay.seconds", "5");
    config.setProperty("hazelcast.local.localAddress", cluster.host());
    // On cluster.host only, not every interface: the membership port is open to whoever reaches it.
    config.setProperty("hazelcast.socket.bind.any", "false");
    NetworkConfig network = config.getNetworkConfig();
    network.setPort(cluster.port()).setPortAutoIncrement(false).setPublicAddress(cluster.host() + ":" + cluster.port());
    JoinConfig join = network.getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    // A member not up yet is given 2 s, not 5, before this node starts the cluster on its own;
    // the two merge when it comes (merge checks every 5 s).
    join.getTcpIpConfig().setEnabled(true).setMembers(cluster.members()).setConnectionTimeoutSeconds(2);
    config.setProperty("hazelcast.wait.seconds.before.join", "1");
    return config;
  }

  /** Logs the members as they come and go, and tells this node's rooms ({@code sb.cluster.member}, this node only). */
  private static void watchMembers(Vertx vertx, HazelcastInstance hazelcast, Settings.Cluster cluster) {
    hazelcast.getCluster().getMembers().forEach(m -> log.info("cluster member: {}", describe(m)));
    DeliveryOptions here = new DeliveryOptions().setLocalOnly(true);
    vertx.eventBus().<JsonObject>localConsumer(Addresses.CLUSTER_MEMBERS, m -> {
      io.vertx.core.json.JsonArray members = new io.vertx.core.json.JsonArray();
      hazelcast.getCluster().getMembers().forEach(member -> members.add(fact("member", member)));
      m.reply(new JsonObject().put("members", members));
    });
    hazelcast.getCluster().addMembershipListener(new MembershipListener() {
      @Override
      public void memberAdded(MembershipEvent event) {
        log.info("cluster member joined: {}", describe(event.getMember()));
        if (cluster.node().equals(event.getMember().getAttribute(NODE))) {
          // Two clusters merged after a partition, each with a node of this name: say so loudly.
          log.error("another member named {} joined this cluster ({}): node names must differ; stop one of them",
              cluster.node(), describe(event.getMember()));
        } else if ("edge".equals(role(cluster)) && "edge".equals(event.getMember().getAttribute(ROLE))) {
          log.error("another edge node joined this cluster ({}): a cluster has one edge node; stop one of them",
              describe(event.getMember()));
        }
        vertx.eventBus().publish(Addresses.CLUSTER_MEMBER, fact("joined", event.getMember()), here);
      }

      @Override
      public void memberRemoved(MembershipEvent event) {
        log.warn("cluster member left: {}", describe(event.getMember()));
        vertx.eventBus().publish(Addresses.CLUSTER_MEMBER, fact("left", event.getMember()), here);
      }
    });
  }

  private static JsonObject fact(String event, Member member) {
    return new JsonObject().put("event", event).put("node", member.getAttribute(NODE))
        .put("role", member.getAttribute(ROLE)).put("incarnation", member.getAttribute(INCARNATION))
        .put("address", member.getAddress().toString());
  }

  private static String describe(Member member) {
    return member.getAttribute(ROLE) + " node " + member.getAttribute(NODE) + " (incarnation "
        + member.getAttribute(INCARNATION) + ") at " + member.getAddress();
  }
}
