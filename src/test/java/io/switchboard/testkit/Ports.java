package io.switchboard.testkit;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/** Loopback ports for nodes that are given a fixed port in their config before they start. */
public final class Ports {
  private static final int LOWEST = 10_000;
  /**
   * Every port handed out in this JVM. The jar tests run three classes at once in one JVM, each
   * holding ports unbound while its nodes boot: this JVM never promises one port twice (the one
   * static mutable field of the test kit, on purpose: the classes share nothing else). Other test
   * JVMs rely on the random pick alone.
   */
  private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

  private Ports() {
  }

  /**
   * A port free now on 127.0.0.1, below the kernel's ephemeral range. A port from {@code bind(0)}
   * lies inside that range: between the test closing it and a node binding it seconds later, another
   * {@code bind(0)} (a gateway's HTTP port, Chromium's debugging port) or an outgoing connection may
   * take it, and the node then fails to start. The kernel gives no port below the range to anyone who
   * did not ask for it.
   */
  public static int free() throws Exception {
    int below = ephemeralLow();
    for (int tries = 0; tries < 1_000; tries++) {
      int port = ThreadLocalRandom.current().nextInt(LOWEST, below);
      if (!HANDED_OUT.add(port)) {
        continue; // promised to another test, perhaps not bound yet
      }
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
        return s.getLocalPort();
      } catch (java.io.IOException taken) {
        // in use: another (and it stays in the set: whoever has it may close and want it again)
      }
    }
    throw new IllegalStateException("no free loopback port between " + LOWEST + " and " + below);
  }

  /** The first port of {@code net.ipv4.ip_local_port_range} (32768 when it cannot be read). */
  private static int ephemeralLow() {
    try {
      String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
      int low = Integer.parseInt(range.split("\\s+")[0]);
      return low > LOWEST + 1_000 ? low : 32_768;
    } catch (Exception e) {
      return 32_768;
    }
  }
}
