package io.switchboard.faults;

import static io.switchboard.testkit.PersonGit.git;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.SeededRuns;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The gateway (the real jar) SIGKILLed while it makes, merges and discards worktrees, at seeded
 * points, with a real repository and the demo agent editing in each thread's worktree. After every
 * run: {@code git fsck} is clean, {@code git worktree list} holds exactly the worktrees of the
 * threads that have one, the person's checkout is clean (a merge cut in two was finished), and every
 * commit the gateway reported done is there — a merge's on the base branch, a kept branch in the repository. Seeds are printed;
 * {@code -Dworktree.fault.seed=N} replays one, {@code -Dworktree.fault.runs=N} sets how many (1 in CI).
 */
class WorktreeFaultIT extends JarFaultSuite {
  Path repo;
  ChatClient web;
  /** Thread id -> whether the gateway said its worktree was discarded. */
  final Map<String, Boolean> threads = new LinkedHashMap<>();
  final Set<String> reportedCommits = new HashSet<>();
  final Set<String> reportedMerges = new HashSet<>();
  /** Branches a Keep reported done: they stay in the repository. */
  final Set<String> keptBranches = new HashSet<>();
  final Map<String, Integer> faults = new TreeMap<>();
  /** Cards answered (a re-attach shows them again), and the threads this socket attached to. */
  final Set<String> answered = new HashSet<>();
  final Set<String> attached = new HashSet<>();
  int refs;

  @Test
  void seededKillsDuringWorktreeWorkLeaveTheRepositoryConsistent() throws Exception {
    SeededRuns.play("worktree fault", "worktree.fault.seed", "worktree.fault.runs", 1, this::run, () -> log);
    System.out.println("worktree faults injected: " + faults);
  }

  private void run(long seed) throws Exception {
    Random random = new Random(seed);
    dir = Files.createTempDirectory("sb-worktree-fault-" + seed);
    repo = Files.createDirectories(dir.resolve("repo"));
    git(repo, "init", "-q", "-b", "main");
    Files.writeString(repo.resolve("README.md"), "hello\n");
    git(repo, "add", "README.md");
    git(repo, "commit", "-q", "-m", "first");
    token = null;
    log.clear();
    threads.clear();
    reportedCommits.clear();
    reportedMerges.clear();
    keptBranches.clear();
    JsonObject config = new JsonObject().put("http", new JsonObject().put("port", 0))
        .put("dataDir", dir.resolve("data").toString())
        .put("agents", new JsonArray().add(new JsonObject().put("id", "demo").put("builtin", "demo")
            .put("env", new JsonObject().put("DEMO_AGENT_DELAY_MS", "3"))))
        .put("projects", new JsonArray().add(new JsonObject().put("id", "app").put("path", repo.toString())))
        .put("defaultProject", "app");
    Files.writeString(dir.resolve("switchboard.json"), config.encode());
    start();
    int steps = 6 + random.nextInt(6);
    for (int step = 0; step < steps; step++) {
      List<String> active = threads.entrySet().stream().filter(e -> !e.getValue()).map(Map.Entry::getKey).toList();
      int action = random.nextInt(100);
      boolean kill = random.nextInt(100) < 40;
      long killAfterMs = random.nextInt(kill ? 400 : 1);
      if (action < 30 || active.isEmpty()) {
        step("create", kill, killAfterMs, new JsonObject().put("type", "new_thread"), random);
      } else {
        String t = active.get(random.nextInt(active.size()));
        if (action < 42) {
          log.add("note in " + t);
          note(t, "note " + step);
        } else if (action < 76) {
          note(t, "before merge " + step);
          step("commit+merge", kill, killAfterMs, new JsonObject().put("type", "merge").put("threadId", t), random);
        } else if (action < 88) {
          step("discard", kill, killAfterMs, new JsonObject().put("type", "discard").put("threadId", t), random);
        } else {
          step("keep", kill, killAfterMs, new JsonObject().put("type", "keep").put("threadId", t), random);
        }
      }
    }
    gateway.destroy();
    assertTrue(gateway.waitFor(60, TimeUnit.SECONDS) && gateway.exitValue() == 0, "a clean stop");
    // The next start reconciles what the last kill left; then the repository is checked.
    start();
    Thread.sleep(1_500);
    gateway.destroy();
    gateway.waitFor(60, TimeUnit.SECONDS);
    web.close();
    check();
    System.out.println("  passed: " + log);
  }

