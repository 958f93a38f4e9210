package io.switchboard.project;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The {@code git} program run by the gateway, never trusting what an agent could have written: the
 * repository is named explicitly ({@code GIT_DIR}, {@code GIT_COMMON_DIR}, {@code GIT_WORK_TREE},
 * so a rewritten {@code .git} pointer or {@code commondir} file is never followed), hooks,
 * fsmonitor and external diff programs are off, the user's and the system's git config are not
 * read, the environment is clean, and no command enters a nested repository (a submodule or a
 * repository an agent made inside its worktree: that inner git would read the agent's config and
 * run its filters on the host). Each run is bounded in time and in output, read from git's own
 * pipes (never from files an agent could swap), so a command that floods or hangs is stopped.
 * Blocking: worker threads only.
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

    /** This result, unless git failed: then a message naming {@code what} and what git said. */
    Result requireOk(String what) throws GitException {
      if (exit != 0) {
        throw new GitException("git " + what + " failed: " + said(this));
      }
      return this;
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
      "-c", "tag.gpgSign=false",
      // status, diff and commit never look inside a gitlink (add does anyway: ProjectRepo excludes them).
      "-c", "diff.ignoreSubmodules=all",
      "-c", "submodule.recurse=false",
      "-c", "status.submoduleSummary=false",
      "-c", "fetch.recurseSubmodules=false");

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
    return run(args, null, null);
  }

  /**
   * Runs git and hands each NUL-separated record of its output to {@code records} as it comes,
   * keeping none of it (listings of every file of a big worktree); the result's {@code out} is empty.
   */
  Result stream(Consumer<String> records, String... args) throws GitException {
    return run(List.of(args), null, records);
  }

  /** Runs git with {@code input} on its standard input (a pathspec list, object ids to look up). */
  Result withInput(byte[] input, List<String> args) throws GitException {
    return run(args, input, null);
  }

  /**
   * Runs git with its output read from its own pipes, never from files: a file the gateway reads
   * back would sit where a sandboxed agent could swap it (issue 42). Bounded in time and output.
   */
  private Result run(List<String> args, byte[] input, Consumer<String> records) throws GitException {
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
    if (input == null) {
      pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    }
    Process p;
    try {
      p = pb.start();
    } catch (IOException e1) {
      throw new GitException("cannot run " + program + " (is git installed? Debian: apt-get install git): "
          + e1.getMessage());
    }
    Drain out = new Drain(p, p.getInputStream(), maxOutput, records);
    Drain err = new Drain(p, p.getErrorStream(), 64 << 10, null);
    Thread outReader = reader(out, "git-out");
    Thread errReader = reader(err, "git-err");
    Thread writer = input == null ? null : reader(() -> {
      try (var in = p.getOutputStream()) {
        in.write(input);
      } catch (IOException gone) {
        // git stopped reading (it failed, or needs no more): its exit says why
      }
    }, "git-in");
    try {
      if (!p.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
        kill(p);
        throw new GitException("git " + args.get(0) + " did not finish within " + timeoutMs / 1000 + " s");
      }
      // A child git left behind (it should not be) could keep the pipe open: the readers wait a bounded time.
      outReader.join(10_000);
      errReader.join(10_000);
      if (outReader.isAlive() || errReader.isAlive()) {
        kill(p);
        throw new GitException("git " + args.get(0) + " left its output open after it ended");
      }
      if (writer != null) {
        writer.join(1_000);
      }
      if (out.failure != null) {
        throw new GitException("git " + args.get(0) + ": " + out.failure.getMessage());
      }
      int exit = out.flooded ? -1 : p.exitValue();
      return new Result(exit, out.text(), err.text(), out.flooded || out.cut);
    } catch (InterruptedException e1) {
      Thread.currentThread().interrupt();
      kill(p);
      throw new GitException("interrupted while git " + args.get(0) + " ran");
    } finally {
      if (p.isAlive()) {
        kill(p);
      }
    }
  }

  private static Thread reader(Runnable work, String name) {
    Thread t = new Thread(work, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static void kill(Process p) {
    p.descendants().forEach(ProcessHandle::destroyForcibly);
    p.destroyForcibly();
    try {
      p.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * One of git's pipes read to its end: kept up to {@code max} bytes, or handed on record by record
   * (NUL-separated) to a consumer. A listing past {@code max} records' worth stops git ({@code flooded}),
   * as output past the bound does; a kept output past it is cut ({@code cut}).
   */
  private static final class Drain implements Runnable {
    private final Process process;
    private final InputStream in;
    private final long max;
    private final Consumer<String> records;
    private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
    private final ByteArrayOutputStream record = new ByteArrayOutputStream();
    private volatile boolean flooded;
    private volatile boolean cut;
    private volatile IOException failure;

    Drain(Process process, InputStream in, long max, Consumer<String> records) {
      this.process = process;
      this.in = in;
      this.max = max;
      this.records = records;
    }

    @Override
    public void run() {
      byte[] buf = new byte[16 << 10];
      long total = 0;
      try (in) {
        int n;
        while ((n = in.read(buf)) > 0) {
          total += n;
          if (records != null) {
            split(buf, n);
            continue;
          }
          if (kept.size() < max) {
            kept.write(buf, 0, (int) Math.min(n, max - kept.size()));
          }
          if (total > max) {
            cut = true;
            if (total > max + (64 << 10)) {
              flooded = true; // far past the bound: stop git rather than read on
              process.destroyForcibly();
              return;
            }
          }
        }
        if (records != null && record.size() > 0) {
          records.accept(record.toString(StandardCharsets.UTF_8));
        }
      } catch (IOException e) {
        if (!flooded && process.isAlive()) {
          failure = e;
        }
      }
    }

    private void split(byte[] buf, int n) {
      int from = 0;
      for (int i = 0; i < n; i++) {
        if (buf[i] == 0) {
          record.write(buf, from, i - from);
          records.accept(record.toString(StandardCharsets.UTF_8));
          record.reset();
          from = i + 1;
        }
      }
      record.write(buf, from, n - from);
      if (record.size() > max) {
        flooded = true; // one name longer than any path: not a listing
        process.destroyForcibly();
      }
    }

    String text() {
      return kept.toString(StandardCharsets.UTF_8);
    }
  }
}
