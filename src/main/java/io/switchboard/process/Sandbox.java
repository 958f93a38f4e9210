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
   * What a project adds to the boundary: folders hidden behind an empty tmpfs (the person's own
   * checkout of a repository whose threads work in worktrees), then paths bound read-only (the
   * repository's {@code .git}, the worktree's {@code .git} pointer: git trusts what it finds there,
   * so an agent that could write them would make the host run its programs).
   */
  public record Confinement(List<Path> hidden, List<Path> readOnly) {
    public static final Confinement NONE = new Confinement(List.of(), List.of());

    public Confinement {
      hidden = List.copyOf(hidden);
      readOnly = List.copyOf(readOnly);
    }
  }

  /** As {@link #wrap(List, Path, Path, Path, Confinement)} with nothing more hidden or read-only. */
  public static List<String> wrap(List<String> argv, Path dataDir, Path workspace, Path cwd) {
    return wrap(argv, dataDir, workspace, cwd, Confinement.NONE);
  }

  /**
   * The argv that runs {@code argv} confined: {@code dataDir} hidden but for {@code workspace},
   * starting in {@code cwd}, with a project's {@code more}. The workspace must exist. Blocking (it
   * resolves links).
   */
  public static List<String> wrap(List<String> argv, Path dataDir, Path workspace, Path cwd, Confinement more) {
    String data = real(dataDir);
    String ws = real(workspace);
    List<String> wrapped = new ArrayList<>(List.of("bwrap",
        "--bind", "/", "/",
        "--dev-bind", "/dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", data,
        "--bind", ws, ws));
    for (Path hidden : more.hidden()) {
      wrapped.addAll(List.of("--tmpfs", real(hidden)));
    }
    for (Path readOnly : more.readOnly()) {
      String p = real(readOnly);
      wrapped.addAll(List.of("--ro-bind", p, p));
    }
    wrapped.addAll(List.of(
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--chdir", real(cwd),
        "--"));
    wrapped.addAll(argv);
    return wrapped;
  }
}
