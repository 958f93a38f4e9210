package io.switchboard.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Watches another process from {@code /proc}: its resident memory (sampled every 50 ms, so a phase's
 * peak is seen) and its CPU time. Linux only, like the hosts it measures.
 */
final class ProcessSampler implements AutoCloseable {
  /** USER_HZ: the unit of utime/stime in /proc/PID/stat on every Linux this runs on. */
  private static final double TICKS_PER_SECOND = 100;
  private final Path status;
  private final Path stat;
  private final Thread thread;
  private volatile long peakKib;
  private volatile boolean running = true;

  ProcessSampler(long pid) {
    status = Path.of("/proc", Long.toString(pid), "status");
    stat = Path.of("/proc", Long.toString(pid), "stat");
    thread = new Thread(this::sample, "process-sampler");
    thread.setDaemon(true);
    thread.start();
  }

  private void sample() {
    while (running) {
      long now = rssKib();
      if (now > peakKib) {
        peakKib = now;
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Resident memory now, in KiB (0 once the process is gone). */
  long rssKib() {
    try {
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException | RuntimeException e) {
      // the process ended between two samples
    }
    return 0;
  }

  /** The highest resident memory sampled since the last call, in MiB; starts a new phase. */
  long takePeakMib() {
    long peak = Math.max(peakKib, rssKib());
    peakKib = 0;
    return peak >> 10;
  }

  /** User + system CPU seconds the process has used so far. */
  double cpuSeconds() {
    try {
      String s = Files.readString(stat);
      String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SECOND; // fields 14 and 15
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /** {busy, total} CPU ticks of the whole machine so far, from /proc/stat. */
  static long[] machineTicks() {
    try {
      String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long total = 0;
      for (int i = 1; i < f.length; i++) {
        total += Long.parseLong(f[i]);
      }
      long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]); // idle + iowait
      return new long[] {total - idle, total};
    } catch (IOException | RuntimeException e) {
      return new long[] {0, 1};
    }
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
  }
}