  /** Sends an action, possibly SIGKILLs the gateway a seeded time after, and restarts it. */
  private void step(String what, boolean kill, long afterMs, JsonObject frame, Random random) throws Exception {
    String ref = "r" + (++refs);
    if (what.equals("commit+merge")) {
      // A commit first (reported done only when its reply comes), then the merge that may be cut.
      JsonObject committed = ask(new JsonObject().put("type", "commit").put("threadId", frame.getString("threadId"))
          .put("message", "work " + ref), ref + "c", 60);
      if ("project_action".equals(committed.getString("type"))) {
        reportedCommits.add(committed.getJsonObject("result").getString("commit"));
      }
    }
    web.ws.writeTextMessage(frame.put("clientRef", ref).encode());
    if (kill) {
      Thread.sleep(afterMs);
      log.add(what + " killed after " + afterMs + " ms");
      faults.merge("kill -9 during " + what, 1, Integer::sum);
      gateway.destroyForcibly();
      gateway.waitFor(20, TimeUnit.SECONDS);
      web.close();
      // A reply that made it out before the kill counts as reported.
      web.seen.stream().filter(f -> ref.equals(f.getValue("clientRef"))).findFirst().ifPresent(this::heard);
      start();
      return;
    }
    log.add(what);
    heard(web.next(f -> ref.equals(f.getValue("clientRef")), what, 120));
  }

  private void heard(JsonObject reply) {
    String type = reply.getString("type");
    if ("thread".equals(type)) {
      threads.put(reply.getString("threadId"), false);
    } else if ("project_action".equals(type)) {
      JsonObject result = reply.getJsonObject("result");
      switch (reply.getString("action")) {
        case "merge" -> reportedMerges.add(result.getString("commit"));
        case "discard" -> threads.put(reply.getString("threadId"), true);
        case "keep" -> {
          threads.put(reply.getString("threadId"), true);
          keptBranches.add(result.getString("branch"));
        }
        default -> reportedCommits.add(result.getString("commit"));
      }
    }
  }

  private JsonObject ask(JsonObject frame, String ref, long seconds) {
    web.ws.writeTextMessage(frame.put("clientRef", ref).encode());
    return web.next(f -> ref.equals(f.getValue("clientRef")), ref, seconds);
  }

  /** A demo turn that writes a note in the thread's worktree, its card allowed. */
  private void note(String threadId, String text) {
    if (attached.add(threadId)) {
      web.send(new JsonObject().put("type", "attach").put("threadId", threadId));
      web.next(f -> "turn".equals(f.getString("type")) && threadId.equals(f.getString("threadId"))
          && f.getBoolean("attached", false), "attached", 60);
    }
    web.send(new JsonObject().put("type", "prompt").put("threadId", threadId).put("text", text));
    JsonObject card = web.next(f -> "permission_request".equals(f.getString("type"))
        && threadId.equals(f.getString("threadId")) && answered.add(f.getString("requestId")), "the card", 60);
    web.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
        .put("optionId", "allow-once"));
    web.next(f -> "turn".equals(f.getString("type")) && threadId.equals(f.getString("threadId"))
        && !f.getBoolean("busy", true), "the turn's end", 60); // frames are read in order: this one follows the card
  }

  private void start() throws Exception {
    JarGateway started = JarGateway.start(dir, dir.resolve("switchboard.json"));
    gateway = started.process();
    port = started.port();
    if (token == null) {
      token = started.token();
    }
    web = ChatClient.open(vertx, port, token);
    attached.clear();
    JsonObject welcome = web.next("welcome");
    // What the gateway knows now is the truth: a thread whose create was cut before it was saved is not one.
    Map<String, Boolean> known = new LinkedHashMap<>();
    for (Object o : welcome.getJsonArray("threads")) {
      JsonObject t = (JsonObject) o;
      known.put(t.getString("threadId"), t.getString("worktree") != null && !"active".equals(t.getString("worktree")));
    }
    threads.clear();
    threads.putAll(known);
  }

  private void check() throws Exception {
    git(repo, "fsck", "--no-dangling", "--no-progress");
    Path worktrees = dir.resolve("data").resolve("worktrees").resolve("app").toRealPath().getParent().resolve("app");
    Set<String> listed = git(repo, "worktree", "list", "--porcelain").lines()
        .filter(l -> l.startsWith("worktree ")).map(l -> Path.of(l.substring("worktree ".length())))
        .filter(p -> p.startsWith(worktrees)).map(p -> p.getFileName().toString()).collect(Collectors.toSet());
    Set<String> expected = threads.entrySet().stream().filter(e -> !e.getValue()).map(Map.Entry::getKey)
        .collect(Collectors.toSet());
    assertEquals(expected, listed, "git worktree list matches the threads that have a worktree");
    try (var folders = Files.list(worktrees)) {
      assertEquals(expected, folders.map(p -> p.getFileName().toString()).filter(n -> !n.startsWith("."))
          .collect(Collectors.toSet()), "no folder without its thread");
    }
    assertFalse(Files.exists(worktrees.resolve(".merge-intent.json")), "a cut merge was finished");
    assertEquals("", git(repo, "status", "--porcelain", "--untracked-files=no"),
        "the person's checkout matches its branch");
    for (String commit : reportedCommits) {
      git(repo, "cat-file", "-e", commit + "^{commit}");
    }
    for (String branch : keptBranches) {
      git(repo, "rev-parse", "--verify", "refs/heads/" + branch);
    }
    for (String merge : reportedMerges) {
      git(repo, "merge-base", "--is-ancestor", merge, "main");
    }
  }
}
