package io.switchboard.testkit;

import io.switchboard.permission.AttentionClock;
import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A clock a test moves by hand: timers fire (on the context that set them) only when
 * {@link #advance} passes their time, so a plan of minutes runs in milliseconds, each step at its time.
 */
public final class ManualClock implements AttentionClock {
  private record Timer(long at, Handler<Long> handler, Context context) {}

  private long now;
  private long nextId = 1;
  private final Map<Long, Timer> timers = new LinkedHashMap<>();

  public ManualClock(long startMillis) {
    this.now = startMillis;
  }

  @Override
  public synchronized long now() {
    return now;
  }

  @Override
  public synchronized long setTimer(long delayMs, Handler<Long> handler) {
    long id = nextId++;
    timers.put(id, new Timer(now + Math.max(1, delayMs), handler, Vertx.currentContext()));
    return id;
  }

  @Override
  public synchronized void cancelTimer(long id) {
    timers.remove(id);
  }

  /** How many timers are set (a plan keeps one for its earliest step). */
  public synchronized int timersSet() {
    return timers.size();
  }

  /** Moves time on and fires the timers now due, each on its own context. */
  public void advance(long ms) {
    List<Map.Entry<Long, Timer>> due = new ArrayList<>();
    synchronized (this) {
      now += ms;
      timers.entrySet().removeIf(e -> {
        if (e.getValue().at() <= now) {
          due.add(e);
          return true;
        }
        return false;
      });
    }
    for (Map.Entry<Long, Timer> e : due) {
      e.getValue().context().runOnContext(v -> e.getValue().handler().handle(e.getKey()));
    }
  }
}
