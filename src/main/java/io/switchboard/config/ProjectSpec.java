package io.switchboard.config;

import io.vertx.core.json.JsonArray;
import java.nio.file.Path;
import java.util.List;

/**
 * One configured project: a directory on the host (a git repository or not) that threads start in.
 * {@code agents} empty means every agent may run there. A {@link Worktrees#PER_THREAD} project gives
 * each thread a git worktree of its own on a branch of its own, made from {@code baseBranch} (null:
 * the repository's current branch); a {@link Worktrees#SHARED} one runs every thread in
 * {@code path} itself. {@code mcpServers} is handed as is to the agent's {@code session/new}.
 * {@code copyFiles} (paths relative to {@code path}, untracked files such as {@code .env}) are copied
 * into each new worktree, and {@code setup} (an argv) runs there before the agent starts.
 */
public record ProjectSpec(String id, String name, Path path, List<String> agents, Worktrees worktrees,
                          String baseBranch, JsonArray mcpServers, List<String> copyFiles, List<String> setup) {

  /** Whether each thread gets a worktree of its own or all share the project's directory. */
  public enum Worktrees {
    PER_THREAD("perThread"), SHARED("shared");

    public final String key;

    Worktrees(String key) {
      this.key = key;
    }
  }

  public ProjectSpec {
    path = path.toAbsolutePath().normalize();
    agents = agents == null ? List.of() : List.copyOf(agents);
    mcpServers = mcpServers == null ? new JsonArray() : mcpServers.copy();
    copyFiles = copyFiles == null ? List.of() : List.copyOf(copyFiles);
    setup = setup == null ? List.of() : List.copyOf(setup);
  }

  /** Whether {@code agentId} may run in this project. */
  public boolean allows(String agentId) {
    return agents.isEmpty() || agents.contains(agentId);
  }

  public boolean perThread() {
    return worktrees == Worktrees.PER_THREAD;
  }
}
