package io.switchboard.project;

import io.switchboard.config.ProjectSpec;
import io.switchboard.project.Git.GitException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The git work of one project: a worktree per thread, made, read, committed, merged and discarded
 * through {@link Git}, in a folder of the gateway's own ({@code <dataDir>/worktrees/<project>/<thread>})
 * outside the repository. Every method blocks and changes the repository: the project room runs
 * them one at a time per repository (its lock). Nothing outside the worktrees folder is ever
 * deleted; work that is thrown away is kept first under {@code refs/switchboard/archive/<thread>}.
 */
final class ProjectRepo {
  /** What a thread's worktree is (the facts the thread row keeps). */
  record Worktree(String threadId, Path dir, String branch, String baseRef, String baseCommit) {
    static Worktree of(JsonObject b) {
      return new Worktree(b.getString("threadId"), Path.of(b.getString("workspace")), b.getString("branch"),
          b.getString("baseRef"), b.getString("baseCommit"));
    }
  }

  private static final Pattern SHA = Pattern.compile("[0-9a-f]{40,64}");
  /** The most of a diff shown at once; a bigger one says it was cut. */
  static final long MAX_PATCH_BYTES = 1L << 20;
  /** The most files Changes lists, and the most bytes of their names: a worktree of 100,000 files is counted, not listed. */
  static final int MAX_LISTED_FILES = 1_000;
  static final int MAX_LISTED_NAME_BYTES = 256 << 10;
  private static final int SETUP_OUTPUT_BYTES = 16 << 10;
  /**
   * For diffs of the index against a tree (no working files read): shows a gitlink's recorded commit
   * changing, which the hardened {@code diff.ignoreSubmodules=all} would hide, and still never looks
   * inside one.
   */
  private static final String SHOW_GITLINKS = "--ignore-submodules=dirty";
  private static final Pattern CHECKPOINT_BYTES = Pattern.compile("\nSwitchboard-Checkpoint-Bytes: (\\d+)");

  /** What a checkpoint may take: files over {@code maxFileBytes} are left out, and a thread's checkpoints stop at {@code budgetBytes}. */
  record CheckpointLimits(long maxFileBytes, long budgetBytes) {
    static final CheckpointLimits DEFAULT = new CheckpointLimits(10L << 20, 512L << 20);
  }

  private final ProjectSpec spec;
  private final Path worktrees;
  /** The gateway's own temporary files (scratch indexes, checkpoint objects): in the data directory, hidden from agents. */
  private final Path scratch;
  private final String program;
  private final CheckpointLimits checkpointLimits;
  private GitLayout layout;

  ProjectRepo(ProjectSpec spec, Path worktreesDir, Path scratchDir, String program) {
    this(spec, worktreesDir, scratchDir, program, CheckpointLimits.DEFAULT);
  }

  ProjectRepo(ProjectSpec spec, Path worktreesDir, Path scratchDir, String program, CheckpointLimits checkpointLimits) {
    this.spec = spec;
    this.worktrees = worktreesDir.resolve(spec.id());
    this.scratch = scratchDir;
    this.program = program;
    this.checkpointLimits = checkpointLimits;
  }

  ProjectSpec spec() {
    return spec;
  }

  /** The repository's layout, read once; a message when the project is not (or no longer) a repository. */
  GitLayout layout() throws GitException {
    if (layout == null) {
      if (!Files.isDirectory(spec.path())) {
        throw new GitException("the folder of project " + spec.id() + ", " + spec.path() + ", is gone");
      }
      try {
        layout = GitLayout.of(spec.path());
      } catch (IOException e) {
        throw new GitException("cannot read the repository of project " + spec.id() + ": " + e.getMessage());
      }
      if (layout == null) {
        throw new GitException("project " + spec.id() + " (" + spec.path() + ") is not a git repository");
      }
    }
    return layout;
  }

  /** git on the repository alone (no working tree). */
  private Git repo() throws GitException {
    return new Git(program, layout().commonDir(), layout().commonDir(), null);
  }

  /** git on the person's own working tree of the project. */
  private Git mainTree() throws GitException {
    return new Git(program, layout().gitDir(), layout().commonDir(), spec.path());
  }

  /** git on a thread's worktree, named explicitly (its .git pointer is the agent's to write, never read). */
  private Git tree(Worktree w) throws GitException {
    return new Git(program, layout().adminDir(w.threadId()), layout().commonDir(), w.dir());
  }

  Path dirOf(String threadId) {
    return worktrees.resolve(threadId);
  }

  /** The branch a thread gets when its person names none: switchboard/ and the start of its id. */
  static String defaultBranch(String threadId) {
    String id = threadId.startsWith("t_") ? threadId.substring(2) : threadId;
    return "switchboard/" + id.substring(0, Math.min(8, id.length())).replaceAll("[^A-Za-z0-9]", "x");
  }

