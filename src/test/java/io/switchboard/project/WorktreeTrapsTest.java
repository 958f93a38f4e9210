package io.switchboard.project;

import static io.switchboard.project.ProjectRepoTest.newRepo;
import static io.switchboard.project.ProjectRepoTest.person;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.ProjectSpec;
import io.switchboard.project.Git.GitException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hostile table of a thread's worktree, against the real git: what an agent leaves there for
 * the gateway's own git (Changes, Commit, the checkpoint after each turn, Merge, Keep, Discard).
 *
 * <table>
 * <tr><th>the agent leaves</th><th>the gateway</th></tr>
 * <tr><td>a repository of its own inside the worktree whose config defines a filter its attributes select</td>
 *     <td>never enters it (the filter never runs); shows it as a repository</td></tr>
 * <tr><td>a real submodule's {@code .git} pointed at a gitdir of its own with such a filter</td><td>the same</td></tr>
 * <tr><td>a file of the person's base branch that would overwrite an untracked file of theirs</td>
 *     <td>refuses the merge with base branch, index and checkout byte for byte as they were</td></tr>
 * <tr><td>a merge cut in two whose checkout cannot follow</td><td>undone at the next start, said once</td></tr>
 * <tr><td>names with a right-to-left override, a newline, an ANSI escape</td>
 *     <td>shown with the characters made visible; refused at Commit and Merge</td></tr>
 * <tr><td>a file over the checkpoint limit; more than the thread's checkpoint budget</td>
 *     <td>leaves the file out and says so; adds nothing to the repository past the budget</td></tr>
 * <tr><td>more files than Changes lists</td><td>lists the first, counts them all</td></tr>
 * </table>
 */
class WorktreeTrapsTest {
  @TempDir Path tmp;
  Path repoDir;
  Path worktrees;
  Path marker;
  Path filter;

  @BeforeEach
  void setUp() throws Exception {
    repoDir = newRepo(tmp.resolve("repo"));
    worktrees = tmp.resolve("data/worktrees");
    marker = tmp.resolve("filter-ran");
    filter = tmp.resolve("filter.sh");
    Files.writeString(filter, "#!/bin/sh\ntouch " + marker + "\ncat\n");
    filter.toFile().setExecutable(true);
  }

  private ProjectRepo repo(ProjectRepo.CheckpointLimits limits) {
    return new ProjectRepo(new ProjectSpec("app", "App", repoDir, List.of(), ProjectSpec.Worktrees.PER_THREAD, null,
        null, null, null), worktrees, tmp.resolve("data/tmp/git"), "git", limits);
  }

  private static ProjectRepo.Worktree created(ProjectRepo repo, String threadId) throws Exception {
    JsonObject facts = repo.create(threadId, null);
    return new ProjectRepo.Worktree(threadId, Path.of(facts.getString("workspace")), facts.getString("branch"),
        facts.getString("baseRef"), facts.getString("baseCommit"));
  }

  /** A repository at {@code gitDir} whose config defines the filter and whose info/attributes select it for every file. */
  private void armed(Path gitDir) throws Exception {
    Files.writeString(gitDir.resolve("config"), Files.readString(gitDir.resolve("config"))
        + "[filter \"evil\"]\n\tclean = " + filter + "\n\tsmudge = " + filter + "\n");
    Files.createDirectories(gitDir.resolve("info"));
    Files.writeString(gitDir.resolve("info/attributes"), "* filter=evil\n");
  }

  /** A repository of the agent's own at {@code dir}, one commit of {@code file}, its filter armed. */
  private Path armedRepository(Path dir, String file) throws Exception {
    Files.createDirectories(dir);
    person(dir, "init", "-q", "-b", "main");
    Files.writeString(dir.resolve(file), "one\n");
    person(dir, "add", file);
    person(dir, "commit", "-q", "-m", "inner");
    armed(dir.resolve(".git"));
    return dir;
  }

  /** Changes a file of the nested repository without changing its size or time: only its content tells. */
  private static void sameSizeEdit(Path file, String text) throws Exception {
    java.nio.file.attribute.FileTime t = Files.getLastModifiedTime(file);
    Files.writeString(file, text);
    Files.setLastModifiedTime(file, t);
  }

  /** The filter is live: git that enters the nested repository (as `git status` there does) runs it. */
  private void assertArmed(Path nested) throws Exception {
    new ProcessBuilder("git", "status", "--porcelain").directory(nested.toFile()).redirectErrorStream(true)
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start()
        .waitFor(30, TimeUnit.SECONDS);
    assertTrue(Files.exists(marker), "the planted filter should run in git that enters the nested repository");
    Files.delete(marker);
  }

