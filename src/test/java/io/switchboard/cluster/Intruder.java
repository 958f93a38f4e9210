package io.switchboard.cluster;

import com.hazelcast.config.Config;
import io.switchboard.config.Settings;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stranger's JVM for the cluster tests: it joins the cluster's Hazelcast (the member list and the
 * cluster name are all it needs), without a certificate or with one of another authority, listens
 * where the cards and ends are published and where an agent node takes answers, and sends the
 * answers the test gives it on stdin. Prints one JSON line per event. Not a Switchboard node: it
 * announces no name or role, as an attacker would not.
 *
 * <p>Args: {@code membershipPort busPort members(comma) node(whose answer address) tlsDir|-}.
 */
public final class Intruder {
  private static final String SELF = "self";

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    int busPort = Integer.parseInt(args[1]);
    List<String> members = List.of(args[2].split(","));
    String node = args[3];
    Path tls = args[4].equals("-") ? null : Path.of(args[4]);
    Config hazelcast = ClusterNode.hazelcast(new Settings.Cluster("intruder", Settings.Cluster.Role.AGENT,
        "127.0.0.1", port, busPort, members, 5, 60, null), "intruder");
    hazelcast.getMemberAttributeConfig().getAttributes().clear();
    VertxOptions options = new VertxOptions();
    options.getEventBusOptions().setHost("127.0.0.1").setPort(busPort).setClusterPublicHost("127.0.0.1")
        .setClusterPublicPort(busPort);
    if (tls != null) { // a certificate, a key and a trust of its own, as a member's would be
      options.getEventBusOptions().setSsl(true)
          .setKeyCertOptions(new PemKeyCertOptions().setKeyPath(tls.resolve("node.key").toString())
              .setCertPath(tls.resolve("node.crt").toString()))
          .setTrustOptions(new PemTrustOptions().addCertPath(tls.resolve("ca.crt").toString()))
          .setClientAuth(io.vertx.core.http.ClientAuth.REQUIRED);
    }
    HazelcastClusterManager manager = new HazelcastClusterManager(hazelcast);
    Vertx vertx = Vertx.builder().with(options).withClusterManager(manager).buildClustered()
        .await(60, TimeUnit.SECONDS);
    AtomicInteger heard = new AtomicInteger();
    // Where cards and ends are published, where the node takes answers, and the node's own command for
    // registering a request (served to itself alone: a share of those would otherwise come here).
    for (String address : List.of("sb.permission.shown", "sb.permission.resolved", "sb.permission.cancelled",
        "sb.node." + node + ".permission.answer", "sb.permission.register")) {
      vertx.eventBus().<Object>consumer(address, m -> {
        if (m.headers().contains(SELF)) { // its own send, come back to its own handler
          m.reply(SELF);
          return;
        }
        heard.incrementAndGet();
        say(new JsonObject().put("heard", address).put("body", String.valueOf(m.body())));
      }).completion().await(30, TimeUnit.SECONDS);
    }
    say(new JsonObject().put("ready", true)
        .put("members", manager.getHazelcastInstance().getCluster().getMembers().size()));
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null && !line.equals("quit"); line = in.readLine()) {
      JsonObject send = new JsonObject(line);
      long t0 = System.nanoTime();
      try {
        Object reply = vertx.eventBus().request(send.getString("address"), send.getJsonObject("body"),
            new DeliveryOptions().setSendTimeout(5_000).addHeader(SELF, "1")).await(30, TimeUnit.SECONDS).body();
        say(new JsonObject().put("sent", SELF.equals(reply) ? SELF : "delivered").put("reply", String.valueOf(reply))
            .put("ms", (System.nanoTime() - t0) / 1_000_000));
      } catch (Exception e) {
        say(new JsonObject().put("sent", "failed").put("cause", String.valueOf(e))
            .put("ms", (System.nanoTime() - t0) / 1_000_000));
      }
    }
    say(new JsonObject().put("heardTotal", heard.get()));
    vertx.close().await(30, TimeUnit.SECONDS);
    System.exit(0);
  }

  private static synchronized void say(JsonObject line) {
    System.out.println(line.encode());
    System.out.flush();
  }
}
