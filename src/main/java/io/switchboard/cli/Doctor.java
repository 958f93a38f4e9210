package io.switchboard.cli;

import io.switchboard.config.AgentSpec;
import io.switchboard.config.PluginSpec;
import io.switchboard.config.ProjectSpec;
import io.switchboard.config.Settings;
import io.switchboard.store.LedgerReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** {@code doctor}: checks what the gateway needs, one line each, and says how to fix what is wrong. */
public final class Doctor {
  private final Settings settings;
  private final PrintStream out;
  /** The git program run for the projects' checks ("git" on PATH; tests name a missing one). */
  private final String git;
  private int problems;

  public Doctor(Settings settings, PrintStream out) {
    this(settings, out, "git");
  }

  Doctor(Settings settings, PrintStream out, String git) {
    this.settings = settings;
    this.out = out;
    this.git = git;
  }

  /** Runs every check; returns the number of problems found. */
  public int run() {
    int java = Runtime.version().feature();
    check(java >= 17, "Java " + Runtime.version(), "Java 17 or newer is needed, this is " + Runtime.version());
    dataDir();
    database();
    for (AgentSpec a : settings.agents()) {
      if (a.isBuiltin()) {
        ok("agent " + a.id() + ": built in (" + a.builtin() + ")");
      } else {
        command("agent " + a.id(), a.command(), a.cwd());
      }
    }
    for (PluginSpec p : settings.plugins()) {
      command("plugin " + p.id(), p.command(), p.cwd());
    }
    for (ProjectSpec p : settings.projects()) {
      project(p);
    }
    sandbox();
    selfApproval();
    agentProcesses();
    port();
    if (settings.cluster() != null) {
      cluster(settings.cluster());
    }
    out.println(problems == 0 ? "All checks passed." : problems + " problem(s) found.");
    return problems;
  }

  private void dataDir() {
    Path dir = settings.dataDir();
    try {
      io.switchboard.config.AccessToken.ensurePrivateDirectory(dir);
      Path probe = Files.createTempFile(dir, ".doctor", ".tmp");
      Files.delete(probe);
      ok("data directory " + dir + " is writable");
    } catch (IOException e) {
      problem("data directory " + dir + " is not writable: " + e.getMessage());
      return;
    }
    try {
      java.util.List<String> loose = io.switchboard.config.DataDirectory.loose(dir);
      check(loose.isEmpty(), "data directory " + dir + " and its files are private (0700/0600)",
          "readable by others: " + String.join(", ", loose) + " (the gateway tightens them at start; or chmod "
              + "700 the directory and 600 its files)");
    } catch (IOException e) {
      problem("cannot read the modes in " + dir + ": " + e.getMessage());
    }
    if (settings.http().host().equals("0.0.0.0") || settings.http().host().equals("::")) {
      warn("http.host " + settings.http().host() + " listens on every interface over plain HTTP: put a TLS reverse "
          + "proxy in front, or listen on 127.0.0.1");
    }
    Path token = settings.tokenFile();
    if (Files.exists(token)) {
      try {
        String mode = PosixFilePermissions.toString(Files.getPosixFilePermissions(token));
        check(mode.equals("rw-------"), "token file " + token + " is private (rw-------)",
            "token file " + token + " is " + mode + "; run chmod 600 on it (the gateway fixes it at start)");
      } catch (IOException | UnsupportedOperationException e) {
        ok("token file " + token + " exists");
      }
    } else {
      ok("token file " + token + " will be created at the first start");
    }
  }

  private void database() {
    Path db = settings.databaseFile();
    if (!Files.exists(db)) {
      ok("database " + db + " will be created at the first start");
      return;
    }
    try {
      int version = LedgerReader.schemaVersion(db);
      check(version <= LedgerReader.knownSchemaVersion(), "database " + db + " opens (schema version " + version + ")",
          "database " + db + " has schema version " + version + ", newer than this release knows");
    } catch (Exception e) {
      problem("database " + db + " cannot be read: " + e.getMessage());
    }
  }

