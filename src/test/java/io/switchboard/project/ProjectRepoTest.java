package io.switchboard.project;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.ProjectSpec;
import io.switchboard.project.Git.GitException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A project's worktrees against a real repository and the real git program. */
class ProjectRepoTest {
  @TempDir Path tmp;
  Path repoDir;
  Path worktrees;
  ProjectRepo repo;

  /** Runs git as a person would in their own checkout (their config, no hardening). */
  static String person(Path dir, String... args) throws Exception {
    List<String> argv = new java.util.ArrayList<>(List.of("git", "-c", "user.name=P", "-c", "user.email=p@x"));
    argv.addAll(List.of(args));
    Process p = new ProcessBuilder(argv).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    if (p.exitValue() != 0) {
      throw new AssertionError("git " + String.join(" ", args) + " failed: " + out);
    }
    return out.strip();
  }

  static Path newRepo(Path dir) throws Exception {
    Files.createDirectories(dir);
    person(dir, "init", "-q", "-b", "main");
    Files.writeString(dir.resolve("README.md"), "hello\n");
    Files.writeString(dir.resolve(".env"), "SECRET=1\n");
    Files.writeString(dir.resolve(".gitignore"), ".env\n");
    person(dir, "add", "README.md", ".gitignore");
    person(dir, "commit", "-q", "-m", "first");
    return dir;
  }

  @BeforeEach
  void setUp() throws Exception {
    repoDir = newRepo(tmp.resolve("repo"));
    worktrees = tmp.resolve("data/worktrees");
    repo = new ProjectRepo(new ProjectSpec("app", "App", repoDir, List.of(), ProjectSpec.Worktrees.PER_THREAD, null,
        null, List.of(".env"), List.of("sh", "-c", "echo set up in $(pwd)")), worktrees, tmp.resolve("data/tmp/git"), "git");
  }

  private ProjectRepo.Worktree created(String threadId, String branch) throws Exception {
    JsonObject facts = repo.create(threadId, branch);
    return new ProjectRepo.Worktree(threadId, Path.of(facts.getString("workspace")), facts.getString("branch"),
        facts.getString("baseRef"), facts.getString("baseCommit"));
  }

  @Test
  void aThreadGetsItsOwnWorktreeOnItsOwnBranchWithItsFilesCopiedAndSetUp() throws Exception {
    JsonObject facts = repo.create("t_abcdefghijk", null);
    Path dir = Path.of(facts.getString("workspace"));
    assertEquals(worktrees.resolve("app").resolve("t_abcdefghijk"), dir);
    assertEquals("switchboard/abcdefgh", facts.getString("branch"));
    assertEquals("main", facts.getString("baseRef"));
    assertEquals(person(repoDir, "rev-parse", "main"), facts.getString("baseCommit"));
    assertEquals("hello\n", Files.readString(dir.resolve("README.md")));
    assertEquals("SECRET=1\n", Files.readString(dir.resolve(".env")));
    assertEquals(0, facts.getJsonObject("setup").getInteger("exit"));
    assertTrue(facts.getJsonObject("setup").getString("output").contains("set up in " + dir.toRealPath()),
        facts.encode());
    assertEquals("switchboard/abcdefgh", person(dir, "rev-parse", "--abbrev-ref", "HEAD"));
    assertTrue(person(repoDir, "worktree", "list").contains(dir.toString()));
  }

