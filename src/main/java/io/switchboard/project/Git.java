package io.switchboard.project;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The {@code git} program run by the gateway, never trusting what an agent could have written: the
 * repository is named explicitly ({@code GIT_DIR}, {@code GIT_COMMON_DIR}, {@code GIT_WORK_TREE},
 * so a rewritten {@code .git} pointer or {@code commondir} file is never followed), hooks,
 * fsmonitor and external diff programs are off, the user's and the system's git config are not
 * read, and the environment is clean. Each run is bounded in time and in output (both go to files,
 * watched while it runs, so a command that floods or hangs is stopped). Blocking: worker threads
 * only.
 */
final class Git {
  /** Refused: git failed, timed out or said too much. The message is for a person. */
  static final class GitException extends Exception {
    GitException(String message) {
      super(message);
    }
  }

  /** What one run printed. {@code out} is cut at the output bound when {@code truncated}. */
  record Result(int exit, String out, String err, boolean truncated) {
    boolean ok() {
      return exit == 0;
    }

    String firstLine() {
      String s = out.strip();
      int nl = s.indexOf('\n');
      return nl < 0 ? s : s.substring(0, nl);
    }
  }

  /** Settings every command gets, whatever the repository's config says. */
  private static final List<String> HARDENED = List.of(
      "-c", "core.hooksPath=/dev/null",
      "-c", "core.fsmonitor=false",
      "-c", "core.untrackedCache=false",
      "-c", "diff.external=",
      "-c", "core.sshCommand=false",
      "-c", "protocol.ext.allow=never",
      "-c", "commit.gpgSign=false",
      "-c", "tag.gpgSign=false");

  static final long DEFAULT_TIMEOUT_MS = 60_000;
  static final long DEFAULT_MAX_OUTPUT = 8L << 20;

  private final String program;
  private final Path gitDir;
  private final Path commonDir;
  private final Path workTree;
  private final Map<String, String> env = new LinkedHashMap<>();
  private long timeoutMs = DEFAULT_TIMEOUT_MS;
  private long maxOutput = DEFAULT_MAX_OUTPUT;

  /**
   * @param gitDir the repository (a worktree's admin directory, or the common directory itself)
   * @param commonDir the repository's shared directory ({@code .git})
   * @param workTree the checked-out files, or null for commands on the repository alone
   */
  Git(String program, Path gitDir, Path commonDir, Path workTree) {
    this.program = program;
    this.gitDir = gitDir;
    this.commonDir = commonDir;
    this.workTree = workTree;
  }

  /** The same repository with one more environment variable (GIT_INDEX_FILE, an author...). */
  Git with(String name, String value) {
    Git copy = copy();
    copy.env.put(name, value);
    return copy;
  }

  Git limits(long timeoutMs, long maxOutput) {
    Git copy = copy();
    copy.timeoutMs = timeoutMs;
    copy.maxOutput = maxOutput;
    return copy;
  }

  private Git copy() {
    Git copy = new Git(program, gitDir, commonDir, workTree);
    copy.env.putAll(env);
    copy.timeoutMs = timeoutMs;
    copy.maxOutput = maxOutput;
    return copy;
  }

  /** Runs git; a non-zero exit is returned, not thrown. */
  Result run(String... args) throws GitException {
    return run(List.of(args));
  }

  /** Runs git and fails unless it exits 0; the message names the command and what git said. */
  Result ok(String... args) throws GitException {
    Result r = run(List.of(args));
    if (!r.ok()) {
      throw new GitException("git " + args[0] + " failed: " + said(r));
    }
    return r;
  }

  static String said(Result r) {
    String text = (r.err.isBlank() ? r.out : r.err).strip();
    return text.length() > 500 ? text.substring(0, 500) + "…" : text;
  }

  Result run(List<String> args) throws GitException {
    List<String> argv = new ArrayList<>();
    argv.add(program);
    argv.addAll(HARDENED);
    argv.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(argv);
    Map<String, String> e = pb.environment();
    String path = e.getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
    e.clear();
    e.put("PATH", path);
    e.put("LANG", "C.UTF-8");
    e.put("HOME", commonDir.toString()); // never the person's: nothing of theirs (or an agent's) is read from it
    e.put("GIT_CONFIG_NOSYSTEM", "1");
    e.put("GIT_CONFIG_GLOBAL", "/dev/null");
    e.put("GIT_TERMINAL_PROMPT", "0");
    e.put("GIT_PAGER", "cat");
    e.put("GIT_DIR", gitDir.toString());
    e.put("GIT_COMMON_DIR", commonDir.toString());
    if (workTree != null) {
      e.put("GIT_WORK_TREE", workTree.toString());
      pb.directory(workTree.toFile());
    } else {
      pb.directory(commonDir.toFile());
    }
    e.put("GIT_AUTHOR_NAME", "Switchboard");
    e.put("GIT_AUTHOR_EMAIL", "switchboard@localhost");
    e.put("GIT_COMMITTER_NAME", "Switchboard");
    e.put("GIT_COMMITTER_EMAIL", "switchboard@localhost");
    e.putAll(env);
    Path out = null;
    Path err = null;
    Process p = null;
    try {
      out = Files.createTempFile("sb-git", ".out");
      err = Files.createTempFile("sb-git", ".err");
      pb.redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.from(
          new java.io.File("/dev/null")));
      p = pb.start();
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
      boolean flooded = false;
      while (!p.waitFor(20, TimeUnit.MILLISECONDS)) {
        if (Files.size(out) + Files.size(err) > maxOutput + (64 << 10)) {
          flooded = true;
          break;
        }
        if (System.nanoTime() > deadline) {
          p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
          throw new GitException("git " + args.get(0) + " did not finish within " + timeoutMs / 1000 + " s");
        }
      }
      if (flooded) {
        p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
      boolean truncated = flooded || Files.size(out) > maxOutput;
      return new Result(flooded ? -1 : p.exitValue(), head(out, maxOutput), head(err, 64 << 10), truncated);
    } catch (IOException e1) {
      if (p == null) {
        throw new GitException("cannot run " + program + " (is git installed? Debian: apt-get install git): "
            + e1.getMessage());
      }
      throw new GitException("git " + args.get(0) + ": " + e1.getMessage());
    } catch (InterruptedException e1) {
      Thread.currentThread().interrupt();
      if (p != null) {
        p.destroyForcibly();
      }
      throw new GitException("interrupted while git " + args.get(0) + " ran");
    } finally {
      delete(out);
      delete(err);
    }
  }

  private static String head(Path file, long max) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      return new String(in.readNBytes((int) Math.min(max, Integer.MAX_VALUE - 16)), StandardCharsets.UTF_8);
    }
  }

  private static void delete(Path file) {
    if (file != null) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException ignored) {
        // a temporary file; the system's cleaner takes it
      }
    }
  }
}