  @Test
  void aRepositoryTheAgentMadeInsideItsWorktreeIsNeverEntered() throws Exception {
    ProjectRepo repo = repo(ProjectRepo.CheckpointLimits.DEFAULT);
    ProjectRepo.Worktree w = created(repo, "t_nest");
    Path sub = armedRepository(w.dir().resolve("sub"), "f.txt");
    Files.writeString(w.dir().resolve("top.txt"), "top\n");
    sameSizeEdit(sub.resolve("f.txt"), "two\n");
    assertArmed(sub);
    sameSizeEdit(sub.resolve("f.txt"), "six\n");

    assertNotNull(repo.checkpoint(w, 1), "the first turn's checkpoint");
    sameSizeEdit(sub.resolve("f.txt"), "ten\n");
    repo.checkpoint(w, 2);
    JsonObject changes = repo.changes(w);
    JsonObject nested = find(changes.getJsonArray("files"), "sub");
    assertEquals(true, nested.getBoolean("repository"), "shown as a repository: " + changes.encode());
    repo.commit(w, "the agent's work", "web");
    sameSizeEdit(sub.resolve("f.txt"), "one\n");
    repo.checkpoint(w, 3);
    repo.changes(w);
    repo.merge(w, true, "nested", "web", true);
    sameSizeEdit(sub.resolve("f.txt"), "two\n");
    repo.checkpoint(w, 4);
    repo.keep(w, "nested", "web");
    assertFalse(Files.exists(marker), "the nested repository's filter ran in the gateway's git");

    ProjectRepo.Worktree d = created(repo, "t_nest2");
    Path sub2 = armedRepository(d.dir().resolve("inner"), "g.txt");
    repo.checkpoint(d, 1);
    sameSizeEdit(sub2.resolve("g.txt"), "two\n");
    repo.discard(d);
    assertFalse(Files.exists(marker), "the nested repository's filter ran at Discard");
  }

  @Test
  void aSubmodulePointedAtTheAgentsOwnGitdirIsNeverEntered() throws Exception {
    Path lib = newRepo(tmp.resolve("lib"));
    person(repoDir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib.toString(), "lib");
    person(repoDir, "commit", "-q", "-m", "a submodule");
    ProjectRepo repo = repo(ProjectRepo.CheckpointLimits.DEFAULT);
    ProjectRepo.Worktree w = created(repo, "t_sub");
    assertTrue(Files.isRegularFile(w.dir().resolve("lib/README.md")), "the submodule is checked out");
    // The agent's copy of the submodule's repository, armed, and the pointer moved to it.
    Path own = tmp.resolve("agents-gitdir");
    person(tmp, "clone", "-q", "--bare", lib.toString(), own.toString());
    person(own, "config", "core.bare", "false");
    person(own, "config", "core.worktree", w.dir().resolve("lib").toString());
    armed(own);
    Files.writeString(w.dir().resolve("lib/.git"), "gitdir: " + own + "\n");
    person(w.dir().resolve("lib"), "read-tree", "HEAD");
    sameSizeEdit(w.dir().resolve("lib/README.md"), "HELLO\n");
    assertArmed(w.dir().resolve("lib"));
    sameSizeEdit(w.dir().resolve("lib/README.md"), "hallo\n");

    Files.writeString(w.dir().resolve("work.txt"), "work\n");
    repo.checkpoint(w, 1);
    sameSizeEdit(w.dir().resolve("lib/README.md"), "HALLO\n");
    repo.changes(w);
    repo.commit(w, "work", "web");
    sameSizeEdit(w.dir().resolve("lib/README.md"), "hullo\n");
    repo.merge(w, true, "sub", "web");
    sameSizeEdit(w.dir().resolve("lib/README.md"), "HULLO\n");
    repo.checkpoint(w, 2);
    repo.discard(w);
    assertFalse(Files.exists(marker), "the hijacked submodule's filter ran in the gateway's git");
    assertEquals("work\n", Files.readString(repoDir.resolve("work.txt")), "the merge itself went through");
  }

  /** A thread whose worktree committed a todo.txt the person's base branch does not have. */
  private static ProjectRepo.Worktree withCommittedList(ProjectRepo repo, String threadId) throws Exception {
    ProjectRepo.Worktree w = created(repo, threadId);
    Files.writeString(w.dir().resolve("todo.txt"), "the agent's list\n");
    repo.commit(w, "a list", "web");
    return w;
  }

  /** Everything a refused merge must leave as it was: the branch, the person's index and files. */
  private record Snapshot(String main, byte[] index, List<String> files, String intent) {}