  /**
   * A new worktree for {@code threadId} on a new branch from the base branch, the configured files
   * copied in and the setup command run. Returns the thread's facts and what the setup printed.
   */
  JsonObject create(String threadId, String branchName) throws GitException {
    Git repo = repo();
    repo.run("worktree", "prune");
    String base = spec.baseBranch();
    if (base == null) {
      Git.Result head = mainTree().run("symbolic-ref", "-q", "--short", "HEAD");
      if (!head.ok()) {
        throw new GitException("the repository " + spec.path() + " has a detached HEAD; set baseBranch for project "
            + spec.id() + " (or check out a branch there)");
      }
      base = head.firstLine();
    }
    Git.Result baseTip = repo.run("rev-parse", "--verify", "-q", "refs/heads/" + base + "^{commit}");
    if (!baseTip.ok()) {
      throw new GitException("the base branch " + base + " of project " + spec.id() + " does not exist"
          + " (or has no commit yet)");
    }
    String baseCommit = baseTip.firstLine();
    String branch = branchName == null || branchName.isBlank() ? defaultBranch(threadId) : branchName.strip();
    if (!repo.run("check-ref-format", "--branch", branch).ok() || branch.startsWith("-")) {
      throw new GitException("\"" + branch + "\" is not a valid branch name");
    }
    if (repo.run("show-ref", "--verify", "-q", "refs/heads/" + branch).ok()) {
      throw new GitException("the branch " + branch + " already exists in " + spec.path() + "; pick another name");
    }
    Path dir = dirOf(threadId);
    try {
      Files.createDirectories(worktrees);
    } catch (IOException e) {
      throw new GitException("cannot make " + worktrees + ": " + e.getMessage());
    }
    if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      throw new GitException("the folder " + dir + " is already there (left by an earlier run?)");
    }
    Git.Result added = repo.limits(TimeUnit.MINUTES.toMillis(5), Git.DEFAULT_MAX_OUTPUT)
        .run("worktree", "add", "-q", "-b", branch, dir.toString(), baseCommit);
    if (!added.ok()) {
      throw new GitException("git worktree add failed: " + Git.said(added));
    }
    Worktree w = new Worktree(threadId, dir, branch, base, baseCommit);
    if (!Files.isDirectory(layout().adminDir(threadId))) {
      // git names the admin folder after the worktree's; another name would break every later command.
      remove(w);
      throw new GitException("git did not name the worktree's admin folder " + threadId + "; nothing was kept");
    }
    JsonArray notes = new JsonArray();
    copyFiles(dir, notes);
    if (Files.isRegularFile(dir.resolve(".gitmodules"))) {
      Git.Result sub = tree(w).limits(TimeUnit.MINUTES.toMillis(5), 1 << 20)
          .run("-c", "protocol.file.allow=always", "submodule", "update", "--init", "--recursive");
      notes.add(sub.ok() ? "submodules initialised" : "submodules not initialised: " + Git.said(sub));
    }
    JsonObject facts = new JsonObject().put("workspace", dir.toString()).put("branch", branch).put("baseRef", base)
        .put("baseCommit", baseCommit).put("notes", notes);
    if (!spec.setup().isEmpty()) {
      facts.put("setup", setup(dir));
    }
    return facts;
  }

  /** Copies the configured untracked files (regular files only, never through a link) into a new worktree. */
  private void copyFiles(Path dir, JsonArray notes) {
    for (String name : spec.copyFiles()) {
      Path from = spec.path().resolve(name).normalize();
      Path to = dir.resolve(name).normalize();
      if (!from.startsWith(spec.path()) || !to.startsWith(dir)) {
        continue; // refused by the config's check already
      }
      if (!Files.isRegularFile(from, LinkOption.NOFOLLOW_LINKS)) {
        notes.add(name + " not copied: not a regular file in " + spec.path());
        continue;
      }
      try {
        Files.createDirectories(to.getParent());
        Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING, LinkOption.NOFOLLOW_LINKS);
        notes.add(name + " copied");
      } catch (IOException e) {
        notes.add(name + " not copied: " + e.getMessage());
      }
    }
  }

  /** Runs the project's setup command in the new worktree: its exit and the end of what it printed. */
  private JsonObject setup(Path dir) {
    JsonObject result = new JsonObject().put("command", new JsonArray(spec.setup()));
    try {
      Path log = Files.createTempFile(scratchDir(), "setup", ".log");
      try {
        Process p = new ProcessBuilder(spec.setup()).directory(dir.toFile()).redirectErrorStream(true)
            .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .start();
        boolean done = p.waitFor(10, TimeUnit.MINUTES);
        if (!done) {
          p.descendants().forEach(ProcessHandle::destroyForcibly);
          p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
        byte[] bytes = Files.readAllBytes(log);
        int from = Math.max(0, bytes.length - SETUP_OUTPUT_BYTES);
        result.put("exit", done ? p.exitValue() : -1).put("timedOut", !done)
            .put("output", new String(bytes, from, bytes.length - from, StandardCharsets.UTF_8));
      } finally {
        Files.deleteIfExists(log);
      }
    } catch (IOException e) {
      result.put("exit", -1).put("output", "could not run the setup command: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      result.put("exit", -1).put("output", "interrupted");
    }
    return result;
  }

  private void requirePresent(Worktree w) throws GitException {
    if (!Files.isDirectory(w.dir()) || !Files.isDirectory(layout().adminDir(w.threadId()))) {
      throw new GitException("the worktree of this thread, " + w.dir() + ", is gone (deleted by hand?); its branch "
          + w.branch() + " is kept in " + spec.path() + ". Start a new thread to go on");
    }
  }

  /**
   * The thread's work against the merge base with its base branch, untracked files included (read
   * through a copy of its index, so the thread's own is untouched): files with their line counts
   * (at most {@link #MAX_LISTED_FILES}, the rest counted), the patch (cut at {@link #MAX_PATCH_BYTES}),
   * commits ahead and files not yet committed. A name with invisible or control characters carries
   * a {@code label} that shows them; a nested repository is marked {@code repository} (never entered).
   */
  JsonObject changes(Worktree w) throws GitException {
    requirePresent(w);
    Git tree = tree(w).with("GIT_OPTIONAL_LOCKS", "0");
    String head = tree.ok("rev-parse", "--verify", "HEAD").firstLine();
    String mergeBase = mergeBase(tree, w, head);
    Path index = null;
    Path objects = null;
    try {
      index = scratchIndex(w);
      objects = scratchObjects();
      // Reading the changes hashes untracked files: into a scratch folder, never the person's .git.
      Git scratchGit = withObjects(tree.with("GIT_INDEX_FILE", index.toString()), objects);
      addAll(scratchGit, List.of());
      java.util.Set<String> repositories = new java.util.HashSet<>();
      String[] meta = {null};
      scratchGit.stream(r -> {
        if (meta[0] == null) {
          meta[0] = r;
          return;
        }
        if ((meta[0].startsWith(":160000") || meta[0].startsWith(":000000 160000") || meta[0].contains(" 160000 "))
            && repositories.size() < MAX_LISTED_FILES) {
          repositories.add(r);
        }
        meta[0] = null;
      }, "diff", "--cached", SHOW_GITLINKS, "--raw", "-z", "--no-renames", "--no-abbrev", mergeBase).requireOk("diff");
      FileList files = new FileList(repositories);
      scratchGit.stream(files, "diff", "--cached", SHOW_GITLINKS, "--no-ext-diff", "--no-textconv", "--numstat", "-z", "-M",
          mergeBase).requireOk("diff");
      Git.Result patch = scratchGit.limits(Git.DEFAULT_TIMEOUT_MS, MAX_PATCH_BYTES).run("diff", "--cached",
          SHOW_GITLINKS, "--no-ext-diff", "--no-textconv", "--no-color", "-M", mergeBase);
      int[] pending = {0};
      scratchGit.stream(r -> {
        if (!r.isEmpty()) {
          pending[0]++;
        }
      }, "diff", "--cached", SHOW_GITLINKS, "--name-only", "-z", "HEAD").requireOk("diff");
      int ahead = Integer.parseInt(tree.ok("rev-list", "--count", mergeBase + "..HEAD").firstLine());
      return new JsonObject().put("threadId", w.threadId()).put("branch", w.branch()).put("baseRef", w.baseRef())
          .put("mergeBase", mergeBase).put("head", head).put("files", files.listed).put("filesTotal", files.total)
          .put("filesOmitted", files.total - files.listed.size()).put("patch", patch.out())
          .put("truncated", patch.truncated()).put("ahead", ahead).put("uncommitted", pending[0]);
    } finally {
      deleteQuietly(index);
      if (objects != null) {
        deleteTree(objects);
      }
    }
  }

  /**
   * {@code --numstat -z} read record by record: "added\tremoved\tpath", or for a rename
   * "added\tremoved\t" then "from" then "to". Lists the first files within the bounds, counts them all.
   */
  private static final class FileList implements java.util.function.Consumer<String> {
    final JsonArray listed = new JsonArray();
    final java.util.Set<String> repositories;
    int total;
    private int nameBytes;
    private JsonObject renamed;

    FileList(java.util.Set<String> repositories) {
      this.repositories = repositories;
    }

    @Override
    public void accept(String r) {
      if (renamed != null) {
        if (!renamed.containsKey("from")) {
          renamed.put("from", r);
        } else {
          JsonObject file = renamed;
          renamed = null;
          list(file.put("path", r));
        }
        return;
      }
      String[] cols = r.split("\t", 3);
      if (cols.length < 3) {
        return;
      }
      JsonObject file = new JsonObject();
      boolean binary = cols[0].equals("-");
      file.put("added", binary ? 0 : parse(cols[0])).put("removed", binary ? 0 : parse(cols[1])).put("binary", binary);
      if (cols[2].isEmpty()) {
        renamed = file;
      } else {
        list(file.put("path", cols[2]));
      }
    }

    private void list(JsonObject file) {
      total++;
      String path = file.getString("path");
      int bytes = path.length() + file.getString("from", "").length();
      if (listed.size() >= MAX_LISTED_FILES || nameBytes + bytes > MAX_LISTED_NAME_BYTES) {
        return;
      }
      nameBytes += bytes;
      if (repositories.contains(path)) {
        file.put("repository", true);
      }
      label(file, "path", "label");
      label(file, "from", "fromLabel");
      listed.add(file);
    }

    private static void label(JsonObject file, String key, String labelKey) {
      String name = file.getString(key);
      if (name != null && !FileNames.visible(name).equals(name)) {
        file.put(labelKey, FileNames.visible(name));
      }
    }

    private static int parse(String n) {
      try {
        return Integer.parseInt(n);
      } catch (NumberFormatException e) {
        return 0;
      }
    }
  }

  /**
   * Stages everything in the worktree into {@code git}'s index but nested repositories: a gitlink
   * already in the index is left as it is ({@code git add} would run {@code git status} inside it,
   * and that inner git reads the agent's config and runs its filters on the host), one the agent
   * made is recorded by its HEAD, never entered. {@code without}: more paths left out (files too
   * big for a checkpoint).
   */
  private static void addAll(Git git, List<String> without) throws GitException {
    List<String> gitlinks = new ArrayList<>();
    git.stream(r -> {
      if (r.startsWith("160000 ")) {
        int tab = r.indexOf('\t');
        if (tab > 0) {
          gitlinks.add(r.substring(tab + 1));
        }
      }
    }, "ls-files", "-s", "-z").requireOk("ls-files");
    java.io.ByteArrayOutputStream pathspecs = new java.io.ByteArrayOutputStream();
    pathspecs.writeBytes(".\0".getBytes(StandardCharsets.UTF_8));
    for (List<String> paths : List.of(gitlinks, without)) {
      for (String path : paths) {
        pathspecs.writeBytes((":(exclude,literal)" + path + "\0").getBytes(StandardCharsets.UTF_8));
      }
    }
    Git.Result added = git.withInput(pathspecs.toByteArray(), List.of("add", "-A", "--pathspec-from-file=-",
        "--pathspec-file-nul"));
    if (!added.ok()) {
      throw new GitException("git add failed: " + Git.said(added));
    }
  }

  private String mergeBase(Git tree, Worktree w, String head) throws GitException {
    Git.Result base = tree.run("merge-base", "refs/heads/" + w.baseRef(), head);
    return base.ok() ? base.firstLine() : w.baseCommit(); // the base branch deleted: the commit it started from
  }

  /** A copy of the worktree's index (its stat data saves hashing every file again), or an empty file. */
  private Path scratchIndex(Worktree w) throws GitException {
    try {
      Path copy = Files.createTempFile(scratchDir(), "index", "");
      Path index = layout().adminDir(w.threadId()).resolve("index");
      if (Files.isRegularFile(index, LinkOption.NOFOLLOW_LINKS)) {
        Files.copy(index, copy, StandardCopyOption.REPLACE_EXISTING);
      } else {
        Files.delete(copy);
        tree(w).with("GIT_INDEX_FILE", copy.toString()).ok("read-tree", "HEAD");
      }
      return copy;
    } catch (IOException e) {
      throw new GitException("cannot make a scratch index: " + e.getMessage());
    }
  }

  /** The gateway's scratch folder, made private (0700) at first use. */
  private Path scratchDir() throws IOException {
    if (!Files.isDirectory(scratch)) {
      io.switchboard.config.AccessToken.ensurePrivateDirectory(scratch);
    }
    return scratch;
  }

  /**
   * A checkpoint after a turn: everything in the worktree (what is not committed and untracked
   * files too, read through a scratch index) recorded as a commit on
   * {@code refs/switchboard/checkpoints/<thread>} — its reflog keeps the earlier ones — without
   * touching the thread's branch, index or files. Bounded: files over the limit are left out (named
   * in {@code skipped}), and the objects are written to a scratch folder first, so a checkpoint that
   * would take the thread past its budget adds nothing to the repository ({@code budgetReached}).
   * Returns null when nothing changed since the last one.
   */
  JsonObject checkpoint(Worktree w, long turn) throws GitException {
    requirePresent(w);
    Git tree = tree(w).with("GIT_OPTIONAL_LOCKS", "0");
    String ref = "refs/switchboard/checkpoints/" + w.threadId();
    String head = tree.ok("rev-parse", "--verify", "HEAD").firstLine();
    Git.Result last = tree.run("rev-parse", "--verify", "-q", ref + "^{commit}");
    long spent = last.ok() ? checkpointBytes(last.firstLine()) : 0;
    Path index = scratchIndex(w);
    Path objects;
    try {
      objects = scratchObjects();
    } catch (GitException e) {
      deleteQuietly(index);
      throw e;
    }
    try {
      Git scratchGit = withObjects(tree.with("GIT_INDEX_FILE", index.toString()), objects);
      List<String> tooBig = new ArrayList<>();
      long[] bigCount = {0};
      scratchGit.stream(name -> {
        if (name.isEmpty()) {
          return;
        }
        try {
          Path file = w.dir().resolve(name);
          if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) && Files.size(file) > checkpointLimits.maxFileBytes()) {
            bigCount[0]++;
            if (tooBig.size() < MAX_LISTED_FILES) {
              tooBig.add(name);
            }
          }
        } catch (IOException | java.nio.file.InvalidPathException gone) {
          // gone meanwhile, or a name no path can hold: git's add decides
        }
      }, "ls-files", "-z", "-o", "-m", "--exclude-standard").requireOk("ls-files");
      if (bigCount[0] > tooBig.size()) {
        return new JsonObject().put("skippedAll", true).put("note", "No checkpoints while more than "
            + MAX_LISTED_FILES + " files of this thread are over " + mib(checkpointLimits.maxFileBytes()) + ".");
      }
      addAll(scratchGit, tooBig);
      String snapshot = scratchGit.ok("write-tree").firstLine();
      Git.Result lastTree = tree.run("rev-parse", "--verify", "-q", ref + "^{tree}");
      if (lastTree.ok() ? lastTree.firstLine().equals(snapshot) : snapshot.equals(tree.ok("rev-parse", "HEAD^{tree}")
          .firstLine())) {
        return null;
      }
      long grown = treeBytes(objects);
      JsonObject made = new JsonObject().put("ref", ref);
      if (!tooBig.isEmpty()) {
        made.put("skipped", new JsonArray(tooBig.subList(0, Math.min(20, tooBig.size())))).put("skippedCount",
            tooBig.size());
      }
      if (spent + grown > checkpointLimits.budgetBytes()) {
        return made.put("budgetReached", true).put("note", "This thread's checkpoints reached their budget of "
            + mib(checkpointLimits.budgetBytes()) + ": later turns are not checkpointed (commit or merge its work "
            + "to keep it).");
      }
      String commit = scratchGit.ok("commit-tree", snapshot, "-p", head, "-m", "Checkpoint after turn " + turn
          + " of thread " + w.threadId() + "\n\nSwitchboard-Checkpoint-Bytes: " + (spent + grown)).firstLine();
      importObjects(objects, layout().commonDir().resolve("objects"));
      tree.ok("update-ref", "--create-reflog", "-m", "switchboard: checkpoint after turn " + turn, ref, commit);
      made.put("checkpoint", commit);
      if (!tooBig.isEmpty()) {
        made.put("note", "Checkpoints leave out " + tooBig.size() + " file"
            + (tooBig.size() == 1 ? "" : "s") + " over " + mib(checkpointLimits.maxFileBytes()) + ": "
            + String.join(", ", tooBig.subList(0, Math.min(5, tooBig.size())).stream().map(FileNames::visible)
            .toList()) + (tooBig.size() > 5 ? ", …" : "") + ".");
      }
      return made;
    } finally {
      deleteQuietly(index);
      deleteTree(objects);
    }
  }

  /** An empty object folder of the gateway's: what git writes there is new, the repository's own objects are read beside it. */
  private Path scratchObjects() throws GitException {
    try {
      return Files.createTempDirectory(scratchDir(), "objects");
    } catch (IOException e) {
      throw new GitException("cannot make a scratch folder in " + scratch + ": " + e.getMessage());
    }
  }

  private Git withObjects(Git git, Path objects) throws GitException {
    return git.with("GIT_OBJECT_DIRECTORY", objects.toString())
        .with("GIT_ALTERNATE_OBJECT_DIRECTORIES", layout().commonDir().resolve("objects").toString());
  }

  private static String mib(long bytes) {
    return (bytes >> 20) + " MiB";
  }

  /** What a thread's checkpoints took so far, as its last one says (the gateway's own commit: trusted). */
  private long checkpointBytes(String commit) throws GitException {
    java.util.regex.Matcher m = CHECKPOINT_BYTES.matcher(repo().ok("cat-file", "commit", commit).out());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private static long treeBytes(Path dir) throws GitException {
    try (var walk = Files.walk(dir)) {
      return walk.filter(f -> Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)).mapToLong(f -> {
        try {
          return Files.size(f);
        } catch (IOException e) {
          return 0;
        }
      }).sum();
    } catch (IOException e) {
      throw new GitException("cannot measure a checkpoint: " + e.getMessage());
    }
  }

  /**
   * Moves a checkpoint's new objects (loose, or a pack) into the repository: each copied beside its
   * place and renamed into it, packs before their indexes, so git never sees half an object.
   */
  private static void importObjects(Path from, Path into) throws GitException {
    try (var walk = Files.walk(from)) {
      List<Path> files = walk.filter(f -> Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS))
          .filter(f -> !from.relativize(f).startsWith("info"))
          .sorted(java.util.Comparator.comparing((Path f) -> f.toString().endsWith(".idx")).thenComparing(Path::toString))
          .toList();
      for (Path f : files) {
        Path target = into.resolve(from.relativize(f).toString());
        if (Files.exists(target)) {
          continue;
        }
        Files.createDirectories(target.getParent());
        // git's own prefixes for objects being written: fsck passes them over, prune clears them (a kill mid-copy).
        Path tmp = target.resolveSibling((target.getParent().getFileName().toString().equals("pack") ? "tmp_pack_sb_"
            : "tmp_obj_sb_") + target.getFileName());
        Files.copy(f, tmp, StandardCopyOption.REPLACE_EXISTING);
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
      }
    } catch (IOException e) {
      throw new GitException("cannot store a checkpoint's objects: " + e.getMessage());
    }
  }

  /**
   * Commits everything in the worktree (the gateway's commit, never the agent's): the new commit.
   * Refused, with nothing staged, when a name to commit holds a control character.
   */
  JsonObject commit(Worktree w, String message, String who) throws GitException {
    requirePresent(w);
    Git tree = tree(w);
    refuseLyingNames(tree, "commit", "ls-files", "-z", "-o", "-m", "--exclude-standard");
    refuseLyingNames(tree, "commit", "diff", "--cached", SHOW_GITLINKS, "--name-only", "-z", "HEAD");
    addAll(tree, List.of());
    if (tree.run("diff", "--cached", SHOW_GITLINKS, "--quiet", "HEAD").ok()) {
      throw new GitException("nothing to commit: the worktree has no change since its last commit");
    }
    tree.ok("commit", "-q", "--no-verify", "-m", message + "\n\nSwitchboard-Committed-By: " + who);
    String sha = tree.ok("rev-parse", "HEAD").firstLine();
    return new JsonObject().put("commit", sha);
  }

  /** Refuses the action when a name git lists holds a control or direction character (FileNames#lying). */
  private static void refuseLyingNames(Git git, String action, String... listing) throws GitException {
    String[] found = {null};
    git.stream(name -> {
      if (found[0] == null && FileNames.lying(name)) {
        found[0] = name;
      }
    }, listing).requireOk(listing[0]);
    if (found[0] != null) {
      throw new GitException("the file name " + FileNames.visible(found[0]) + " holds a control or direction "
          + "character, which would show as something it is not; rename it first (nothing was "
          + (action.equals("merge") ? "merged" : "committed") + ")");
    }
  }

  /**
   * Lands the thread's committed work on its base branch: a squash commit (or a merge commit) made
   * with {@code merge-tree}, refused before anything moves when it would conflict or when the base
   * branch is checked out with changes of the person's own. The base moves by compare-and-swap; a
   * checked-out base has its files brought along; the thread's branch then continues from the result.
   */
  JsonObject merge(Worktree w, boolean squash, String title, String who) throws GitException {
    return merge(w, squash, title, who, false);
  }

  /** {@code commitFirst}: what is not committed yet is committed first (a chat's /merge has no Commit button). */
  JsonObject merge(Worktree w, boolean squash, String title, String who, boolean commitFirst) throws GitException {
    requirePresent(w);
    Git tree = tree(w);
    Git repo = repo();
    boolean dirty = !tree.with("GIT_OPTIONAL_LOCKS", "0").ok("status", "--porcelain").out().isBlank();
    if (dirty && !commitFirst) {
      throw new GitException("the thread has changes not committed yet; commit them first (nothing was merged)");
    }
    if (dirty) {
      commit(w, "Work from thread \"" + title + "\"", who);
    }
    String head = tree.ok("rev-parse", "--verify", "HEAD").firstLine();
    Git.Result tip = repo.run("rev-parse", "--verify", "-q", "refs/heads/" + w.baseRef() + "^{commit}");
    if (!tip.ok()) {
      throw new GitException("the base branch " + w.baseRef() + " no longer exists; nothing was merged");
    }
    String baseTip = tip.firstLine();
    if (repo.run("merge-base", "--is-ancestor", head, baseTip).ok()) {
      throw new GitException("nothing to merge: " + w.baseRef() + " already has everything of " + w.branch());
    }
    Git.Result merged = repo.run("merge-tree", "--write-tree", "--name-only", "--no-messages", baseTip, head);
    if (merged.exit() == 1) {
      List<String> conflicts = new ArrayList<>(List.of(merged.out().strip().split("\n")));
      conflicts.remove(0);
      throw new GitException("merging " + w.branch() + " into " + w.baseRef() + " would conflict in "
          + String.join(", ", conflicts) + "; nothing was merged (bring the thread up to date first)");
    }
    if (!merged.ok()) {
      throw new GitException("git merge-tree failed: " + Git.said(merged));
    }
    String newTree = merged.firstLine();
    refuseLyingNames(repo, "merge", "diff", SHOW_GITLINKS, "--name-only", "-z", "--no-renames", baseTip, newTree);
    Path checkedOut = checkedOutAt(w.baseRef());
    if (checkedOut != null && !checkedOut.equals(spec.path())) {
      throw new GitException(w.baseRef() + " is checked out in " + checkedOut + "; merge there, or check out another "
          + "branch in it (nothing was merged)");
    }
    if (checkedOut != null && !mainTree().with("GIT_OPTIONAL_LOCKS", "0").ok("status", "--porcelain",
        "--untracked-files=no").out().isBlank()) {
      throw new GitException(w.baseRef() + " is checked out in " + spec.path() + " with changes not committed; "
          + "commit or stash them there first (nothing was merged, nothing of yours touched)");
    }
    String subjects = repo.ok("log", "--format=- %s", baseTip + ".." + head).out().strip();
    String message = (squash ? "" : "Merge ") + "Thread \"" + title + "\" (" + w.branch() + ")\n\n" + subjects
        + "\n\nSwitchboard-Merged-By: " + who;
    List<String> commitTree = new ArrayList<>(List.of("commit-tree", newTree, "-p", baseTip));
    if (!squash) {
      commitTree.addAll(List.of("-p", head));
    }
    commitTree.addAll(List.of("-m", message));
    String commit = repo.run(commitTree).firstLine();
    if (!SHA.matcher(commit).matches()) {
      throw new GitException("git commit-tree did not make a commit; nothing was merged");
    }
    if (checkedOut != null) {
      // Everything checked before anything moves: untracked files of the person's in the way refuse here.
      Git.Result trial = mainTree().run("read-tree", "-m", "-u", "-n", baseTip, commit);
      if (!trial.ok()) {
        throw new GitException("merging into " + w.baseRef() + " would overwrite files in " + spec.path() + ": "
            + Git.said(trial) + " (nothing was merged, nothing of yours touched)");
      }
    }
    MergeIntent intent = new MergeIntent(worktrees);
    intent.write(w.baseRef(), baseTip, commit, checkedOut != null);
    Git.Result moved = repo.run("update-ref", "-m", "switchboard: merge " + w.branch(), "refs/heads/" + w.baseRef(),
        commit, baseTip);
    if (!moved.ok()) {
      intent.clear();
      throw new GitException(w.baseRef() + " moved while merging; nothing was merged, try again");
    }
    if (checkedOut != null) {
      Git.Result brought = mainTree().run("read-tree", "-m", "-u", baseTip, commit);
      if (!brought.ok()) {
        // Something of the person's appeared since the trial: the branch goes back, the checkout never moved.
        Git.Result back = repo.run("update-ref", "-m", "switchboard: merge " + w.branch() + " undone",
            "refs/heads/" + w.baseRef(), baseTip, commit);
        intent.clear();
        throw new GitException("merging into " + w.baseRef() + " would overwrite files in " + spec.path() + ": "
            + Git.said(brought) + (back.ok() ? " (nothing was merged, nothing of yours touched)"
            : "; " + w.baseRef() + " could not be moved back: " + Git.said(back)));
      }
    }
    intent.clear();
    // The thread goes on from what was merged (its work is in it), keeping files it has not committed.
    Git.Result reset = tree.run("reset", "-q", "--keep", commit);
    return new JsonObject().put("commit", commit).put("baseRef", w.baseRef()).put("squash", squash)
        .put("threadMoved", reset.ok());
  }

  /** The person's working tree that has {@code branch} checked out, or null. */
  private Path checkedOutAt(String branch) throws GitException {
    String list = repo().ok("worktree", "list", "--porcelain").out();
    Path current = null;
    for (String line : list.split("\n")) {
      if (line.startsWith("worktree ")) {
        current = Path.of(line.substring("worktree ".length()));
      } else if (line.equals("branch refs/heads/" + branch) && current != null) {
        return current;
      }
    }
    return null;
  }

  /**
   * Throws the thread's work away from the repository's view, keeping it first: everything (what
   * was not committed too) is recorded as a commit under {@code refs/switchboard/archive/<thread>},
   * then the worktree and its branch are removed. Returns the archive ref, or null when there was no work.
   */
  JsonObject discard(Worktree w) throws GitException {
    Git repo = repo();
    String archive = null;
    if (Files.isDirectory(w.dir()) && Files.isDirectory(layout().adminDir(w.threadId()))) {
      Git tree = tree(w);
      Git.Result headResult = tree.run("rev-parse", "--verify", "-q", "HEAD");
      if (headResult.ok()) {
        String head = headResult.firstLine();
        String snapshot = head;
        Path index = scratchIndex(w);
        try {
          Git scratch = tree.with("GIT_INDEX_FILE", index.toString());
          addAll(scratch, List.of());
          String snapTree = scratch.ok("write-tree").firstLine();
          if (!snapTree.equals(tree.ok("rev-parse", "HEAD^{tree}").firstLine())) {
            snapshot = tree.ok("commit-tree", snapTree, "-p", head, "-m", "Work not committed, kept when thread "
                + w.threadId() + " was discarded").firstLine();
          }
        } finally {
          deleteQuietly(index);
        }
        if (!repo.run("merge-base", "--is-ancestor", snapshot, w.baseCommit()).ok()) {
          archive = "refs/switchboard/archive/" + w.threadId();
          repo.ok("update-ref", "-m", "switchboard: discard " + w.branch(), archive, snapshot);
        }
      }
    }
    remove(w);
    // The turns' restore points go with the work (the archive keeps it): git's gc may take their files.
    repo.run("update-ref", "-d", "refs/switchboard/checkpoints/" + w.threadId());
    return new JsonObject().put("archive", archive);
  }

  /**
   * Keeps the thread's work on its branch for the person (what is not committed is committed
   * first) and removes its worktree: the branch stays, unmerged, in the repository.
   */
  JsonObject keep(Worktree w, String title, String who) throws GitException {
    String committed = null;
    if (Files.isDirectory(w.dir()) && Files.isDirectory(layout().adminDir(w.threadId()))
        && !tree(w).with("GIT_OPTIONAL_LOCKS", "0").ok("status", "--porcelain").out().isBlank()) {
      committed = commit(w, "Work from thread \"" + title + "\"", who).getString("commit");
    }
    Git.Result tip = repo().run("rev-parse", "--verify", "-q", "refs/heads/" + w.branch());
    removeWorktree(w);
    return new JsonObject().put("branch", w.branch()).put("commit", tip.ok() ? tip.firstLine() : null)
        .put("committed", committed);
  }

  /** Removes the worktree (only inside the gateway's folder) and its branch, then prunes. */
  private void remove(Worktree w) throws GitException {
    removeWorktree(w);
    if (w.branch() != null) {
      repo().run("update-ref", "-d", "refs/heads/" + w.branch());
    }
  }

  /** Removes the worktree's folder (only inside the gateway's) and git's record of it. */
  private void removeWorktree(Worktree w) throws GitException {
    Git repo = repo();
    if (w.dir().normalize().startsWith(worktrees)) {
      repo.run("worktree", "remove", "--force", "--force", w.dir().toString());
      deleteTree(w.dir());
    }
    repo.run("worktree", "prune");
  }

  /**
   * At start: finishes a merge a killed gateway left half done, prunes, and removes worktrees no
   * thread owns (made by a create whose thread was never saved), keeping their work first. Returns
   * a line per thing it did.
   */
  List<String> reconcile(Collection<Worktree> owned) throws GitException {
    return reconcile(owned, java.util.Set.of());
  }

  /** {@code kept}: threads whose Keep a stop cut short: their worktree goes, their branch stays. */
  List<String> reconcile(Collection<Worktree> owned, java.util.Set<String> kept) throws GitException {
    List<String> done = new ArrayList<>();
    MergeIntent intent = new MergeIntent(worktrees);
    MergeIntent.Pending pending = intent.read();
    if (pending != null) {
      try {
        done.add(finishOrUndo(pending));
      } catch (GitException e) {
        done.add("a merge into " + pending.base() + " a stop interrupted could not be checked (" + e.getMessage()
            + "); " + pending.base() + " is at " + pending.to() + ", your checkout as it was");
      } finally {
        intent.clear(); // said once: never a warning at every start
      }
    }
    repo().run("worktree", "prune");
    java.util.Set<String> ids = new java.util.HashSet<>();
    owned.forEach(w -> ids.add(w.threadId()));
    if (Files.isDirectory(worktrees)) {
      try (var dirs = Files.list(worktrees)) {
        for (Path dir : dirs.toList()) {
          String id = dir.getFileName().toString();
          if (id.startsWith(".") || ids.contains(id)) {
            continue;
          }
          String branch = null;
          if (Files.isDirectory(layout().adminDir(id))) {
            Git.Result b = new Git(program, layout().adminDir(id), layout().commonDir(), dir)
                .run("symbolic-ref", "-q", "--short", "HEAD");
            branch = b.ok() ? b.firstLine() : null;
          }
          if (kept.contains(id)) {
            removeWorktree(new Worktree(id, dir, branch, null, null));
            done.add("removed the worktree " + dir + " of a thread kept on branch " + branch);
            continue;
          }
          discard(new Worktree(id, dir, branch, null, zeroOrBase(branch)));
          done.add("removed the worktree " + dir + " that no thread owns");
        }
      } catch (IOException e) {
        throw new GitException("cannot list " + worktrees + ": " + e.getMessage());
      }
    }
    return done;
  }

  /**
   * A merge a stop cut in two: the base branch moved but the person's checkout may not have
   * followed. Finished when the checkout still shows the old commit and can follow; undone (the
   * branch moved back by compare-and-swap) when it cannot. A line saying which.
   */
  private String finishOrUndo(MergeIntent.Pending pending) throws GitException {
    Git.Result at = repo().run("rev-parse", "--verify", "-q", "refs/heads/" + pending.base());
    if (!at.ok() || !at.firstLine().equals(pending.to())) {
      return "a merge into " + pending.base() + " a stop interrupted had not moved it: nothing was merged";
    }
    if (!pending.checkedOut()) {
      return "finished the merge into " + pending.base() + " a stop interrupted";
    }
    String indexTree = mainTree().ok("write-tree").firstLine();
    if (indexTree.equals(repo().ok("rev-parse", pending.to() + "^{tree}").firstLine())) {
      return "finished the merge into " + pending.base() + " a stop interrupted";
    }
    boolean showsOld = indexTree.equals(repo().ok("rev-parse", pending.from() + "^{tree}").firstLine());
    if (showsOld && mainTree().run("read-tree", "-m", "-u", pending.from(), pending.to()).ok()) {
      return "finished the merge into " + pending.base() + " a stop interrupted";
    }
    Git.Result back = repo().run("update-ref", "-m", "switchboard: interrupted merge undone",
        "refs/heads/" + pending.base(), pending.from(), pending.to());
    return back.ok() ? "undid a merge into " + pending.base() + " a stop interrupted: your checkout could not follow "
        + "it, so " + pending.base() + " is back at " + pending.from() + " (merge again from the thread)"
        : "a merge into " + pending.base() + " a stop interrupted could not be finished or undone: " + Git.said(back);
  }

  /** For an orphan worktree the base is unknown: its branch's first parent chain root is never "no work". */
  private String zeroOrBase(String branch) throws GitException {
    String base = spec.baseBranch();
    if (base == null) {
      Git.Result head = mainTree().run("symbolic-ref", "-q", "--short", "HEAD");
      base = head.ok() ? head.firstLine() : null;
    }
    if (base != null) {
      Git.Result tip = repo().run("rev-parse", "--verify", "-q", "refs/heads/" + base);
      if (tip.ok()) {
        return tip.firstLine();
      }
    }
    return "HEAD";
  }

  /** Worktrees the repository lists inside the gateway's folder (for checks against the threads). */
  List<Path> listed() throws GitException {
    List<Path> out = new ArrayList<>();
    for (String line : repo().ok("worktree", "list", "--porcelain").out().split("\n")) {
      if (line.startsWith("worktree ")) {
        Path p = Path.of(line.substring("worktree ".length()));
        if (p.startsWith(worktrees)) {
          out.add(p);
        }
      }
    }
    return out;
  }

  static void deleteTree(Path dir) {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (var walk = Files.walk(dir)) {
      walk.sorted(java.util.Comparator.reverseOrder()).forEach(ProjectRepo::deleteQuietly);
    } catch (IOException ignored) {
      // what is left is reported by the next reconcile
    }
  }

  private static void deleteQuietly(Path p) {
    if (p != null) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException ignored) {
        // best effort: a temporary file or a worktree file
      }
    }
  }
}
