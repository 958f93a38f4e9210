package io.switchboard.bus;

import io.vertx.core.eventbus.DeliveryOptions;

/** Delivery options the rooms share. */
public final class Bus {
  private Bus() {}

  /**
   * For {@link Addresses#PERMISSION_REGISTER}: its reply comes when a human answers or the request
   * is cancelled, which may take as long as the human needs. There is deliberately no timeout;
   * every pending request ends through an answer or one of the cancellation paths instead.
   */
  public static DeliveryOptions untilEnded() {
    return new DeliveryOptions().setSendTimeout(Long.MAX_VALUE);
  }

  /** For quick questions between rooms (status probes). */
  public static DeliveryOptions quick() {
    return new DeliveryOptions().setSendTimeout(2_000);
  }
}