  @Test
  void aTakenBranchADetachedHeadAndAMissingBaseAreRefusedWithNothingMade() throws Exception {
    person(repoDir, "branch", "taken");
    GitException taken = assertThrows(GitException.class, () -> repo.create("t_1", "taken"));
    assertTrue(taken.getMessage().contains("the branch taken already exists"), taken.getMessage());
    GitException bad = assertThrows(GitException.class, () -> repo.create("t_1", "no..dots"));
    assertTrue(bad.getMessage().contains("not a valid branch name"), bad.getMessage());
    person(repoDir, "checkout", "-q", "--detach");
    GitException detached = assertThrows(GitException.class, () -> repo.create("t_1", null));
    assertTrue(detached.getMessage().contains("detached HEAD"), detached.getMessage());
    assertFalse(Files.exists(worktrees.resolve("app/t_1")));
    ProjectRepo missing = new ProjectRepo(new ProjectSpec("app", "App", repoDir, List.of(),
        ProjectSpec.Worktrees.PER_THREAD, "nope", null, null, null), worktrees, tmp.resolve("data/tmp/git"), "git");
    GitException noBase = assertThrows(GitException.class, () -> missing.create("t_1", null));
    assertTrue(noBase.getMessage().contains("base branch nope"), noBase.getMessage());
    assertEquals(1, person(repoDir, "worktree", "list").lines().count());
  }

  @Test
  void changesShowCommittedAndUntrackedWorkWithoutTouchingTheThreadsIndex() throws Exception {
    ProjectRepo.Worktree w = created("t_one", null);
    Files.writeString(w.dir().resolve("README.md"), "hello\nworld\n");
    Files.writeString(w.dir().resolve("new.txt"), "a\nb\n");
    Path index = repo.layout().adminDir("t_one").resolve("index");
    byte[] before = Files.readAllBytes(index);
    JsonObject changes = repo.changes(w);
    assertEquals(before.length, Files.readAllBytes(index).length);
    assertEquals(2, changes.getJsonArray("files").size(), changes.encode());
    JsonObject readme = changes.getJsonArray("files").getJsonObject(1);
    assertEquals("README.md".equals(readme.getString("path")) ? 1 : 2, readme.getInteger("added"));
    assertTrue(changes.getString("patch").contains("+world"));
    assertTrue(changes.getString("patch").contains("+++ b/new.txt"));
    assertEquals(2, changes.getInteger("uncommitted"));
    assertEquals(0, changes.getInteger("ahead"));
    assertEquals("?? new.txt", person(w.dir(), "status", "--porcelain").lines().filter(l -> l.contains("new"))
        .findFirst().orElseThrow());
  }

  @Test
  void aCommitThenASquashMergeMovesTheBaseAndTheCheckedOutFilesOnlyByThePersonsMerge() throws Exception {
    ProjectRepo.Worktree w = created("t_one", null);
    Files.writeString(w.dir().resolve("feature.txt"), "done\n");
    String sha = repo.commit(w, "Add the feature", "web").getString("commit");
    assertEquals(sha, person(w.dir(), "rev-parse", "HEAD"));
    assertEquals(person(repoDir, "rev-parse", "HEAD~0"), w.baseCommit(), "a commit never moves the base");
    GitException nothing = assertThrows(GitException.class, () -> repo.commit(w, "again", "web"));
    assertTrue(nothing.getMessage().startsWith("nothing to commit"));
    JsonObject merged = repo.merge(w, true, "My thread", "web");
    String commit = merged.getString("commit");
    assertEquals(commit, person(repoDir, "rev-parse", "main"));
    assertEquals(w.baseCommit(), person(repoDir, "rev-parse", "main~1"), "one squash commit on the base");
    assertEquals("done\n", Files.readString(repoDir.resolve("feature.txt")), "the person's checkout follows");
    assertEquals("", person(repoDir, "status", "--porcelain", "--untracked-files=no"));
    assertEquals(commit, person(w.dir(), "rev-parse", "HEAD"), "the thread goes on from the merge");
    assertEquals(0, repo.changes(w).getJsonArray("files").size());
    GitException again = assertThrows(GitException.class, () -> repo.merge(w, true, "t", "web"));
    assertTrue(again.getMessage().startsWith("nothing to merge"), again.getMessage());
  }

