package io.switchboard.permission;

import io.vertx.core.Handler;
import io.vertx.core.Vertx;

/**
 * The time an attention plan runs on, and its one timer: the wall clock and Vert.x timers in the
 * gateway; a clock a test moves by hand (testkit's ManualClock) to walk a plan through its steps.
 */
public interface AttentionClock {
  long now();

  /** Calls {@code handler} on the caller's context once {@code delayMs} have passed; an id to cancel it. */
  long setTimer(long delayMs, Handler<Long> handler);

  void cancelTimer(long id);

  static AttentionClock of(Vertx vertx) {
    return new AttentionClock() {
      @Override
      public long now() {
        return System.currentTimeMillis();
      }

      @Override
      public long setTimer(long delayMs, Handler<Long> handler) {
        return vertx.setTimer(Math.max(1, delayMs), handler);
      }

      @Override
      public void cancelTimer(long id) {
        vertx.cancelTimer(id);
      }
    };
  }
}