  private void command(String what, List<String> argv, String cwd) {
    String program = argv.get(0);
    Path found = resolve(program);
    if (found == null) {
      problem(what + ": command " + program + " not found" + (program.contains("/") ? "" : " on PATH")
          + "; install it or fix \"command\" in the configuration");
    } else {
      ok(what + ": " + found);
    }
    if (cwd != null && !Files.isDirectory(Path.of(cwd))) {
      problem(what + ": working directory " + cwd + " does not exist");
    }
  }

  /**
   * A project's directory as it is now: still there, a git repository or not (and then git
   * installed, the current branch, how many uncommitted changes). The configuration was checked at
   * load; this finds what changed since, or what only running git shows.
   */
  private void project(ProjectSpec p) {
    String what = "project " + p.id() + ": " + p.path();
    if (!Files.isDirectory(p.path())) {
      problem(what + " does not exist any more (or is not a directory); restore it or fix \"path\" in the "
          + "configuration");
      return;
    }
    boolean isGit = Files.exists(p.path().resolve(".git"), java.nio.file.LinkOption.NOFOLLOW_LINKS);
    if (!isGit) {
      check(!p.perThread(), what + " (not git, shared)", what + " has no .git any more, but its threads get git "
          + "worktrees (\"worktrees\": \"perThread\"); restore the repository or set \"worktrees\": \"shared\"");
      return;
    }
    String mode = p.perThread() ? "perThread worktrees" : "shared";
    if (resolve(git) == null) {
      problem(what + " is a git repository but git is not installed" + (git.contains("/") ? " (" + git + ")"
          : " (not on PATH)") + "; install git");
      return;
    }
    Git head = git(p.path(), "rev-parse", "--abbrev-ref", "HEAD");
    String branch;
    if (head.code == 0) {
      branch = head.out.strip().equals("HEAD") ? "detached HEAD" : "branch " + head.out.strip();
    } else {
      // A repository without a commit yet: HEAD names a branch that does not exist.
      Git unborn = head.code < 0 ? head : git(p.path(), "symbolic-ref", "--short", "-q", "HEAD");
      if (unborn.code != 0) {
        problem(what + ": git cannot read the repository: " + head.error());
        return;
      }
      branch = "branch " + unborn.out.strip() + ", no commits yet";
      if (p.perThread()) {
        problem(what + " (git, " + branch + ", " + mode + "): a thread's worktree starts from a commit; commit once, "
            + "or set \"worktrees\": \"shared\"");
        return;
      }
    }
    Git status = git(p.path(), "status", "--porcelain");
    String changes = status.code != 0 ? "uncommitted changes unknown: " + status.error()
        : count(status.out) + " uncommitted change" + (count(status.out) == 1 ? "" : "s");
    ok(what + " (git, " + branch + ", " + mode + ", " + changes + ")");
  }

  private static long count(String lines) {
    return lines.lines().filter(l -> !l.isBlank()).count();
  }

  /** What git printed and its exit code; -1 when it did not finish in time or did not start. */
  private record Git(int code, String out, String err) {
    String error() {
      String text = (code == -1 ? err : err.isBlank() ? out : err).strip();
      int nl = text.indexOf('\n');
      return nl < 0 ? text : text.substring(0, nl);
    }
  }

