package io.switchboard.testkit;

import java.util.List;
import java.util.function.Supplier;

/**
 * The seeded runs of a fault suite: {@code -D<name>.seed=N} replays one run, {@code -D<name>.runs=N}
 * sets how many (each seed printed first); a broken invariant names the seed to replay and the
 * run's steps.
 */
public final class SeededRuns {
  /** One run of a suite, from its seed. */
  @FunctionalInterface
  public interface Run {
    void run(long seed) throws Exception;
  }

  private SeededRuns() {}

  /** Plays the runs; returns how many ran. {@code steps}: the run's log, for the failure message. */
  public static int play(String name, String seedProperty, String runsProperty, int defaultRuns, Run run,
                         Supplier<List<String>> steps) {
    String fixed = System.getProperty(seedProperty, "");
    int runs = fixed.isBlank() ? Integer.getInteger(runsProperty, defaultRuns) : 1;
    long base = fixed.isBlank() ? System.nanoTime() : Long.parseLong(fixed);
    for (int i = 0; i < runs; i++) {
      long seed = base + i;
      System.out.println(name + " run seed " + seed);
      try {
        run.run(seed);
      } catch (Throwable t) {
        throw new AssertionError(name + " run with seed " + seed + " broke an invariant (replay with -D"
            + seedProperty + "=" + seed + "): " + t.getMessage() + "\nsteps: " + steps.get(), t);
      }
    }
    return runs;
  }
}
