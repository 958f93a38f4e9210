package io.switchboard.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * CPU time per thread over a measured phase, summed by kind (event loops, the store's writer,
 * workers, the benchmark's own thread, the JIT): which thread a throughput is waiting on.
 */
final class ThreadCpu {
  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private final Map<Long, Long> before = new TreeMap<>();
  private final long startNanos = System.nanoTime();

  ThreadCpu() {
    for (long id : threads.getAllThreadIds()) {
      before.put(id, Math.max(0, threads.getThreadCpuTime(id)));
    }
  }

  /** "kind cpu% of the phase, ..." busiest first; 100 % is one core busy for the whole phase. */
  String report() {
    double wall = System.nanoTime() - startNanos;
    Map<String, Long> byKind = new TreeMap<>();
    for (long id : threads.getAllThreadIds()) {
      var info = threads.getThreadInfo(id);
      long cpu = threads.getThreadCpuTime(id);
      if (info == null || cpu < 0) {
        continue;
      }
      byKind.merge(kind(info.getThreadName()), cpu - before.getOrDefault(id, 0L), Long::sum);
    }
    return byKind.entrySet().stream().filter(e -> e.getValue() * 100 / wall >= 1)
        .sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
        .map(e -> String.format("%s %.0f%%", e.getKey(), e.getValue() * 100 / wall))
        .collect(Collectors.joining(", "));
  }

  private static String kind(String name) {
    if (name.startsWith("vert.x-eventloop")) {
      return name.replace("vert.x-eventloop-thread", "event loop");
    }
    if (name.startsWith("switchboard-store-writer")) {
      return "store writer";
    }
    if (name.startsWith("vert.x-worker") || name.startsWith("vert.x-internal-blocking")) {
      return "workers";
    }
    if (name.startsWith("C1 ") || name.startsWith("C2 ")) {
      return "JIT";
    }
    if (name.contains("GC") || name.startsWith("G1")) {
      return "GC";
    }
    return name;
  }
}
