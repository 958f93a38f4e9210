package io.switchboard.web;

import io.switchboard.config.Settings;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.util.Collections;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * The names this server answers to, for its Host-header check (DNS rebinding: a page on an
 * attacker's name that resolves to 127.0.0.1 sends that name as its Host). Loopback names always;
 * the configured host; the hosts of {@code http.allowedOrigins} and {@code http.allowedHosts}; and,
 * when listening on every interface, this machine's addresses and name.
 */
final class HostCheck {
  private HostCheck() {}

  /** Blocking where the host listens everywhere: it lists the interfaces and asks for this machine's name. */
  static Set<String> allowed(Settings.Http http) {
    Set<String> names = new HashSet<>(Set.of("localhost", "127.0.0.1", "::1"));
    String host = normal(http.host());
    boolean everywhere = host.isEmpty() || host.equals("0.0.0.0") || host.equals("::");
    if (!everywhere) {
      names.add(host);
    }
    for (String origin : http.allowedOrigins()) {
      String h = URI.create(origin).getHost();
      if (h != null) {
        names.add(normal(h));
      }
    }
    http.allowedHosts().forEach(h -> names.add(normal(h)));
    if (everywhere) {
      try {
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
          for (InetAddress a : Collections.list(nic.getInetAddresses())) {
            names.add(normal(a.getHostAddress()));
          }
        }
        InetAddress self = InetAddress.getLocalHost();
        names.add(normal(self.getHostName()));
        names.add(normal(self.getCanonicalHostName()));
      } catch (java.io.IOException e) {
        // only the names above, then
      }
    }
    return Set.copyOf(names);
  }

  /** Lower case, without IPv6 brackets, a zone id or a trailing dot. */
  static String normal(String host) {
    String h = host == null ? "" : host.trim().toLowerCase(Locale.ROOT);
    if (h.startsWith("[") && h.endsWith("]")) {
      h = h.substring(1, h.length() - 1);
    }
    int zone = h.indexOf('%');
    if (zone >= 0) {
      h = h.substring(0, zone);
    }
    if (h.endsWith(".")) {
      h = h.substring(0, h.length() - 1);
    }
    if (h.equals("0:0:0:0:0:0:0:1")) {
      h = "::1";
    }
    return h;
  }
}