  /**
   * Runs git in {@code dir} with neither the system's nor the user's git configuration (no hooks,
   * no fsmonitor daemon started, no optional locks taken), for at most 10 s.
   */
  private Git git(Path dir, String... args) {
    List<String> argv = new ArrayList<>(List.of(git, "--no-optional-locks", "-C", dir.toString(),
        "-c", "core.fsmonitor=false"));
    argv.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(argv);
    pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
    pb.environment().put("GIT_CONFIG_GLOBAL", "/dev/null");
    pb.environment().put("GIT_TERMINAL_PROMPT", "0");
    pb.environment().put("LC_ALL", "C");
    Process process;
    try {
      process = pb.start();
    } catch (IOException e) {
      return new Git(-1, "", "git does not start: " + e.getMessage());
    }
    try {
      process.getOutputStream().close();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      Thread outReader = drain(process.getInputStream(), out);
      Thread errReader = drain(process.getErrorStream(), err);
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return new Git(-1, "", "git did not finish within 10 s");
      }
      outReader.join(2000);
      errReader.join(2000);
      return new Git(process.exitValue(), out.toString(java.nio.charset.StandardCharsets.UTF_8),
          err.toString(java.nio.charset.StandardCharsets.UTF_8));
    } catch (IOException | InterruptedException e) {
      process.destroyForcibly();
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      return new Git(-1, "", "git failed: " + e.getMessage());
    }
  }

  private static Thread drain(InputStream in, ByteArrayOutputStream into) {
    Thread t = new Thread(() -> {
      try (in) {
        in.transferTo(into);
      } catch (IOException ignored) {
        // what was read so far is kept
      }
    }, "doctor-git-output");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static Path resolve(String program) {
    if (program.contains("/")) {
      Path p = Path.of(program);
      return Files.isExecutable(p) ? p : null;
    }
    String path = System.getenv().getOrDefault("PATH", "");
    for (String dir : path.split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty()) {
        Path p = Path.of(dir, program);
        if (Files.isExecutable(p) && !Files.isDirectory(p)) {
          return p;
        }
      }
    }
    return null;
  }

  private void port() {
    Settings.Http http = settings.http();
    if (http.port() == 0) {
      ok("port: a free one is picked at start");
      return;
    }
    try (ServerSocket socket = new ServerSocket(http.port(), 1, InetAddress.getByName(http.host()))) {
      ok("port " + http.port() + " on " + http.host() + " is free");
    } catch (IOException e) {
      problem("port " + http.port() + " on " + http.host() + " is busy (" + e.getMessage()
          + "): another program, or a running Switchboard, listens there; pick another with --port");
    }
  }

  /** Whether agents can be confined here, and what each agent's setting makes of that. */
  private void sandbox() {
    String problem = io.switchboard.process.Sandbox.probe();
    if (problem == null) {
      ok("sandbox: bubblewrap runs here; agents run confined unless their \"sandbox\" is \"none\"");
    }
    for (AgentSpec a : settings.agents()) {
      switch (a.sandbox()) {
        case NONE -> warn("agent " + a.id() + " runs unconfined (\"sandbox\": \"none\"): it can read the token and "
            + "the database");
        case BWRAP -> check(problem == null, "agent " + a.id() + " runs in the sandbox",
            "agent " + a.id() + " must run in a sandbox (\"sandbox\": \"bwrap\") but " + problem);
        case AUTO -> {
          if (problem != null) {
            warn("agent " + a.id() + " will run unconfined: " + problem);
          }
        }
      }
      if (a.sandbox() != io.switchboard.process.Sandbox.Mode.NONE && problem == null) {
        ok(writes(a));
      }
    }
  }

  /** What the sandbox lets agent {@code a} write; the rest of the machine is read-only to it. */
  private String writes(AgentSpec a) {
    String owner = a.shareProcess() ? "shared-" + a.id() : "<thread>";
    var state = io.switchboard.process.AgentState.of(a.command(), a.env());
    List<String> parts = new ArrayList<>(List.of("its workspace",
        "its temporary folder " + settings.dataDir().resolve("sandbox").resolve(owner).resolve("tmp") + " (TMPDIR)"));
    List<String> own = new ArrayList<>(state.folders().stream().map(Path::toString).toList());
    state.files().forEach(f -> own.add(f.path().toString()));
    parts.add("its state " + String.join(", ", own));
    if (!a.writable().isEmpty()) {
      parts.add("agents[].writable " + String.join(", ", a.writable().stream().map(Path::toString).toList()));
    }
    return "agent " + a.id() + " may write " + String.join("; ", parts) + "; the rest of the machine is read-only "
        + "to it (the data directory hidden)";
  }

  /** The caps on agent processes, each agent's choice of sharing, and what runs under this data directory now. */
  /** An agent that may skip asking never shows the gateway those calls: no card, no rule, no ledger row. */
  private void selfApproval() {
    for (AgentSpec a : settings.agents()) {
      if (a.isBuiltin()) {
        continue;
      }
      for (String finding : AgentSelfApproval.findings(a, settings.projects())) {
        warn("agent " + a.id() + " may skip asking: " + finding + "; the gateway never sees those calls (use "
            + "Switchboard's rules instead, README \"Rules\")");
      }
    }
  }

  private void agentProcesses() {
    var limits = settings.agentProcesses();
    ok("agent processes: at most " + limits.max() + " at once (agentProcesses.max; this host's default is "
        + io.switchboard.config.Settings.AgentProcesses.defaultMax() + "), idle ones stop after "
        + limits.idleStopMs() / 1000 + " s");
    for (AgentSpec a : settings.agents()) {
      String cap = a.maxProcesses() == null ? "" : ", at most " + a.maxProcesses() + " of its own";
      if (a.shareProcess() && !a.isBuiltin()) {
        warn("agent " + a.id() + ": one process serves all its threads (\"shareProcess\": true)" + cap
            + "; it can see every thread's workspace");
      } else {
        ok("agent " + a.id() + ": " + (a.shareProcess() ? "one process for all its threads" : "a process per thread")
            + cap);
      }
    }
    // Whatever a gateway on this data directory started carries its owner mark: found even without its token.
    var running = io.switchboard.process.ProcessTree.carrying(io.switchboard.process.ProcessTree.OWNER_VARIABLE,
        io.switchboard.process.ProcessTree.ownerOf(settings.dataDir()));
    long rss = running.stream().mapToLong(p -> io.switchboard.process.ProcessTree.residentBytes(p.pid())).sum();
    ok("running now under this data directory: " + running.size() + " agent and terminal processes, "
        + (rss >> 20) + " MiB resident");
  }

  /** Cluster mode: this node's certificate as the node checks it at start, and where its ports listen. */
  private void cluster(Settings.Cluster cluster) {
    try {
      io.switchboard.cluster.NodeCertificate certificate = io.switchboard.cluster.NodeCertificate.load(
          cluster.tlsDir(), cluster.node(), cluster.host(), java.time.Instant.now());
      ok("cluster certificate of node " + cluster.node() + " at " + cluster.host() + " in " + cluster.tlsDir()
          + " (until " + certificate.certificate().getNotAfter().toInstant() + ")");
      if (certificate.left(java.time.Instant.now()).toDays() < 30) {
        warn("the cluster certificate of node " + cluster.node() + " ends within 30 days: issue a new one and restart "
            + "the node (docs/operations.md, \"Renewing certificates\")");
      }
    } catch (IllegalStateException e) {
      problem(e.getMessage());
    }
    if (!privateAddress(cluster.host())) {
      warn("cluster.host " + cluster.host() + " is not a private address: the membership port " + cluster.port()
          + " and the event bus port " + cluster.busPort() + " listen there, and anyone who reaches the membership "
          + "port can disturb the cluster (not read or answer it: docs/operations.md, \"What a stranger can still "
          + "do\"); keep them on a private network");
    }
  }

  /** Loopback, link-local, RFC 1918, RFC 6598 (100.64/10: WireGuard and Tailscale networks) or IPv6 ULA. */
  static boolean privateAddress(String host) {
    String bare = io.switchboard.cluster.NodeCertificate.unbracketed(host);
    try {
      java.net.InetAddress a = java.net.InetAddress.getByName(bare);
      byte[] b = a.getAddress();
      boolean sharedSpace = b.length == 4 && (b[0] & 0xff) == 100 && (b[1] & 0xc0) == 64;
      boolean uniqueLocal = b.length == 16 && (b[0] & 0xfe) == 0xfc;
      return a.isLoopbackAddress() || a.isLinkLocalAddress() || a.isSiteLocalAddress() || sharedSpace || uniqueLocal;
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  private void warn(String text) {
    out.println("warn  " + text);
  }

  private void check(boolean good, String okText, String problemText) {
    if (good) {
      ok(okText);
    } else {
      problem(problemText);
    }
  }

  private void ok(String text) {
    out.println("ok    " + text);
  }

  private void problem(String text) {
    problems++;
    out.println("FAIL  " + text);
  }
}
