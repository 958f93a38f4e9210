package io.switchboard.process;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The operating-system boundary around an agent and its terminals: Debian's {@code bubblewrap}
 * ({@code bwrap}, user namespaces). The agent sees the machine as the gateway's user does (its
 * HOME, caches and network: real agents need them) except the data directory, which is an empty
 * tmpfs with only the thread's own workspace bound into it (no token, no database, no other
 * workspace, no plugin state); it has a PID namespace of its own (no view of the gateway's
 * {@code /proc}, so no way to find its port or read its memory maps) and dies with the gateway.
 */
public final class Sandbox {
  /** How an agent is confined: {@code auto} uses bwrap when it runs here, else none, saying so. */
  public enum Mode {
    AUTO, BWRAP, NONE;

    public static Mode parse(String text) {
      return switch (text) {
        case "auto" -> AUTO;
        case "bwrap" -> BWRAP;
        case "none" -> NONE;
        default -> throw new IllegalArgumentException("must be auto, bwrap or none, got \"" + text + "\"");
      };
    }

    public String key() {
      return name().toLowerCase();
    }
  }

  private Sandbox() {}

  /** The real path (links resolved: bwrap mounts on what a path really is), or the absolute one if missing. */
  private static String real(Path path) {
    try {
      return path.toRealPath().toString();
    } catch (java.io.IOException e) {
      return path.toAbsolutePath().normalize().toString();
    }
  }

  /**
   * Whether bwrap can confine a process on this machine: null when it can, else why not (it is not
   * installed, or user namespaces are off). Blocking: runs {@code bwrap ... true}.
   */
  public static String probe() {
    List<String> argv = new ArrayList<>(List.of("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--unshare-pid", "--die-with-parent", "true"));
    try {
      Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return "bwrap did not finish a trial run within 10 s";
      }
      String said = new String(p.getInputStream().readAllBytes()).strip();
      return p.exitValue() == 0 ? null : "bwrap cannot run here (exit " + p.exitValue() + ": " + said + ")";
    } catch (java.io.IOException e) {
      return "bwrap is not installed (Debian: apt-get install bubblewrap)";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted while trying bwrap";
    }
  }

  /**
   * The argv that runs {@code argv} confined: {@code dataDir} hidden but for {@code workspace},
   * starting in {@code cwd}. The workspace must exist. Blocking (it resolves links).
   */
  public static List<String> wrap(List<String> argv, Path dataDir, Path workspace, Path cwd) {
    String data = real(dataDir);
    String ws = real(workspace);
    List<String> wrapped = new ArrayList<>(List.of("bwrap",
        "--bind", "/", "/",
        "--dev-bind", "/dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", data,
        "--bind", ws, ws,
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--chdir", real(cwd),
        "--"));
    wrapped.addAll(argv);
    return wrapped;
  }
}