  private Snapshot snapshot() throws Exception {
    List<String> files = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(repoDir)) {
      for (Path p : walk.filter(p -> !p.startsWith(repoDir.resolve(".git")) && Files.isRegularFile(p)).sorted().toList()) {
        files.add(repoDir.relativize(p) + "=" + Files.readString(p));
      }
    }
    Path intent = worktrees.resolve("app/.merge-intent.json");
    return new Snapshot(person(repoDir, "rev-parse", "main"), Files.readAllBytes(repoDir.resolve(".git/index")), files,
        Files.exists(intent) ? Files.readString(intent) : null);
  }

  private static void assertUnchanged(Snapshot before, Snapshot after) {
    assertEquals(before.main(), after.main(), "the base branch moved");
    assertArrayEquals(before.index(), after.index(), "the person's index changed");
    assertEquals(before.files(), after.files(), "the person's files changed");
    assertEquals(null, after.intent(), "a merge intent was left behind");
  }

  @Test
  void aMergeRefusedForEachReasonLeavesBranchIndexAndCheckoutAsTheyWere() throws Exception {
    ProjectRepo repo = repo(ProjectRepo.CheckpointLimits.DEFAULT);
    ProjectRepo.Worktree w = withCommittedList(repo, "t_m");
    // 1. An untracked file of the person's where the merge would write.
    Files.writeString(repoDir.resolve("todo.txt"), "my own list, not committed\n");
    Snapshot before = snapshot();
    GitException inTheWay = assertThrows(GitException.class, () -> repo.merge(w, true, "t", "web"));
    assertTrue(inTheWay.getMessage().contains("todo.txt") && inTheWay.getMessage().contains("nothing was merged"),
        inTheWay.getMessage());
    assertUnchanged(before, snapshot());
    Files.delete(repoDir.resolve("todo.txt"));
    // 2. A change of the person's not committed.
    Files.writeString(repoDir.resolve("README.md"), "hello, edited\n");
    before = snapshot();
    assertThrows(GitException.class, () -> repo.merge(w, true, "t", "web"));
    assertUnchanged(before, snapshot());
    person(repoDir, "checkout", "-q", "README.md");
    // 3. A name that lies.
    Files.writeString(w.dir().resolve("readme\u202Ehs.txt"), "x\n");
    before = snapshot();
    GitException lying = assertThrows(GitException.class, () -> repo.merge(w, true, "t", "web", true));
    assertTrue(lying.getMessage().contains("readme<U+202E>hs.txt"), lying.getMessage());
    assertUnchanged(before, snapshot());
    Files.delete(w.dir().resolve("readme\u202Ehs.txt"));
    // 4. A conflict.
    Files.writeString(w.dir().resolve("README.md"), "the agent's\n");
    repo.commit(w, "readme", "web");
    Files.writeString(repoDir.resolve("README.md"), "the person's\n");
    person(repoDir, "commit", "-q", "-am", "mine");
    before = snapshot();
    assertThrows(GitException.class, () -> repo.merge(w, true, "t", "web"));
    assertUnchanged(before, snapshot());
  }

  @Test
  void aMergeAStopCutInTwoIsFinishedOrUndoneAtStartAndSaidOnce() throws Exception {
    ProjectRepo repo = repo(ProjectRepo.CheckpointLimits.DEFAULT);
    ProjectRepo.Worktree w = withCommittedList(repo, "t_cut");
    String from = person(repoDir, "rev-parse", "main");
    String to = person(w.dir(), "rev-parse", "HEAD");
    // As a gateway killed between moving the branch and the checkout would leave it, with a file in the way.
    Files.createDirectories(worktrees.resolve("app"));
    Files.writeString(worktrees.resolve("app/.merge-intent.json"), new JsonObject().put("base", "main")
        .put("from", from).put("to", to).put("checkedOut", true).encode());
    person(repoDir, "update-ref", "refs/heads/main", to, from);
    Files.writeString(repoDir.resolve("todo.txt"), "mine\n");
    List<String> said = repo.reconcile(List.of(w));
    assertTrue(said.get(0).startsWith("undid a merge into main"), said.toString());
    assertEquals(from, person(repoDir, "rev-parse", "main"));
    assertEquals("mine\n", Files.readString(repoDir.resolve("todo.txt")));
    assertEquals(List.of(), repo.reconcile(List.of(w)), "said once, not at every start");
    // Without the file in the way, the same cut merge is finished.
    Files.delete(repoDir.resolve("todo.txt"));
    Files.writeString(worktrees.resolve("app/.merge-intent.json"), new JsonObject().put("base", "main")
        .put("from", from).put("to", to).put("checkedOut", true).encode());
    person(repoDir, "update-ref", "refs/heads/main", to, from);
    assertTrue(repo.reconcile(List.of(w)).get(0).startsWith("finished the merge"));
    assertEquals("the agent's list\n", Files.readString(repoDir.resolve("todo.txt")));
  }

  @Test
  void namesThatLieAreShownVisibleAndRefusedAtCommit() throws Exception {
    ProjectRepo repo = repo(ProjectRepo.CheckpointLimits.DEFAULT);
    ProjectRepo.Worktree w = created(repo, "t_names");
    Files.writeString(w.dir().resolve("readme\u202Ehs.txt"), "x\n");
    Files.writeString(w.dir().resolve("two\nlines.txt"), "x\n");
    Files.writeString(w.dir().resolve("red\u001B[31m.txt"), "x\n");
    Files.writeString(w.dir().resolve("plain.txt"), "x\n");
    JsonArray files = repo.changes(w).getJsonArray("files");
    assertEquals("readme<U+202E>hs.txt", find(files, "readme\u202Ehs.txt").getString("label"));
    assertEquals("two<U+000A>lines.txt", find(files, "two\nlines.txt").getString("label"));
    assertEquals("red<U+001B>[31m.txt", find(files, "red\u001B[31m.txt").getString("label"));
    assertEquals(null, find(files, "plain.txt").getString("label"), "a plain name needs no label");
    String head = person(w.dir(), "rev-parse", "HEAD");
    GitException refused = assertThrows(GitException.class, () -> repo.commit(w, "names", "web"));
    assertTrue(refused.getMessage().contains("control or direction character"), refused.getMessage());
    assertEquals(head, person(w.dir(), "rev-parse", "HEAD"));
    assertEquals("", person(w.dir(), "diff", "--cached", "--name-only"), "nothing was staged");
  }

  @Test
  void checkpointsLeaveOutBigFilesAndStopAtTheirBudgetWithoutGrowingTheRepository() throws Exception {
    ProjectRepo repo = repo(new ProjectRepo.CheckpointLimits(64 << 10, 300 << 10));
    ProjectRepo.Worktree w = created(repo, "t_big");
    byte[] big = new byte[200 << 10];
    new java.util.Random(1).nextBytes(big);
    Files.write(w.dir().resolve("big.bin"), big);
    Files.writeString(w.dir().resolve("small.txt"), "small\n");
    JsonObject first = repo.checkpoint(w, 1);
    assertNotNull(first.getString("checkpoint"), first.encode());
    assertEquals(new JsonArray().add("big.bin"), first.getJsonArray("skipped"));
    assertTrue(first.getString("note").contains("big.bin"), first.encode());
    assertEquals("small", person(repoDir, "show", "refs/switchboard/checkpoints/t_big:small.txt"));
    // Files under the limit, turn after turn, until the budget: then nothing more lands in .git.
    long grown = 0;
    JsonObject last = null;
    for (int turn = 2; turn < 20; turn++) {
      byte[] chunk = new byte[60 << 10];
      new java.util.Random(turn).nextBytes(chunk);
      Files.write(w.dir().resolve("part" + turn + ".bin"), chunk);
      long before = size(repoDir.resolve(".git/objects"));
      last = repo.checkpoint(w, turn);
      grown = size(repoDir.resolve(".git/objects")) - before;
      if (last.getBoolean("budgetReached", false)) {
        break;
      }
    }
    assertNotNull(last);
    assertTrue(last.getBoolean("budgetReached", false), "the budget was never reached: " + last.encode());
    assertEquals(0, grown, "a checkpoint past the budget added to the repository");
    assertTrue(last.getString("note").contains("budget"), last.encode());
    assertTrue(size(repoDir.resolve(".git/objects")) < (700 << 10), "the repository grew past the budget");
    repo.discard(w);
    assertEquals("", person(repoDir, "for-each-ref", "refs/switchboard/checkpoints/"), "Discard drops the checkpoints");
  }

  @Test
  void changesListTheFirstFilesAndCountThemAll() throws Exception {
    ProjectRepo repo = repo(ProjectRepo.CheckpointLimits.DEFAULT);
    ProjectRepo.Worktree w = created(repo, "t_many");
    int n = ProjectRepo.MAX_LISTED_FILES + 500;
    Files.createDirectories(w.dir().resolve("many"));
    for (int i = 0; i < n; i++) {
      Files.writeString(w.dir().resolve("many/f" + i + ".txt"), "x\n");
    }
    long objects = size(repoDir.resolve(".git/objects"));
    JsonObject changes = repo.changes(w);
    assertEquals(objects, size(repoDir.resolve(".git/objects")), "reading the changes wrote into the person's .git");
    assertEquals(ProjectRepo.MAX_LISTED_FILES, changes.getJsonArray("files").size());
    assertEquals(n, changes.getInteger("filesTotal"));
    assertEquals(500, changes.getInteger("filesOmitted"));
    assertEquals(n, changes.getInteger("uncommitted"));
  }

  private static JsonObject find(JsonArray files, String path) {
    for (Object o : files) {
      if (path.equals(((JsonObject) o).getString("path"))) {
        return (JsonObject) o;
      }
    }
    throw new AssertionError(path + " is not among " + files.encode());
  }

  private static long size(Path dir) throws Exception {
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
    }
  }
}
