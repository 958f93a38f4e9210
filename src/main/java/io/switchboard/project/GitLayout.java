package io.switchboard.project;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Where a project's repository keeps its files, read from the project's own {@code .git} (a
 * directory, or a {@code gitdir:} file when the project is itself a linked worktree) without
 * running git. The project's directory is the person's, never an agent's, so these files are trusted;
 * a thread's worktree is the agent's, so its admin directory is derived from the common one
 * ({@code <common>/worktrees/<thread id>}), never from its {@code .git} pointer. Blocking.
 */
public record GitLayout(Path gitDir, Path commonDir) {

  /** The layout of the repository at {@code projectPath}, or null when it is not a git repository. */
  public static GitLayout of(Path projectPath) throws IOException {
    Path dotGit = projectPath.resolve(".git");
    if (Files.isDirectory(dotGit, LinkOption.NOFOLLOW_LINKS)) {
      Path real = dotGit.toRealPath();
      return new GitLayout(real, real);
    }
    if (!Files.isRegularFile(dotGit, LinkOption.NOFOLLOW_LINKS)) {
      return null;
    }
    String pointer = Files.readString(dotGit, StandardCharsets.UTF_8).strip();
    if (!pointer.startsWith("gitdir:")) {
      throw new IOException(dotGit + " is not a gitdir pointer");
    }
    Path gitDir = projectPath.resolve(pointer.substring("gitdir:".length()).strip()).normalize().toRealPath();
    Path common = gitDir;
    Path commondir = gitDir.resolve("commondir");
    if (Files.isRegularFile(commondir)) {
      common = gitDir.resolve(Files.readString(commondir, StandardCharsets.UTF_8).strip()).normalize().toRealPath();
    }
    return new GitLayout(gitDir, common);
  }

  /** The admin directory git keeps for the thread's worktree (named after the worktree's folder). */
  public Path adminDir(String threadId) {
    return commonDir.resolve("worktrees").resolve(threadId);
  }
}
