package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.Settings;
import io.switchboard.config.SettingsLoader;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code doctor}'s line per configured project. */
class DoctorTest {
  @TempDir
  Path dir;

  private record Report(int problems, String out) {}

  private Report doctor(Settings settings, String git) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    int problems = new Doctor(settings, out, git).run();
    return new Report(problems, bytes.toString(StandardCharsets.UTF_8));
  }

  private static void git(Path where, String... args) throws Exception {
    List<String> argv = new ArrayList<>(List.of("git", "-C", where.toString(), "-c", "user.name=Test",
        "-c", "user.email=test@example.org", "-c", "commit.gpgsign=false"));
    argv.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
    pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
    pb.environment().put("GIT_CONFIG_GLOBAL", "/dev/null");
    Process process = pb.start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(process.waitFor(30, TimeUnit.SECONDS), "git " + args[0] + " hangs");
    assertEquals(0, process.exitValue(), "git " + String.join(" ", args) + ": " + out);
  }

  /** A repository on branch {@code branch} with one commit. */
  private Path repository(String name, String branch) throws Exception {
    Path repo = Files.createDirectories(dir.resolve(name));
    git(repo, "init", "-q", "-b", branch);
    git(repo, "commit", "-q", "--allow-empty", "-m", "first");
    return repo;
  }

  private Settings settings(JsonArray projects) throws Exception {
    return SettingsLoader.parse(SettingsLoader.defaults().put("dataDir", dir.resolve("data").toString())
        .put("http", new JsonObject().put("host", "127.0.0.1").put("port", 0).put("allowedOrigins", new JsonArray())
            .put("publicMetrics", false))
        .put("projects", projects));
  }

  private static JsonObject project(String id, Path path) {
    return new JsonObject().put("id", id).put("path", path.toString());
  }

  /** Agents whose own settings or flags let them skip asking are named: the gateway never sees those calls. */
  @Test
  void agentsThatMaySkipAskingAreWarnedOf() throws Exception {
    Path home = Files.createDirectories(dir.resolve("home"));
    Files.createDirectories(home.resolve(".claude"));
    Files.writeString(home.resolve(".claude/settings.json"), new JsonObject().put("permissions", new JsonObject()
        .put("allow", new JsonArray().add("Bash(*)").add("Bash(git diff:*)").add("Read"))).encode());
    Files.createDirectories(home.resolve(".codex"));
    Files.writeString(home.resolve(".codex/config.toml"), "model = \"o4\"\napproval_policy = \"never\"\n");
    Path careful = Files.createDirectories(dir.resolve("careful-home"));
    Path geminiHome = Files.createDirectories(dir.resolve("gemini-cli-home/.gemini"));
    Files.writeString(geminiHome.resolve("settings.json"), new JsonObject().put("approvalMode", "yolo").encode());
    JsonObject tree = SettingsLoader.defaults().put("dataDir", dir.resolve("data").toString());
    tree.getJsonArray("agents")
        .add(new JsonObject().put("id", "claude").put("command", new JsonArray().add("true"))
            .put("env", new JsonObject().put("HOME", home.toString())))
        .add(new JsonObject().put("id", "gemini").put("command", new JsonArray().add("true").add("--yolo"))
            .put("env", new JsonObject().put("HOME", careful.toString())))
        .add(new JsonObject().put("id", "careful").put("command", new JsonArray().add("true"))
            .put("env", new JsonObject().put("HOME", careful.toString())))
        .add(new JsonObject().put("id", "gemini-home").put("command", new JsonArray().add("true"))
            .put("env", new JsonObject().put("HOME", careful.toString()).put("GEMINI_CLI_HOME",
                geminiHome.getParent().toString())));
    Report report = doctor(SettingsLoader.parse(tree), "git");
    assertTrue(report.out().contains("agent claude may skip asking: " + home.resolve(".claude/settings.json")
        + " allows Bash(*) without asking (Claude Code)"), report.out());
    assertTrue(report.out().contains("agent claude may skip asking: " + home.resolve(".codex/config.toml")
        + " sets approval_policy = \"never\" (Codex)"), report.out());
    assertTrue(report.out().contains("agent gemini may skip asking: its command has --yolo"), report.out());
    assertTrue(report.out().contains("agent gemini-home may skip asking: " + geminiHome.resolve("settings.json")
        + " turns on auto-accept or yolo mode"), "GEMINI_CLI_HOME's settings are read: " + report.out());
    assertTrue(!report.out().contains("agent careful may skip"), "nothing to say of a careful agent: " + report.out());
    assertTrue(!report.out().contains("Bash(git diff:*)"), "a narrow allow is not a warning: " + report.out());
  }

  /** Each sandboxed agent's line says what it may write; an unconfined one has none. */
  @Test
  void eachSandboxedAgentsWritablePlacesAreListed() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(io.switchboard.process.Sandbox.probe() == null,
        "bubblewrap runs here (scripts/test.sh installs it)");
    Path home = dir.resolve("home");
    Path data = dir.resolve("data");
    JsonObject tree = SettingsLoader.defaults().put("dataDir", data.toString());
    tree.getJsonArray("agents")
        .add(new JsonObject().put("id", "claude").put("command", new JsonArray().add("npx").add("-y")
                .add("@zed-industries/claude-agent-acp"))
            .put("env", new JsonObject().put("HOME", home.toString()))
            .put("writable", new JsonArray().add(dir.resolve("cache").toString())))
        .add(new JsonObject().put("id", "open").put("command", new JsonArray().add("true")).put("sandbox", "none"));
    Report report = doctor(SettingsLoader.parse(tree), "git");
    String line = report.out().lines().filter(l -> l.contains("agent claude may write")).findFirst().orElseThrow();
    assertTrue(line.contains("agent claude may write its workspace; its temporary folder "
        + data.resolve("sandbox/<thread>/tmp") + " (TMPDIR); its state " + home.resolve(".npm") + ", "
        + home.resolve(".claude") + ", "), line);
    // (Its other folders may follow the test's own XDG_CACHE_HOME or CLAUDE_CONFIG_DIR.)
    assertTrue(line.endsWith(home.resolve(".claude.json") + "; agents[].writable " + dir.resolve("cache")
        + "; the rest of the machine is read-only to it (the data directory hidden)"), line);
    assertTrue(report.out().contains("agent demo may write its workspace; its temporary folder "
        + data.resolve("sandbox/shared-demo/tmp") + " (TMPDIR)"), "the demo agent shares one process: " + report.out());
    assertTrue(!report.out().contains("agent open may write"), report.out());
    assertTrue(!Files.exists(home), "doctor makes nothing: " + home);
  }

  @Test
  void eachProjectHasALineWithItsBranchModeAndUncommittedChanges() throws Exception {
    Path web = repository("web", "trunk");
    Files.writeString(web.resolve("new.txt"), "untracked");
    Files.writeString(web.resolve("other.txt"), "untracked");
    Path api = repository("api", "main");
    git(api, "checkout", "-q", "--detach");
    Path notes = Files.createDirectories(dir.resolve("notes"));
    Settings settings = settings(new JsonArray().add(project("web", web)).add(project("api", api)
        .put("worktrees", "shared")).add(project("notes", notes)));

    Report report = doctor(settings, "git");
    assertTrue(report.out().contains("ok    project web: " + web.toRealPath()
        + " (git, branch trunk, perThread worktrees, 2 uncommitted changes)\n"), report.out());
    assertTrue(report.out().contains("ok    project api: " + api.toRealPath()
        + " (git, detached HEAD, shared, 0 uncommitted changes)\n"), report.out());
    assertTrue(report.out().contains("ok    project notes: " + notes.toRealPath() + " (not git, shared)\n"),
        report.out());
    assertEquals(0, report.problems(), report.out());
  }

  @Test
  void aVanishedDirectoryAMissingGitAndAnEmptyRepositoryAreProblems() throws Exception {
    Path web = repository("web", "main");
    Path gone = Files.createDirectories(dir.resolve("gone"));
    Path fresh = Files.createDirectories(dir.resolve("fresh"));
    git(fresh, "init", "-q", "-b", "main");
    Path scratch = Files.createDirectories(dir.resolve("scratch"));
    git(scratch, "init", "-q", "-b", "dev");
    Path unmade = repository("unmade", "main");
    Settings settings = settings(new JsonArray().add(project("web", web)).add(project("gone", gone))
        .add(project("fresh", fresh)).add(project("scratch", scratch).put("worktrees", "shared"))
        .add(project("unmade", unmade)));
    Files.delete(gone);
    try (var walk = Files.walk(unmade.resolve(".git"))) {
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }

    Report report = doctor(settings, "git");
    assertTrue(report.out().contains("FAIL  project gone: " + dir.toRealPath().resolve("gone")
        + " does not exist any more"), report.out());
    assertTrue(report.out().contains("FAIL  project fresh: " + fresh.toRealPath()
        + " (git, branch main, no commits yet, perThread worktrees): a thread's worktree starts from a commit"),
        report.out());
    assertTrue(report.out().contains("ok    project scratch: " + scratch.toRealPath()
        + " (git, branch dev, no commits yet, shared, 0 uncommitted changes)\n"), report.out());
    assertTrue(report.out().contains("ok    project web: " + web.toRealPath()
        + " (git, branch main, perThread worktrees, 0 uncommitted changes)\n"), report.out());
    assertTrue(report.out().contains("FAIL  project unmade: " + unmade.toRealPath() + " has no .git any more, but "
        + "its threads get git worktrees"), report.out());
    assertEquals(3, report.problems(), report.out());

    Report noGit = doctor(settings, dir.resolve("no-such-git").toString());
    assertTrue(noGit.out().contains("FAIL  project web: " + web.toRealPath() + " is a git repository but git is "
        + "not installed"), noGit.out());
    // web, fresh and scratch need git; gone and unmade are as before.
    assertEquals(5, noGit.problems(), noGit.out());
  }

  @Test
  void aClusterNodesCertificateAndWhereItsPortsListenAreChecked() throws Exception {
    JsonObject tree = SettingsLoader.defaults().put("dataDir", dir.resolve("data").toString())
        .put("http", new JsonObject().put("host", "127.0.0.1").put("port", 0).put("allowedOrigins", new JsonArray())
            .put("publicMetrics", false));
    Settings exposed = SettingsLoader.parse(tree.copy().put("cluster", new JsonObject().put("node", "build-1")
        .put("role", "agent").put("host", "8.8.8.8").put("members", new JsonArray().add("8.8.8.8:5701"))));
    Report bare = doctor(exposed, "git");
    assertTrue(bare.out().contains("cluster-tls/ca.crt is missing"), bare.out());
    assertTrue(bare.out().contains("cluster.host 8.8.8.8 is not a private address"), bare.out());

    java.time.Instant now = java.time.Instant.now();
    io.switchboard.cluster.ClusterAuthority.create(dir.resolve("ca"), now);
    io.switchboard.cluster.ClusterAuthority.issue(dir.resolve("ca"), "build-1", "10.0.0.6",
        dir.resolve("data").resolve("cluster-tls"), 30, now);
    Settings inside = SettingsLoader.parse(tree.copy().put("cluster", new JsonObject().put("node", "build-1")
        .put("role", "agent").put("host", "10.0.0.6").put("members", new JsonArray().add("10.0.0.6:5701"))));
    Report good = doctor(inside, "git");
    assertTrue(good.out().contains("cluster certificate of node build-1 at 10.0.0.6"), good.out());
    assertTrue(!good.out().contains("not a private address"), good.out());
    for (String host : List.of("127.0.0.1", "192.168.1.4", "172.16.0.1", "100.100.1.2", "fd00::5", "[fe80::1]")) {
      assertTrue(Doctor.privateAddress(host), host);
    }
    for (String host : List.of("8.8.8.8", "100.128.0.1", "2001:db8::1", "172.32.0.1")) {
      assertTrue(!Doctor.privateAddress(host), host);
    }
  }
}
