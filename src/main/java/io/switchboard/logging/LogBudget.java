package io.switchboard.logging;

import org.slf4j.Logger;

/**
 * How many lines of one kind one peer may put in the log per minute (its stderr, the garbage it
 * sends); the rest are counted, and the count is logged once the minute is over. A plugin that
 * writes 50 MB of garbage costs a few lines of log, not 76 MB. Thread-safe: a peer's stderr is
 * read on a thread of its own.
 */
public final class LogBudget {
  private static final long WINDOW_MS = 60_000;
  private final int perMinute;
  private long windowStart;
  private int used;
  private long suppressed;

  private final java.util.function.LongSupplier clock;

  public LogBudget(int perMinute) {
    this(perMinute, System::currentTimeMillis);
  }

  LogBudget(int perMinute, java.util.function.LongSupplier clock) {
    this.perMinute = perMinute;
    this.clock = clock;
    this.windowStart = clock.getAsLong();
  }

  /**
   * Whether one more line may be logged now. When a new minute begins after lines were held back,
   * says how many on {@code log} first.
   */
  public synchronized boolean take(Logger log, String tag, String what) {
    long now = clock.getAsLong();
    if (now - windowStart >= WINDOW_MS) {
      if (suppressed > 0) {
        log.warn("[{}] {} more {} were not logged in the last minute (at most {} a minute)", tag, suppressed, what,
            perMinute);
      }
      windowStart = now;
      used = 0;
      suppressed = 0;
    }
    if (used < perMinute) {
      used++;
      return true;
    }
    suppressed++;
    return false;
  }

  public synchronized long suppressed() {
    return suppressed;
  }
}
