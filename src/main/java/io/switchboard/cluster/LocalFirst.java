package io.switchboard.cluster;

import com.hazelcast.config.Config;
import io.vertx.core.Completable;
import io.vertx.core.spi.cluster.RegistrationInfo;
import io.vertx.core.spi.cluster.RegistrationListener;
import io.vertx.core.spi.cluster.RegistrationUpdateEvent;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Hazelcast as Vert.x's cluster manager, with one rule: an address this node serves to itself
 * alone (its rooms' plain command addresses, registered local-only: {@code NodeScope}) is this
 * node's, whoever else registers it. Vert.x round-robins a send across every node that registered
 * an address, its own local-only handler counted as one: a process that joined the membership
 * could otherwise take a share of a node's own commands — before mutual TLS it got them, with it
 * they would vanish at a link it cannot open (a permission request that waits forever). Facts
 * published across nodes are not served local-only anywhere and are left as they are.
 */
final class LocalFirst extends HazelcastClusterManager {
  /** This node's local-only registrations: address -> how many. */
  private final Map<String, Integer> ownLocal = new ConcurrentHashMap<>();

  LocalFirst(Config config) {
    super(config);
  }

  @Override
  public void addRegistration(String address, RegistrationInfo info, Completable<Void> promise) {
    if (info.localOnly()) {
      ownLocal.merge(address, 1, Integer::sum);
    }
    super.addRegistration(address, info, promise);
  }

  @Override
  public void removeRegistration(String address, RegistrationInfo info, Completable<Void> promise) {
    if (info.localOnly()) {
      ownLocal.computeIfPresent(address, (a, n) -> n > 1 ? n - 1 : null);
    }
    super.removeRegistration(address, info, promise);
  }

  @Override
  public void getRegistrations(String address, Completable<List<RegistrationInfo>> promise) {
    super.getRegistrations(address, (list, err) -> promise.complete(list == null ? null : mine(address, list), err));
  }

  @Override
  public void registrationListener(RegistrationListener listener) {
    super.registrationListener(new RegistrationListener() {
      @Override
      public void registrationsUpdated(RegistrationUpdateEvent event) {
        listener.registrationsUpdated(new RegistrationUpdateEvent(event.address(),
            mine(event.address(), event.registrations())));
      }

      @Override
      public void registrationsLost() {
        listener.registrationsLost();
      }

      @Override
      public boolean wantsUpdatesFor(String address) {
        return listener.wantsUpdatesFor(address);
      }
    });
  }

  /** For an address served here local-only: this node's registrations alone. */
  private List<RegistrationInfo> mine(String address, List<RegistrationInfo> registrations) {
    if (!ownLocal.containsKey(address)) {
      return registrations;
    }
    String self = getNodeId();
    return registrations.stream().filter(r -> self.equals(r.nodeId())).toList();
  }
}
