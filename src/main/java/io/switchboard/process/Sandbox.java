package io.switchboard.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operating-system boundary around an agent and its terminals: Debian's {@code bubblewrap}
 * ({@code bwrap}, user namespaces). The agent sees the machine as the gateway's user does (its
 * HOME, caches and network: real agents need them), read-only, except the data directory, which is
 * an empty tmpfs with only the thread's own workspace bound into it (no token, no database, no other
 * workspace, no plugin state); it may write its workspace, a private temporary folder (its
 * {@code TMPDIR}) and its own state folders ({@link Writes}), nothing else: not the shell's start-up
 * files, {@code ~/.ssh}, the shared {@code /tmp} the gateway's own temporary files live in, the jar
 * or the config. It has a PID namespace of its own (no view of the gateway's {@code /proc}, so no
 * way to find its port or read its memory maps) and dies with the gateway.
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

  private static final Logger log = LoggerFactory.getLogger(Sandbox.class);
  /** A sandbox owner's name is one path segment: a thread id, {@code shared-<agent>}, {@code oneoff-<agent>}. */
  private static final Pattern OWNER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");

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

  /**
   * What a sandboxed agent may write besides its workspace: its private temporary folder ({@code tmp},
   * its {@code TMPDIR}, shared with its terminals), its own state ({@link AgentState}) and what its
   * config adds ({@code agents[].writable}, absolute paths outside the data directory).
   */
  public record Writes(Path tmp, AgentState.Paths state, List<Path> configured) {
    public Writes {
      configured = List.copyOf(configured);
    }

    /**
     * The private temporary folder of a sandbox's {@code owner} (a thread id; {@code shared-<agent>}
     * for an agent's shared process; {@code oneoff-<agent>} for a process run for one question).
     */
    public static Path tmp(Path dataDir, String owner) {
      if (!OWNER.matcher(owner).matches()) {
        throw new IllegalArgumentException("not a sandbox owner's name: \"" + owner + "\"");
      }
      return dataDir.resolve("sandbox").resolve(owner).resolve("tmp");
    }

    /**
     * For {@code owner}'s agent run as {@code argv} with its own {@code env} (over the gateway's, which
     * it inherits) and its {@code agents[].writable} paths.
     */
    public static Writes of(Path dataDir, String owner, List<String> argv, Map<String, String> env,
                            List<Path> configured) {
      return new Writes(tmp(dataDir, owner), AgentState.of(argv, env), configured);
    }
  }

  /**
   * The argv that runs {@code argv} confined: the machine read-only, {@code dataDir} hidden but for
   * {@code workspace} (read-write) and the owner's temporary folder, what {@code writes} allows
   * writable, starting in {@code cwd}, with a project's {@code more}. The workspace must exist; the
   * temporary folder (0700) and missing state folders are made here. Blocking (it makes folders and
   * resolves links).
   */
  public static List<String> wrap(List<String> argv, Path dataDir, Path workspace, Path cwd, Writes writes,
                                  Confinement more) {
    String data = real(dataDir);
    String ws = real(workspace);
    String tmp = privateFolder(writes.tmp());
    // A folder outside the data directory is bound before its tmpfs; one inside it (HOME there, as the
    // systemd unit has it) after, or the tmpfs would hide it. None contains it: an agent that could
    // rename a folder above the data directory could put a token and a database of its own in its place.
    List<String> outside = new ArrayList<>();
    List<String> inside = new ArrayList<>();
    // What the agent can write already. A path in there is not resolved nor bound again: the agent
    // may have made it a link (to ~/.ssh, say) for the next start to bind writable. Shortest first,
    // so a folder is writable before what lies in it is looked at.
    List<Path> writable = new ArrayList<>(List.of(Path.of(ws), Path.of(tmp)));
    List<Path> configured = writes.configured().stream()
        .sorted(java.util.Comparator.comparingInt(Path::getNameCount)).toList();
    for (Path folder : configured) {
      if (!alreadyWritable(folder, writable)) {
        String p = configuredFolder(folder);
        if (Path.of(p).startsWith(data) || Path.of(data).startsWith(p)) {
          throw new IllegalArgumentException("agents[].writable: " + folder + " is inside the data directory " + data
              + " or contains it");
        }
        outside.addAll(List.of("--bind", p, p));
        writable.add(Path.of(p));
      }
    }
    List<Path> folders = writes.state().folders().stream()
        .sorted(java.util.Comparator.comparingInt(Path::getNameCount)).toList();
    for (Path folder : folders) {
      String p = alreadyWritable(folder, writable) ? null : stateFolder(folder);
      if (p != null && place(p, data, outside, inside)) {
        writable.add(Path.of(p));
      }
    }
    for (AgentState.StateFile file : writes.state().files()) {
      String p = alreadyWritable(file.path(), writable) ? null : stateFile(file);
      if (p != null) {
        place(p, data, outside, inside);
      }
    }
    List<String> wrapped = new ArrayList<>(List.of("bwrap",
        "--ro-bind", "/", "/",
        "--dev-bind", "/dev", "/dev",
        "--tmpfs", "/dev/shm", // the host's is shared by every user's programs
        "--proc", "/proc"));
    wrapped.addAll(outside);
    wrapped.addAll(List.of("--tmpfs", data));
    wrapped.addAll(inside);
    wrapped.addAll(List.of(
        "--bind", ws, ws,
        "--bind", tmp, tmp));
    for (Path hidden : more.hidden()) {
      wrapped.addAll(List.of("--tmpfs", real(hidden)));
    }
    // After the workspace: read-only paths inside it stay read-only.
    for (Path readOnly : more.readOnly()) {
      String p = real(readOnly);
      wrapped.addAll(List.of("--ro-bind", p, p));
    }
    wrapped.addAll(List.of(
        "--setenv", "TMPDIR", tmp,
        // Claude Code keeps its shell's temporary files here, else in /tmp: it does not read TMPDIR.
        "--setenv", "CLAUDE_CODE_TMPDIR", tmp,
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--chdir", real(cwd),
        "--"));
    wrapped.addAll(argv);
    return wrapped;
  }

  /**
   * Adds a bind of {@code p} to those before the data directory's tmpfs, or after it when {@code p} is
   * a hidden folder or file of the data directory's own (a dot-named first segment: an agent's state
   * in a HOME that is the data directory); anything else inside it (the gateway's files) stays hidden,
   * and one that contains it is not bound. Whether it was bound.
   */
  private static boolean place(String p, String data, List<String> outside, List<String> inside) {
    Path path = Path.of(p);
    Path dataPath = Path.of(data);
    if (dataPath.startsWith(path)) {
      log.warn("{} is not bound writable in the sandbox: it contains the data directory {}", p, data);
      return false;
    } else if (!path.startsWith(dataPath)) {
      outside.addAll(List.of("--bind", p, p));
    } else if (!path.equals(dataPath) && dataPath.relativize(path).getName(0).toString().startsWith(".")) {
      inside.addAll(List.of("--bind", p, p));
    } else {
      log.warn("{} is not bound writable in the sandbox: it is inside the data directory {}", p, data);
      return false;
    }
    return true;
  }

  /**
   * Whether {@code path}'s folder (its real path; the last name not followed) lies in one of
   * {@code writable}: then it is writable without a bind of its own, and what is there may be the agent's.
   */
  private static boolean alreadyWritable(Path path, List<Path> writable) {
    Path absolute = path.toAbsolutePath().normalize();
    Path parent = absolute.getParent();
    Path at = parent == null ? absolute : Path.of(realPrefix(parent)).resolve(absolute.getFileName());
    return writable.stream().anyMatch(w -> at.startsWith(w) || absolute.startsWith(w));
  }

  /** The real path of {@code path}'s longest existing prefix, with the rest appended (it need not exist yet). */
  private static String realPrefix(Path path) {
    Path rest = Path.of("");
    for (Path at = path; at != null; at = at.getParent()) {
      try {
        return at.toRealPath().resolve(rest).normalize().toString();
      } catch (IOException e) {
        rest = at.getFileName() == null ? rest : at.getFileName().resolve(rest);
      }
    }
    return path.toString();
  }

  /** Makes {@code tmp} (and its parents) private to the gateway's user; its real path. */
  private static String privateFolder(Path tmp) {
    try {
      Files.createDirectories(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwx------"));
      return tmp.toRealPath().toString();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot make the sandbox's temporary folder " + tmp + ": " + e.getMessage(), e);
    }
  }

  /** An agent's state folder, made when missing; null (and logged) when it cannot be: the agent runs without it. */
  private static String stateFolder(Path folder) {
    try {
      Files.createDirectories(folder);
      return folder.toRealPath().toString();
    } catch (IOException e) {
      log.warn("{} cannot be made writable in the sandbox: {}", folder, e.toString());
      return null;
    }
  }

  /**
   * An agent's state file, made (private) holding what it reads as "nothing yet" when missing: bwrap
   * binds only what is there. Null (and logged) when it is no regular file and cannot be made one.
   */
  private static String stateFile(AgentState.StateFile file) {
    Path path = file.path();
    try {
      if (!Files.exists(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        Files.createDirectories(path.getParent());
        Files.writeString(Files.createFile(path, PosixFilePermissions.asFileAttribute(
            PosixFilePermissions.fromString("rw-------"))), file.initial());
      }
    } catch (java.nio.file.FileAlreadyExistsException e) {
      // made meanwhile (by the agent on the host, say): bound as it is
    } catch (IOException e) {
      log.warn("{} cannot be made writable in the sandbox: {}", path, e.toString());
      return null;
    }
    if (!Files.isRegularFile(path)) {
      log.warn("{} is not bound writable in the sandbox: it is no regular file", path);
      return null;
    }
    return real(path);
  }

  /** A configured writable folder, made when missing; a failure stops the start, naming the key. */
  private static String configuredFolder(Path folder) {
    try {
      Files.createDirectories(folder);
      return folder.toRealPath().toString();
    } catch (IOException e) {
      throw new UncheckedIOException("agents[].writable: cannot make " + folder + ": " + e, e);
    }
  }
}
