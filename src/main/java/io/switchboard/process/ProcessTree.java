package io.switchboard.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Finds and kills every process a child of the gateway left behind. A parent's descendants are
 * lost the moment it dies (its children are re-parented), and children that call {@code setsid}
 * leave its process group, so each process the gateway starts carries two environment variables
 * that its children inherit: the gateway's owner mark (one per data directory) and a mark of its
 * own tree. On Linux {@code /proc/<pid>/environ} tells which processes carry them, whatever their
 * parent or session now; elsewhere only live descendants are found. Every method here blocks:
 * call it on a worker thread.
 */
public final class ProcessTree {
  /** The data directory's mark: a restarted gateway kills what a killed one left running. */
  public static final String OWNER_VARIABLE = "SWITCHBOARD_OWNER";
  /** One spawned process and everything it starts. */
  public static final String TREE_VARIABLE = "SWITCHBOARD_TREE";
  private static final Path PROC = Path.of("/proc");

  private ProcessTree() {}

  /** The owner mark of a data directory: stable across restarts, different per data directory. */
  public static String ownerOf(Path dataDir) {
    byte[] digest = io.switchboard.common.Sha256.of(dataDir.toAbsolutePath().normalize().toString());
    return HexFormat.of().formatHex(digest, 0, 12);
  }

  /** A fresh tree mark. */
  public static String newMark() {
    return java.util.UUID.randomUUID().toString().replace("-", "");
  }

  /** Puts the marks into a child's environment. */
  public static void mark(Map<String, String> env, String owner, String tree) {
    env.put(OWNER_VARIABLE, owner);
    env.put(TREE_VARIABLE, tree);
  }

  /** The live processes (not this one) whose environment holds {@code variable=value}. */
  public static List<ProcessHandle> carrying(String variable, String value) {
    byte[] needle = (variable + "=" + value).getBytes(StandardCharsets.UTF_8);
    long self = ProcessHandle.current().pid();
    List<ProcessHandle> found = new ArrayList<>();
    if (!Files.isDirectory(PROC)) {
      return found;
    }
    ProcessHandle.allProcesses().filter(p -> p.pid() != self).forEach(p -> {
      try {
        byte[] environ = Files.readAllBytes(PROC.resolve(Long.toString(p.pid())).resolve("environ"));
        if (holds(environ, needle) && p.isAlive()) {
          found.add(p);
        }
      } catch (IOException | SecurityException ignored) {
        // gone already, or another user's process: not ours
      }
    });
    return found;
  }

  /** Whether a NUL-separated environment block holds the entry exactly. */
  static boolean holds(byte[] environ, byte[] entry) {
    int start = 0;
    for (int i = 0; i <= environ.length; i++) {
      if (i == environ.length || environ[i] == 0) {
        if (i - start == entry.length && java.util.Arrays.equals(environ, start, i, entry, 0, entry.length)) {
          return true;
        }
        start = i + 1;
      }
    }
    return false;
  }

  /**
   * Kills a tree: {@code root} (if alive), its live descendants, {@code known} (handles remembered
   * earlier) and every process carrying the tree mark. SIGTERM first, SIGKILL for what is left
   * after {@code graceMs}. Returns how many processes it signalled.
   */
  public static int kill(ProcessHandle root, List<ProcessHandle> known, String tree, long graceMs) {
    Set<ProcessHandle> targets = new LinkedHashSet<>();
    if (root != null) {
      root.descendants().forEach(targets::add);
      targets.add(root);
    }
    targets.addAll(known);
    if (tree != null) {
      targets.addAll(carrying(TREE_VARIABLE, tree));
    }
    targets.removeIf(p -> !running(p) || p.pid() == ProcessHandle.current().pid());
    if (targets.isEmpty()) {
      return 0;
    }
    if (graceMs > 0) {
      targets.forEach(ProcessHandle::destroy);
      awaitExit(List.copyOf(targets), graceMs);
    }
    targets.stream().filter(ProcessTree::running).forEach(ProcessHandle::destroyForcibly);
    awaitExit(List.copyOf(targets), 2_000);
    return targets.size();
  }

  /** Kills, at once, every process carrying the owner mark: the leftovers of a gateway that was killed. */
  public static int killOwned(String owner) {
    List<ProcessHandle> left = carrying(OWNER_VARIABLE, owner);
    left.forEach(ProcessHandle::destroyForcibly);
    awaitExit(left, 2_000);
    return left.size();
  }

  /**
   * Waits until none of them runs, at most {@code ms}. Polled: for a process that is not our child
   * {@code onExit()} polls too (300 ms apart, and slower as it goes), and counts a zombie as alive.
   */
  private static void awaitExit(List<ProcessHandle> handles, long ms) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
    while (handles.stream().anyMatch(ProcessTree::running) && System.nanoTime() < deadline) {
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return; // some still run: the caller escalates or gives up
      }
    }
  }

  /**
   * Whether a process still runs. A zombie does not: it has exited and waits only for its parent to
   * collect its status, nothing is left to kill. {@code ProcessHandle} counts it alive, and a
   * sandbox's own init (bubblewrap's) stays one for seconds where PID 1 is slow to reap, as in a
   * container or a small VM: the gateway waited out its whole grace for it on every agent's stop.
   */
  public static boolean running(ProcessHandle p) {
    if (!p.isAlive()) {
      return false;
    }
    try {
      String stat = Files.readString(PROC.resolve(Long.toString(p.pid())).resolve("stat"), StandardCharsets.US_ASCII);
      int end = stat.lastIndexOf(") "); // the command name, in parentheses, may hold anything
      char state = end < 0 || end + 2 >= stat.length() ? 'R' : stat.charAt(end + 2);
      return state != 'Z' && state != 'X';
    } catch (IOException | SecurityException e) {
      return !Files.isDirectory(PROC) && p.isAlive(); // no /proc here: as ProcessHandle says; else gone
    }
  }

  /**
   * The resident memory of a process and everything under it, in bytes (0 if it is gone): what an
   * agent costs the host. Blocking: reads {@code /proc/<pid>/status} of each.
   */
  public static long rssBytes(long pid) {
    return ProcessHandle.of(pid).map(root -> java.util.stream.Stream.concat(java.util.stream.Stream.of(root),
        root.descendants()).mapToLong(p -> residentBytes(p.pid())).sum()).orElse(0L);
  }

  /** The resident memory of one process, in bytes (0 if it is gone). Blocking. */
  public static long residentBytes(long pid) {
    try {
      for (String line : Files.readAllLines(PROC.resolve(Long.toString(pid)).resolve("status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException | SecurityException ignored) {
      // gone meanwhile
    }
    return 0;
  }
}
