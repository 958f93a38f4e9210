package io.switchboard.bench;

import java.time.Instant;

/** Wall-clock microseconds, comparable between the benchmark's processes on one machine. */
final class BenchClock {
  private BenchClock() {}

  static long micros() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }
}