  @Test
  void aConflictADirtyCheckoutAndUncommittedWorkAreRefusedBeforeAnythingMoves() throws Exception {
    ProjectRepo.Worktree w = created("t_one", null);
    Files.writeString(w.dir().resolve("README.md"), "thread\n");
    GitException uncommitted = assertThrows(GitException.class, () -> repo.merge(w, true, "t", "web"));
    assertTrue(uncommitted.getMessage().contains("commit them first"));
    repo.commit(w, "change readme", "web");
    Files.writeString(repoDir.resolve("README.md"), "person\n");
    String main = person(repoDir, "rev-parse", "main");
    GitException dirty = assertThrows(GitException.class, () -> repo.merge(w, true, "t", "web"));
    assertTrue(dirty.getMessage().contains("with changes not committed"), dirty.getMessage());
    assertEquals("person\n", Files.readString(repoDir.resolve("README.md")));
    person(repoDir, "commit", "-q", "-am", "person's change");
    GitException conflict = assertThrows(GitException.class, () -> repo.merge(w, true, "t", "web"));
    assertTrue(conflict.getMessage().contains("would conflict in README.md"), conflict.getMessage());
    assertEquals(person(repoDir, "rev-parse", "main~1"), main);
    assertEquals("person\n", Files.readString(repoDir.resolve("README.md")));
  }

  @Test
  void discardKeepsTheWorkUnderAnArchiveRefAndRemovesWorktreeAndBranch() throws Exception {
    ProjectRepo.Worktree w = created("t_two", "my-try");
    Files.writeString(w.dir().resolve("scratch.txt"), "not committed\n");
    String archive = repo.discard(w).getString("archive");
    assertEquals("refs/switchboard/archive/t_two", archive);
    assertFalse(Files.exists(w.dir()));
    assertEquals(1, person(repoDir, "worktree", "list").lines().count());
    assertEquals("", person(repoDir, "branch", "--list", "my-try"));
    assertEquals("not committed", person(repoDir, "show", archive + ":scratch.txt"));
    ProjectRepo.Worktree empty = created("t_three", null);
    assertNull(repo.discard(empty).getString("archive"), "no work: nothing to keep");
  }

  @Test
  void keepCommitsWhatIsLeftRemovesTheWorktreeAndLeavesTheBranchForThePerson() throws Exception {
    ProjectRepo.Worktree w = created("t_keep", "my-work");
    Files.writeString(w.dir().resolve("kept.txt"), "mine\n");
    JsonObject kept = repo.keep(w, "A thread", "web");
    assertEquals("my-work", kept.getString("branch"));
    assertEquals(kept.getString("committed"), person(repoDir, "rev-parse", "my-work"));
    assertEquals("mine", person(repoDir, "show", "my-work:kept.txt"));
    assertFalse(Files.exists(w.dir()));
    assertEquals(1, person(repoDir, "worktree", "list").lines().count());
    assertEquals(w.baseCommit(), person(repoDir, "rev-parse", "main"), "not merged");
    // A keep a stop cut short: the next start removes the worktree and leaves the branch.
    ProjectRepo.Worktree cut = created("t_cut", "cut-work");
    List<String> done = repo.reconcile(List.of(), java.util.Set.of("t_cut"));
    assertTrue(done.get(0).contains("kept on branch cut-work"), done.toString());
    assertFalse(Files.exists(cut.dir()));
    assertEquals(cut.baseCommit(), person(repoDir, "rev-parse", "cut-work"));
  }

  @Test
  void aWorktreeNoThreadOwnsIsRemovedAtStartAndOwnedOnesStay() throws Exception {
    ProjectRepo.Worktree kept = created("t_kept", null);
    ProjectRepo.Worktree orphan = created("t_orphan", null);
    Files.writeString(orphan.dir().resolve("x.txt"), "x\n");
    List<String> done = repo.reconcile(List.of(kept));
    assertEquals(1, done.size(), done.toString());
    assertFalse(Files.exists(orphan.dir()));
    assertTrue(Files.exists(kept.dir()));
    assertEquals(List.of(kept.dir()), repo.listed());
    assertEquals("x", person(repoDir, "show", "refs/switchboard/archive/t_orphan:x.txt"));
  }

