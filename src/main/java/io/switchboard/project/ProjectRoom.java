package io.switchboard.project;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.common.BlockingLane;
import io.switchboard.config.ProjectSpec;
import io.switchboard.config.Settings;
import io.switchboard.project.Git.GitException;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The project room: the git work of the configured projects' worktrees. Each repository has one
 * lane (its lock): its changes run one at a time on a worker thread, in order, never on an event
 * loop. At start it reconciles each repository with the threads the store knows (a worktree no
 * thread owns, left by a create a stop interrupted, is archived and removed; a merge a stop cut in
 * two is finished). Only the thread room of the same node asks it (local addresses): the thread
 * room holds which thread has which worktree, and writes nothing of git's.
 */
public final class ProjectRoom extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(ProjectRoom.class);

  private final Settings settings;
  private final String gitProgram;
  private final Map<String, ProjectRepo> repos = new HashMap<>();
  private final Map<String, BlockingLane> lanes = new HashMap<>();
  private EventBus bus;

  public ProjectRoom(Settings settings) {
    this(settings, "git");
  }

  ProjectRoom(Settings settings, String gitProgram) {
    this.settings = settings;
    this.gitProgram = gitProgram;
  }

  @Override
  public Future<?> start() {
    bus = vertx.eventBus();
    for (ProjectSpec p : settings.projects()) {
      if (p.perThread()) {
        repos.put(p.id(), new ProjectRepo(p, settings.worktreesDir(), settings.tempDir().resolve("git"), gitProgram));
        lanes.put(p.id(), new BlockingLane(vertx, 1));
      }
    }
    bus.<JsonObject>localConsumer(Addresses.PROJECT_WORKTREE_CREATE, m -> onRepo(m, (repo, b) ->
        repo.create(b.getString("threadId"), b.getString("branch"))));
    bus.<JsonObject>localConsumer(Addresses.PROJECT_CHANGES, m -> onRepo(m, (repo, b) ->
        repo.changes(ProjectRepo.Worktree.of(b))));
    bus.<JsonObject>localConsumer(Addresses.PROJECT_COMMIT, m -> onRepo(m, (repo, b) -> {
      String message = b.getString("message", "").strip();
      if (message.isEmpty()) {
        throw new GitException("a commit needs a message");
      }
      return repo.commit(ProjectRepo.Worktree.of(b), message, b.getString("who"));
    }));
    bus.<JsonObject>localConsumer(Addresses.PROJECT_MERGE, m -> onRepo(m, (repo, b) ->
        repo.merge(ProjectRepo.Worktree.of(b), b.getBoolean("squash", true), b.getString("title", "untitled"),
            b.getString("who"), b.getBoolean("commitFirst", false))));
    bus.<JsonObject>localConsumer(Addresses.PROJECT_CHECKPOINT, m -> onRepo(m, (repo, b) -> {
      JsonObject made = repo.checkpoint(ProjectRepo.Worktree.of(b), b.getLong("turn", 0L));
      return made == null ? new JsonObject() : made;
    }));
    bus.<JsonObject>localConsumer(Addresses.PROJECT_KEEP, m -> onRepo(m, (repo, b) ->
        repo.keep(ProjectRepo.Worktree.of(b), b.getString("title", "untitled"), b.getString("who"))));
    bus.<JsonObject>localConsumer(Addresses.PROJECT_DISCARD, m -> onRepo(m, (repo, b) ->
        repo.discard(ProjectRepo.Worktree.of(b))));
    if (repos.isEmpty()) {
      return Future.succeededFuture();
    }
    // Reconciled before anything else runs on each lane; the room starts at once (a slow repository
    // delays its own threads' commands, not the gateway's start).
    bus.<JsonObject>request(Addresses.STORE_THREAD_LIST, new JsonObject()).onSuccess(reply -> {
      Map<String, List<ProjectRepo.Worktree>> owned = new HashMap<>();
      java.util.Set<String> kept = new java.util.HashSet<>();
      for (Object o : reply.body().getJsonArray("threads")) {
        JsonObject t = (JsonObject) o;
        if ("keeping".equals(t.getString("worktreeState")) || "kept".equals(t.getString("worktreeState"))) {
          kept.add(t.getString("threadId"));
        }
        if (t.getString("projectId") != null && t.getString("branch") != null
            && t.getString("worktreeState") == null) { // discarding (cut short) or discarded: not in use
          owned.computeIfAbsent(t.getString("projectId"), k -> new ArrayList<>()).add(ProjectRepo.Worktree.of(t));
        }
      }
      repos.forEach((id, repo) -> lanes.get(id).run(() -> repo.reconcile(owned.getOrDefault(id, List.of()), kept))
          .onSuccess(done -> done.forEach(line -> log.warn("project {}: {}", id, line)))
          .onFailure(err -> log.error("project {}: could not check its worktrees: {}", id, err.getMessage())));
    }).onFailure(err -> log.error("projects: the threads could not be read to check worktrees", err));
    return Future.succeededFuture();
  }

  /** A git operation on the repository the body's {@code projectId} names. */
  private interface RepoWork {
    JsonObject run(ProjectRepo repo, JsonObject body) throws GitException;
  }

  private void onRepo(Message<JsonObject> m, RepoWork work) {
    JsonObject b = m.body() == null ? new JsonObject() : m.body();
    String id = b.getString("projectId");
    ProjectRepo repo = id == null ? null : repos.get(id);
    if (repo == null || !(b.getValue("threadId") instanceof String)) {
      ErrorCode.BAD_REQUEST.fail(m, "no project with worktrees per thread is called " + id);
      return;
    }
    lanes.get(id).run(() -> work.run(repo, b)).onSuccess(m::reply).onFailure(err -> {
      if (err instanceof GitException) {
        ErrorCode.CONFLICT.fail(m, err.getMessage());
      } else {
        log.error("project {}: {} failed", id, m.address(), err);
        ErrorCode.STORE_FAILED.fail(m, "the git work failed: " + err);
      }
    });
  }
}