  @Test
  void aCheckpointRecordsEverythingWithoutMovingTheBranchAndOnlyWhenSomethingChanged() throws Exception {
    ProjectRepo.Worktree w = created("t_cp", null);
    assertEquals(null, repo.checkpoint(w, 1), "nothing changed yet");
    Files.writeString(w.dir().resolve("a.txt"), "one\n");
    String first = repo.checkpoint(w, 1).getString("checkpoint");
    assertEquals(null, repo.checkpoint(w, 2), "nothing changed since");
    Files.writeString(w.dir().resolve("a.txt"), "two\n");
    String second = repo.checkpoint(w, 3).getString("checkpoint");
    assertEquals("two", person(repoDir, "show", "refs/switchboard/checkpoints/t_cp:a.txt"));
    assertEquals(first, person(repoDir, "rev-parse", "refs/switchboard/checkpoints/t_cp@{1}"), "the reflog keeps it");
    assertEquals(second, person(repoDir, "rev-parse", "refs/switchboard/checkpoints/t_cp"));
    assertEquals(w.baseCommit(), person(w.dir(), "rev-parse", "HEAD"));
    assertEquals("?? a.txt", person(w.dir(), "status", "--porcelain"));
  }

  @Test
  void aWorktreeDeletedByHandIsNamedNotFollowed() throws Exception {
    ProjectRepo.Worktree w = created("t_gone", null);
    ProjectRepo.deleteTree(w.dir());
    GitException gone = assertThrows(GitException.class, () -> repo.changes(w));
    assertTrue(gone.getMessage().contains("is gone"), gone.getMessage());
  }

  /**
   * What an agent plants in its worktree — a .git pointer to a gitdir of its own with core.fsmonitor
   * set, a filter driver selected by .gitattributes — never runs in the gateway's git commands.
   */
  @Test
  void whatAnAgentPlantsInItsWorktreeNeverRunsInTheGatewaysGit() throws Exception {
    ProjectRepo.Worktree w = created("t_evil", null);
    Path marker = tmp.resolve("pwned");
    Path evil = tmp.resolve("evil-gitdir");
    person(tmp, "init", "-q", "--bare", evil.toString());
    String payload = "#!/bin/sh\ntouch " + marker + "\n";
    Path script = tmp.resolve("payload.sh");
    Files.writeString(script, payload);
    script.toFile().setExecutable(true);
    Files.writeString(evil.resolve("config"), "[core]\n\tbare = false\n\tfsmonitor = " + script + "\n"
        + "[filter \"x\"]\n\tclean = " + script + "\n\tsmudge = " + script + "\n[diff]\n\texternal = " + script + "\n");
    Files.writeString(w.dir().resolve(".git"), "gitdir: " + evil + "\n");
    Files.writeString(w.dir().resolve(".gitattributes"), "* filter=x diff=x\n");
    Files.writeString(w.dir().resolve("a.txt"), "a\n");
    repo.changes(w);
    repo.commit(w, "work", "web");
    repo.merge(w, true, "evil", "web");
    assertFalse(Files.exists(marker), "a planted program ran");
    assertEquals("a\n", Files.readString(repoDir.resolve("a.txt")));
    // The plant is live: git that follows the worktree's pointer (as a naive host would) runs it.
    new ProcessBuilder("git", "status").directory(w.dir().toFile()).redirectErrorStream(true).start()
        .waitFor(30, TimeUnit.SECONDS);
    assertTrue(Files.exists(marker), "the planted fsmonitor should run under naive git");
  }

  @Test
  void noGitProgramIsAClearError() throws Exception {
    ProjectRepo none = new ProjectRepo(repo.spec(), worktrees, tmp.resolve("data/tmp/git"), "/nonexistent/git");
    GitException e = assertThrows(GitException.class, () -> none.create("t_1", null));
    assertTrue(e.getMessage().contains("is git installed?"), e.getMessage());
    assertNotNull(repo.layout());
  }
}
