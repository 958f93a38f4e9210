package io.switchboard.thread;

import io.switchboard.bus.Addresses;
import io.switchboard.common.RandomIds;
import io.switchboard.bus.NodeScope;
import io.switchboard.bus.ErrorCode;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.ProjectSpec;
import io.switchboard.permission.ChatApproval;
import io.switchboard.config.Settings;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thread room: threads (one conversation with one agent), the surfaces attached to each, and
 * each thread's numbered event stream. An event from the agent room gets the thread's next
 * {@code seq}, is written to the transcript, and only then published on
 * {@code sb.thread.<id>.events}, so surfaces see events in order and history replay never misses
 * one a surface saw.
 */
public final class ThreadRoom extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(ThreadRoom.class);
  private static final int TITLE_LENGTH = 60;
  /** Making a worktree includes the project's setup command (bounded at 10 minutes there). */
  private static final long WORKTREE_CREATE_MS = 11 * 60_000;
  /** A commit, merge or discard: git on a whole working tree, bounded by the project room. */
  private static final long PROJECT_ACTION_MS = 6 * 60_000;

  private final Settings settings;
  private final Map<String, ThreadState> threads = new LinkedHashMap<>();
  private final RandomIds ids = new RandomIds();
  private EventBus bus;

  /** What the room knows of one thread. */
  private static final class ThreadState {
    final String id;
    final String agentId;
    final String workspace;
    final long createdAt;
    String title;
    String acpSessionId;
    /** The agent mode a person chose for this thread (kept while the gateway runs): its agent gets it at every start. */
    String modeId;
    /** The mode ids its agent last said it offers (session_modes), to refuse others; null before. */
    java.util.List<String> modeIds;
    /** The session config values a person chose for this thread, set at every start of its agent. */
    final JsonObject config = new JsonObject();
    /** Config id -> the values its agent last said it takes (session_config), to refuse others; null before. */
    java.util.Map<String, java.util.List<String>> configValues;
    String startedBy;
    /** Who set the title: null (its first message), "agent" (session_info_update) or "person" (never overridden). */
    String titleBy;
    /** When a person archived it (null: in the list). */
    Long archivedAt;
    /** Its deletion is under way: nothing new starts in it. */
    boolean deleting;
    long lastSeq;
    boolean busy;
    /** The project it works in (null: a scratch workspace), and for a worktree its branch and base. */
    String projectId;
    String branch;
    String baseRef;
    String baseCommit;
    /**
     * Null while its worktree is in use; "discarding" from just before its removal begins (a stop in
     * the middle leaves it so, and the next start finishes: the project room removes worktrees no
     * thread still uses, keeping their work); "discarded" once it is gone.
     */
    String worktreeState;
    /** Turns ended while this gateway ran (numbers its checkpoints). */
    long turns;
    /** What the last checkpoint said (files left out, its budget reached): said again only when it changes. */
    String checkpointNote;
    /** A person's commit, merge or discard of its work is under way: one at a time. */
    boolean projectBusy;
    final Set<String> routes = new LinkedHashSet<>();

    ThreadState(String id, String agentId, String workspace, long createdAt) {
      this.id = id;
      this.agentId = agentId;
      this.workspace = workspace;
      this.createdAt = createdAt;
    }

    JsonObject toJson() {
      return new JsonObject().put("threadId", id).put("agent", agentId).put("title", title)
          .put("workspace", workspace).put("acpSessionId", acpSessionId).put("createdAt", createdAt)
          .put("lastSeq", lastSeq).put("busy", busy).put("routes", new JsonArray(new ArrayList<>(routes)))
          .put("startedBy", startedBy).put("archived", archivedAt != null)
          .put("project", projectId).put("branch", branch).put("baseRef", baseRef)
          .put("worktree", branch == null ? null : worktreeState == null ? "active" : worktreeState);
    }

    /** What the project room needs to find the thread's worktree. */
    JsonObject worktreeFacts() {
      return new JsonObject().put("threadId", id).put("projectId", projectId).put("workspace", workspace)
          .put("branch", branch).put("baseRef", baseRef).put("baseCommit", baseCommit);
    }

    JsonObject row() {
      return new JsonObject().put("threadId", id).put("agentId", agentId).put("workspace", workspace)
          .put("title", title).put("acpSessionId", acpSessionId).put("createdAt", createdAt)
          .put("startedBy", startedBy).put("titleBy", titleBy).put("archivedAt", archivedAt)
          .put("projectId", projectId).put("branch", branch).put("baseRef", baseRef).put("baseCommit", baseCommit)
          .put("worktreeState", worktreeState);
    }
  }

  public ThreadRoom(Settings settings) {
    this.settings = settings;
  }

  /** Where this room serves its commands (a cluster node's own addresses; see NodeScope). */
  private NodeScope scope = NodeScope.SINGLE;
  /** Cluster mode: the thread facts this node published, this start. */
  private long factSeq;

  @Override
  public Future<?> start() {
    scope = NodeScope.of(config());
    bus = vertx.eventBus();
    return bus.<JsonObject>request(Addresses.STORE_THREAD_LIST, new JsonObject()).onSuccess(reply -> {
      List<ThreadState> finishing = new ArrayList<>();
      for (Object o : reply.body().getJsonArray("threads")) {
        JsonObject row = (JsonObject) o;
        ThreadState t = new ThreadState(row.getString("threadId"), row.getString("agentId"),
            row.getString("workspace"), row.getLong("createdAt"));
        t.title = row.getString("title");
        t.acpSessionId = row.getString("acpSessionId");
        t.startedBy = row.getString("startedBy");
        t.titleBy = row.getString("titleBy");
        t.archivedAt = row.getLong("archivedAt");
        t.projectId = row.getString("projectId");
        t.branch = row.getString("branch");
        t.baseRef = row.getString("baseRef");
        t.baseCommit = row.getString("baseCommit");
        t.worktreeState = row.getString("worktreeState");
        if ("discarding".equals(t.worktreeState) || "keeping".equals(t.worktreeState)) {
          // A stop cut its discard or keep short: the project room's start removes what is left (a
          // discarded thread's work archived first, a kept one's branch left as it is).
          t.worktreeState = "discarding".equals(t.worktreeState) ? "discarded" : "kept";
          t.archivedAt = t.archivedAt == null ? System.currentTimeMillis() : t.archivedAt;
          finishing.add(t);
        }
        t.lastSeq = row.getLong("lastSeq");
        row.getJsonArray("routes").forEach(r -> t.routes.add((String) r));
        threads.put(t.id, t);
      }
      log.info("{} threads loaded", threads.size());
      finishing.forEach(t -> saveAndAnnounce(null, t, "the end of its discard"));
      scope.<JsonObject>serve(bus, Addresses.THREAD_CREATE, this::create);
      scope.<JsonObject>serve(bus, Addresses.THREAD_LIST, this::list);
      scope.<JsonObject>serve(bus, Addresses.THREAD_STATUS, m -> m.reply(counted(new JsonObject()
          .put("threads", threads.size()))));
      scope.<JsonObject>serve(bus, Addresses.THREAD_GET, m -> withThread(m, t -> m.reply(json(t))));
      scope.<JsonObject>serve(bus, Addresses.THREAD_ATTACH, m -> withThread(m, t -> route(m, t, true)));
      scope.<JsonObject>serve(bus, Addresses.THREAD_DETACH, m -> withThread(m, t -> route(m, t, false)));
      scope.<JsonObject>serve(bus, Addresses.THREAD_PROMPT, m -> withThread(m, t -> prompt(m, t)));
      scope.<JsonObject>serve(bus, Addresses.THREAD_CANCEL, m -> withThread(m, t -> forward(m,
          Addresses.AGENT_CANCEL, new JsonObject().put("threadId", t.id))));
      scope.<JsonObject>serve(bus, Addresses.THREAD_RENAME, m -> withThread(m, t -> rename(m, t)));
      scope.<JsonObject>serve(bus, Addresses.THREAD_ARCHIVE, m -> withThread(m, t -> archive(m, t)));
      scope.<JsonObject>serve(bus, Addresses.THREAD_DELETE, m -> withThread(m, t -> delete(m, t)));
      scope.<JsonObject>serve(bus, Addresses.THREAD_SET_CONFIG, m -> withThread(m, t -> setConfig(m, t)));
      scope.<JsonObject>serve(bus, Addresses.THREAD_SET_MODE, m -> withThread(m, t -> {
        if (!(m.body().getValue("modeId") instanceof String modeId) || modeId.isEmpty()) {
          ErrorCode.BAD_REQUEST.fail(m, "modeId is missing");
          return;
        }
        if (t.modeIds != null && !t.modeIds.contains(modeId)) {
          ErrorCode.BAD_REQUEST.fail(m, "the agent of thread " + t.id + " has no mode \"" + modeId + "\" (its modes: "
              + t.modeIds + ")");
          return;
        }
        t.modeId = modeId;
        forward(m, Addresses.AGENT_SET_MODE, new JsonObject().put("threadId", t.id).put("agentId", t.agentId)
            .put("workspace", t.workspace).put("projectId", t.projectId).put("acpSessionId", t.acpSessionId).put("modeId", modeId));
      }));
      scope.<JsonObject>serve(bus, Addresses.THREAD_HISTORY, m -> withThread(m, t -> history(m, t)));
      scope.<JsonObject>serve(bus, Addresses.THREAD_RECORD, m -> withThread(m, t -> record(m, t)));
      scope.<JsonObject>serve(bus, Addresses.THREAD_SESSION, m -> withThread(m, t -> session(m, t)));
      scope.<JsonObject>serve(bus, Addresses.THREAD_CHANGES, m -> withThread(m, t -> changes(m, t)));
      scope.<JsonObject>serve(bus, Addresses.THREAD_COMMIT, m -> withThread(m, t -> projectAction(m, t, "commit")));
      scope.<JsonObject>serve(bus, Addresses.THREAD_MERGE, m -> withThread(m, t -> projectAction(m, t, "merge")));
      scope.<JsonObject>serve(bus, Addresses.THREAD_DISCARD, m -> withThread(m, t -> projectAction(m, t,
          "discard")));
      scope.<JsonObject>serve(bus, Addresses.THREAD_KEEP, m -> withThread(m, t -> projectAction(m, t, "keep")));
    });
  }

  private void create(Message<JsonObject> m) {
    JsonObject b = m.body() == null ? new JsonObject() : m.body();
    Object agentValue = b.getValue("agent", settings.defaultAgent());
    if (!(agentValue instanceof String agentId) || settings.agent(agentId).isEmpty()) {
      ErrorCode.BAD_REQUEST.fail(m, "unknown agent " + agentValue + " (configured: "
          + settings.agents().stream().map(AgentSpec::id).toList() + ")");
      return;
    }
    Object surface = b.getValue("surface");
    if (surface != null && !(surface instanceof String)) {
      ErrorCode.BAD_REQUEST.fail(m, "surface must be a string");
      return;
    }
    ProjectSpec project;
    try {
      project = projectOf(b, agentId);
    } catch (IllegalArgumentException bad) {
      ErrorCode.BAD_REQUEST.fail(m, bad.getMessage());
      return;
    }
    Object branch = b.getValue("branch");
    if (branch != null && !(branch instanceof String)) {
      ErrorCode.BAD_REQUEST.fail(m, "branch must be a string");
      return;
    }
    if (branch != null && !((String) branch).isBlank() && (project == null || !project.perThread())) {
      ErrorCode.BAD_REQUEST.fail(m, "a branch name needs a project whose threads get worktrees of their own");
      return;
    }
    Object imported = b.getValue("session");
    if (imported != null && (!(imported instanceof String s) || s.isEmpty() || s.length() > 500)) {
      ErrorCode.BAD_REQUEST.fail(m, "session must be the id of one of the agent's sessions");
      return;
    }
    if (imported != null && (project == null || branch != null)) {
      ErrorCode.BAD_REQUEST.fail(m, project == null ? "continuing a session needs the project it was begun in"
          : "a session begun elsewhere continues in its project's own folder, not on a new branch");
      return;
    }
    if (imported != null) {
      // Continued twice, one session would have two agents writing to it: the thread that has it is the answer.
      ThreadState already = threads.values().stream().filter(x -> imported.equals(x.acpSessionId)
          && x.agentId.equals(agentId) && !x.deleting).findFirst().orElse(null);
      if (already != null) {
        m.reply(json(already));
        return;
      }
    }
    String id = newId();
    Future<JsonObject> place;
    if (imported != null) {
      // The session was begun in the project's folder (a terminal there): it continues there.
      place = Future.succeededFuture(new JsonObject().put("workspace", project.path().toString())
          .put("acpSessionId", imported));
    } else if (project == null) {
      place = Future.succeededFuture(new JsonObject().put("workspace",
          settings.dataDir().resolve("workspaces").resolve(id).toString()));
    } else if (project.perThread()) {
      // The worktree is made before the thread is saved: one left by a stop in between has no thread,
      // and the project room removes it at the next start.
      place = bus.<JsonObject>request(Addresses.PROJECT_WORKTREE_CREATE, new JsonObject().put("projectId",
              project.id()).put("threadId", id).put("branch", branch),
          new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(WORKTREE_CREATE_MS)).map(r -> r.body());
    } else {
      place = Future.succeededFuture(new JsonObject().put("workspace", project.path().toString()));
    }
    place.onFailure(err -> relayFailure(m, err)).onSuccess(facts -> created(m, b, id, agentId, project, facts));
  }

  /**
   * The project a new thread works in: the one named ({@code ""} or null: none), else the default
   * project when its agent may run there. Refuses an unknown project or one its agent may not use.
   */
  private ProjectSpec projectOf(JsonObject b, String agentId) {
    if (!b.containsKey("project")) {
      ProjectSpec fallback = settings.defaultProject() == null ? null
          : settings.project(settings.defaultProject()).orElse(null);
      return fallback != null && fallback.allows(agentId) ? fallback : null;
    }
    Object value = b.getValue("project");
    if (value == null || "".equals(value)) {
      return null;
    }
    ProjectSpec project = value instanceof String id ? settings.project(id).orElse(null) : null;
    if (project == null) {
      throw new IllegalArgumentException("unknown project " + value + " (configured: "
          + settings.projects().stream().map(ProjectSpec::id).toList() + ")");
    }
    if (!project.allows(agentId)) {
      throw new IllegalArgumentException("agent " + agentId + " may not run in project " + project.id()
          + " (its agents: " + project.agents() + ")");
    }
    return project;
  }

  private void created(Message<JsonObject> m, JsonObject b, String id, String agentId, ProjectSpec project,
                       JsonObject facts) {
    ThreadState t = new ThreadState(id, agentId, facts.getString("workspace"), System.currentTimeMillis());
    t.acpSessionId = facts.getString("acpSessionId");
    if (project != null) {
      t.projectId = project.id();
      t.branch = facts.getString("branch");
      t.baseRef = facts.getString("baseRef");
      t.baseCommit = facts.getString("baseCommit");
    }
    Object surface = b.getValue("surface");
    if (b.getValue("title") instanceof String title && !title.isBlank()) {
      t.title = shorten(title);
    }
    if (b.getValue("startedBy") instanceof String who) {
      t.startedBy = who;
    }
    threads.put(id, t);
    Future<?> saved = bus.request(Addresses.STORE_THREAD_SAVE, t.row());
    if (surface != null) {
      t.routes.add((String) surface);
      saved = saved.compose(x -> bus.request(Addresses.STORE_THREAD_ROUTE,
          new JsonObject().put("threadId", id).put("surface", surface).put("attached", true)));
    }
    saved.onSuccess(x -> {
      log.info("thread {} created with agent {}{}", id, agentId, project == null ? "" : " in project "
          + project.id() + (t.branch == null ? "" : " on branch " + t.branch));
      m.reply(json(t));
      changed(json(t)); // every open page lists it at once
      setUpNotes(t, facts);
      if (t.acpSessionId != null) {
        openImported(t);
      }
    }).onFailure(err -> {
      threads.remove(id);
      ErrorCode.STORE_FAILED.fail(m, "could not save the thread: " + err.getMessage());
    });
  }

  /** What making the worktree said (files copied, submodules, the setup command's output), on the thread. */
  private void setUpNotes(ThreadState t, JsonObject facts) {
    StringBuilder text = new StringBuilder();
    if (t.branch != null) {
      String project = settings.project(t.projectId).map(ProjectSpec::name).orElse(t.projectId);
      text.append("Working in a worktree of project ").append(project).append(" on branch ").append(t.branch)
          .append(" (from ").append(t.baseRef).append(" at ").append(t.baseCommit, 0, 7).append(").");
    }
    JsonArray notes = facts.getJsonArray("notes", new JsonArray());
    notes.forEach(n -> text.append(' ').append(n).append('.'));
    JsonObject setup = facts.getJsonObject("setup");
    if (setup != null) {
      text.append("\nSetup ").append(String.join(" ", setup.getJsonArray("command").stream().map(String::valueOf)
          .toList())).append(" exited ").append(setup.getInteger("exit"))
          .append(Boolean.TRUE.equals(setup.getBoolean("timedOut")) ? " (stopped after 10 minutes)" : "")
          .append(":\n").append(setup.getString("output", ""));
    }
    if (!text.isEmpty()) {
      boolean failed = setup != null && setup.getInteger("exit", 0) != 0;
      append(t, new JsonObject().put("kind", "system").put("level", failed ? "error" : "info")
          .put("text", text.toString().strip()));
    }
  }

  /** A session begun elsewhere: its agent is started now and loads it, its history becoming the thread's. */
  private void openImported(ThreadState t) {
    bus.request(Addresses.AGENT_OPEN, new JsonObject().put("threadId", t.id).put("agentId", t.agentId)
            .put("workspace", t.workspace).put("projectId", t.projectId).put("acpSessionId", t.acpSessionId)
            .put("importHistory", true), new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(WORKTREE_CREATE_MS))
        .onFailure(err -> append(t, new JsonObject().put("kind", "system").put("level", "error")
            .put("text", "The session could not be opened: " + err.getMessage())));
  }

  /** After each turn in a worktree: a restore point of its files, never moving its branch. */
  private void checkpoint(ThreadState t) {
    if (noWorktree(t) != null) {
      return;
    }
    long turn = ++t.turns;
    bus.<JsonObject>request(Addresses.PROJECT_CHECKPOINT, t.worktreeFacts().put("turn", turn),
            new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(PROJECT_ACTION_MS))
        .onSuccess(reply -> {
          // Files left out, or the budget reached: said in the thread, once while it stays so.
          String note = reply.body().getString("note");
          if (note != null && !note.equals(t.checkpointNote)) {
            append(t, new JsonObject().put("kind", "system").put("level", "warning").put("text", note));
          }
          t.checkpointNote = note;
        })
        .onFailure(err -> log.warn("thread {}: no checkpoint after turn {}: {}", t.id, turn, err.getMessage()));
  }

  /** Written before a worktree's removal begins, so a stop in the middle is finished at the next start. */
  private Future<?> markLeaving(ThreadState t, String state) {
    t.worktreeState = state;
    return bus.request(Addresses.STORE_THREAD_SAVE, t.row());
  }

  /** Why a thread has no worktree to act on, or null when it has one. */
  private String noWorktree(ThreadState t) {
    if (t.projectId == null) {
      return "thread " + t.id + " works in a scratch folder, not in a project";
    }
    if (t.branch == null) {
      return "thread " + t.id + " works in project " + t.projectId + "'s own folder, not in a worktree of its own; "
          + "review its changes there";
    }
    if ("kept".equals(t.worktreeState) || "keeping".equals(t.worktreeState)) {
      return "the work of thread " + t.id + " was kept on branch " + t.branch + " and its worktree removed";
    }
    if (t.worktreeState != null) {
      return "the work of thread " + t.id + " was discarded (kept under refs/switchboard/archive/" + t.id + ")";
    }
    return null;
  }

  /** The thread's work against its base branch, and what people did to it (the audit). */
  private void changes(Message<JsonObject> m, ThreadState t) {
    String none = noWorktree(t);
    if (none != null) {
      ErrorCode.BAD_REQUEST.fail(m, none);
      return;
    }
    bus.<JsonObject>request(Addresses.PROJECT_CHANGES, t.worktreeFacts(),
            new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(PROJECT_ACTION_MS))
        .compose(changes -> bus.<JsonObject>request(Addresses.STORE_PROJECT_ACTIONS, new JsonObject()
            .put("threadId", t.id)).map(actions -> changes.body().put("project", t.projectId)
            .put("actions", actions.body().getJsonArray("actions"))))
        .onSuccess(m::reply)
        .onFailure(err -> relayFailure(m, err));
  }

  /**
   * A person's commit, merge or discard of the thread's work: refused while its agent is at work (a
   * merge would take half a turn's edits) or while another is under way; written to the project
   * audit and said on the thread, with the surface and person, never as the agent.
   */
  private void projectAction(Message<JsonObject> m, ThreadState t, String action) {
    JsonObject b = m.body();
    String none = noWorktree(t);
    if (none != null) {
      ErrorCode.BAD_REQUEST.fail(m, none);
      return;
    }
    if (t.busy || t.projectBusy) {
      ErrorCode.BUSY.fail(m, t.busy ? "the agent of thread " + t.id + " is at work; let its turn end (or stop it) "
          + "before you " + action + " its work" : "another change to thread " + t.id + "'s work is under way");
      return;
    }
    String surface = b.getValue("surface") instanceof String s && !s.isEmpty() ? s : null;
    if (surface == null) {
      ErrorCode.BAD_REQUEST.fail(m, "a " + action + " needs the surface it came from");
      return;
    }
    String user = b.getValue("user") instanceof String u ? u : null;
    if (b.containsKey("chat")) {
      // A chat's command: its users are judged by the rule of who may answer a card (the plugin's
      // approvers, else the thread's starter), with the starter this room knows.
      ChatApproval.Verdict verdict;
      try {
        verdict = ChatApproval.parse(b.getValue("chat")).judge(user, t.startedBy);
      } catch (IllegalArgumentException bad) {
        ErrorCode.BAD_REQUEST.fail(m, bad.getMessage());
        return;
      }
      if (!verdict.allowed()) {
        ErrorCode.NOT_APPROVER.fail(m, "Only this conversation's starter or an approver of this chat may "
            + action + " its work.");
        return;
      }
    }
    String who = user == null ? surface : surface + ":" + user;
    JsonObject body = t.worktreeFacts().put("who", who);
    String address;
    switch (action) {
      case "commit" -> {
        if (!(b.getValue("message") instanceof String msg) || msg.isBlank()) {
          ErrorCode.BAD_REQUEST.fail(m, "a commit needs a message");
          return;
        }
        body.put("message", msg.strip());
        address = Addresses.PROJECT_COMMIT;
      }
      case "merge" -> {
        body.put("squash", !Boolean.FALSE.equals(b.getValue("squash"))).put("title", t.title == null ? t.id : t.title)
            .put("commitFirst", Boolean.TRUE.equals(b.getValue("commitFirst")));
        address = Addresses.PROJECT_MERGE;
      }
      case "keep" -> {
        body.put("title", t.title == null ? t.id : t.title);
        address = Addresses.PROJECT_KEEP;
      }
      default -> address = Addresses.PROJECT_DISCARD;
    }
    t.projectBusy = true;
    // A discard or keep removes the worktree: the agent is stopped first (nothing may write into a
    // folder that is going away), and the thread marked before git starts (a stop in between is finished).
    boolean leaves = action.equals("discard") || action.equals("keep");
    Future<?> before = leaves
        ? bus.request(Addresses.AGENT_STOP, new JsonObject().put("threadId", t.id)) : Future.succeededFuture();
    before.compose(x -> leaves ? markLeaving(t, action.equals("keep") ? "keeping" : "discarding")
            : Future.succeededFuture())
        .compose(x -> bus.<JsonObject>request(address, body,
            new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(PROJECT_ACTION_MS)))
        .compose(reply -> {
          JsonObject result = reply.body();
          if (leaves) {
            t.worktreeState = action.equals("keep") ? "kept" : "discarded";
            t.archivedAt = t.archivedAt == null ? System.currentTimeMillis() : t.archivedAt;
          }
          JsonObject audit = new JsonObject().put("threadId", t.id).put("projectId", t.projectId)
              .put("action", action).put("surface", surface).put("user", user).put("detail", result.copy()
                  .put("branch", t.branch).put("baseRef", t.baseRef));
          return bus.request(Addresses.STORE_PROJECT_ACTION, audit)
              .compose(x -> bus.request(Addresses.STORE_THREAD_SAVE, t.row()))
              .map(x -> result);
        })
        .onComplete(done -> t.projectBusy = false)
        .onSuccess(result -> {
          append(t, new JsonObject().put("kind", "system").put("level", "info").put("text", said(t, action, result,
              who)));
          changed(json(t));
          m.reply(result.put("thread", json(t)));
        })
        .onFailure(err -> relayFailure(m, err));
  }

  private static String said(ThreadState t, String action, JsonObject result, String who) {
    return switch (action) {
      case "commit" -> "Committed " + result.getString("commit").substring(0, 7) + " on " + t.branch + " (by " + who
          + ").";
      case "merge" -> "Merged " + t.branch + " into " + t.baseRef + " as " + result.getString("commit").substring(0, 7)
          + (result.getBoolean("squash") ? " (one squashed commit)" : "") + " (by " + who + ")."
          + (Boolean.FALSE.equals(result.getBoolean("threadMoved")) ? " The thread's branch could not follow (files"
          + " not committed are in the way), so Changes still shows the merged work until they are committed or"
          + " removed." : "");
      case "keep" -> "Kept the work on branch " + t.branch + (result.getString("committed") == null ? ""
          : " (what was not committed is committed as " + result.getString("committed").substring(0, 7) + ")")
          + ", not merged; its worktree is removed (by " + who + "). The thread is archived.";
      default -> "Discarded the work of " + t.branch + (result.getString("archive") == null ? " (there was none)"
          : "; it is kept under " + result.getString("archive")) + " (by " + who + "). The thread is archived.";
    };
  }

  private void list(Message<JsonObject> m) {
    JsonArray out = new JsonArray();
    threads.values().forEach(t -> out.add(json(t)));
    m.reply(counted(new JsonObject().put("threads", out)));
  }

  /** Cluster mode: an edge that reconciled with this reply has heard this node's thread facts up to here. */
  private JsonObject counted(JsonObject reply) {
    if (scope.node() != null) {
      scope.stamp(reply).put("seq", factSeq);
    }
    return reply;
  }

  /**
   * Tells every surface what a thread is now ({@code sb.thread.changed}). In a cluster the facts of
   * this node are numbered, so an edge that missed one (a lost connection) can tell and list again.
   */
  private void changed(JsonObject fact) {
    if (scope.node() != null) {
      fact.put("seq", ++factSeq);
    }
    bus.publish(Addresses.THREAD_CHANGED, fact);
  }

  private void route(Message<JsonObject> m, ThreadState t, boolean attach) {
    if (!(m.body().getValue("surface") instanceof String surface) || surface.isEmpty()) {
      ErrorCode.BAD_REQUEST.fail(m, "surface is missing");
      return;
    }
    boolean changed = attach ? t.routes.add(surface) : t.routes.remove(surface);
    if (!changed) {
      m.reply(json(t));
      return;
    }
    bus.request(Addresses.STORE_THREAD_ROUTE, new JsonObject().put("threadId", t.id).put("surface", surface)
            .put("attached", attach))
        .onSuccess(x -> m.reply(json(t)))
        .onFailure(err -> ErrorCode.STORE_FAILED.fail(m, err.getMessage()));
  }

  private void prompt(Message<JsonObject> m, ThreadState t) {
    JsonObject b = m.body();
    PromptImages.Checked images;
    try {
      images = PromptImages.check(b.getValue("images"));
    } catch (IllegalArgumentException bad) {
      ErrorCode.BAD_REQUEST.fail(m, bad.getMessage());
      return;
    }
    String text = b.getValue("text") instanceof String s ? s : "";
    if (t.worktreeState != null) {
      ErrorCode.BAD_REQUEST.fail(m, "the work of this thread was " + ("kept".equals(t.worktreeState)
          ? "kept on branch " + t.branch : "discarded") + ", so its agent has no folder to work in; start a new "
          + "thread in project " + t.projectId);
      return;
    }
    if (text.isBlank() && images.isEmpty()) {
      ErrorCode.BAD_REQUEST.fail(m, "text is missing or empty");
      return;
    }
    if (b.getValue("surface") instanceof String surface && t.routes.add(surface)) {
      bus.request(Addresses.STORE_THREAD_ROUTE, new JsonObject().put("threadId", t.id).put("surface", surface)
          .put("attached", true))
          .onFailure(err -> log.error("thread {}: the route of {} could not be saved", t.id, surface, err));
    }
    // A message to an archived thread (from an IM chat that still has it) brings it back.
    if (t.title == null || t.archivedAt != null) {
      if (t.title == null) {
        t.title = shorten(text.isBlank() ? "(an image)" : text);
      }
      t.archivedAt = null;
      saveAndAnnounce(null, t, "the title");
    }
    JsonObject event = new JsonObject().put("kind", "user_message").put("text", text);
    if (!images.isEmpty()) {
      event.put("images", images.forTranscript());
    }
    if (b.getValue("user") instanceof String user) {
      event.put("user", user);
    }
    // The reply says which event the prompt became, so a surface can tell its own turn.
    long seq = t.lastSeq + 1;
    append(t, event);
    bus.<JsonObject>request(Addresses.AGENT_PROMPT, new JsonObject().put("threadId", t.id).put("agentId", t.agentId)
            .put("workspace", t.workspace).put("projectId", t.projectId).put("acpSessionId", t.acpSessionId).put("modeId", t.modeId)
            .put("config", t.config.copy()).put("text", text).put("images", images.forAgent())
            .put("promptedBy", b.getValue("promptedBy") instanceof String who ? who : null))
        .onSuccess(reply -> m.reply(reply.body().put("seq", seq)))
        .onFailure(err -> {
          // The message is in the transcript already (every surface saw it): say, right after it, that
          // it never reached the agent, so history does not show it as asked.
          append(t, new JsonObject().put("kind", "system").put("level", "error").put("refusedSeq", seq)
              .put("text", "That message was not sent to the agent: " + err.getMessage()));
          relayFailure(m, err);
        });
  }

  private void setConfig(Message<JsonObject> m, ThreadState t) {
    if (!(m.body().getValue("configId") instanceof String id) || id.isEmpty()
        || !(m.body().getValue("value") instanceof String value)) {
      ErrorCode.BAD_REQUEST.fail(m, "configId and value (strings) are needed");
      return;
    }
    if (t.configValues != null && !(t.configValues.containsKey(id) && t.configValues.get(id).contains(value))) {
      ErrorCode.BAD_REQUEST.fail(m, "the agent of thread " + t.id + " has no setting " + id + " = " + value
          + " (its settings: " + t.configValues + ")");
      return;
    }
    t.config.put(id, value);
    forward(m, Addresses.AGENT_SET_CONFIG, new JsonObject().put("threadId", t.id).put("agentId", t.agentId)
        .put("workspace", t.workspace).put("projectId", t.projectId).put("acpSessionId", t.acpSessionId).put("configId", id).put("value", value));
  }

  private void rename(Message<JsonObject> m, ThreadState t) {
    if (!(m.body().getValue("title") instanceof String title) || title.isBlank()) {
      ErrorCode.BAD_REQUEST.fail(m, "title must be a non-empty string");
      return;
    }
    t.title = shorten(title);
    t.titleBy = "person";
    saveAndAnnounce(m, t, "the title");
  }

  /**
   * Archives a thread (hidden from every list, its transcript and workspace kept) or restores it.
   * A thread whose agent is at work is not archived: its questions would wait where nobody looks.
   */
  private void archive(Message<JsonObject> m, ThreadState t) {
    boolean archived = !Boolean.FALSE.equals(m.body().getValue("archived"));
    if (archived && t.busy) {
      ErrorCode.BUSY.fail(m, "thread " + t.id + " is at work; stop its turn before archiving it");
      return;
    }
    t.archivedAt = archived ? (t.archivedAt == null ? System.currentTimeMillis() : t.archivedAt) : null;
    saveAndAnnounce(m, t, archived ? "the archiving" : "the restoring");
  }

  /**
   * Deletes a thread for good: its agent stopped, its transcript, routes and row removed, its
   * workspace folder removed (links inside it are removed, never followed). Only an archived thread
   * (two steps: nothing is deleted by one slip), idle, that no chat follows (a chat would be left
   * pointing at nothing; it sends /new first). The ledger keeps its permission requests: the audit
   * trail outlives the conversation.
   */
  private void delete(Message<JsonObject> m, ThreadState t) {
    List<String> chats = t.routes.stream().filter(s -> !s.equals("web")).toList();
    if (t.archivedAt == null) {
      ErrorCode.BAD_REQUEST.fail(m, "thread " + t.id + " is not archived; archive it before deleting it");
    } else if (t.busy || t.deleting || t.projectBusy) {
      ErrorCode.BUSY.fail(m, "thread " + t.id + (t.deleting ? " is being deleted" : t.projectBusy
          ? " has a commit, merge, keep or discard under way" : " is at work"));
    } else if (!chats.isEmpty()) {
      ErrorCode.BAD_REQUEST.fail(m, "the chats " + chats + " still follow thread " + t.id
          + "; send /new there (or wait for them to move on) before deleting it");
    } else {
      t.deleting = true;
      Path workspace = Path.of(t.workspace);
      // Its agent's private temporary folder (the sandbox's TMPDIR) goes with it, project or not.
      Path sandbox = io.switchboard.process.Sandbox.Writes.tmp(settings.dataDir(), t.id).getParent();
      // A project's folder is the person's: only a scratch workspace is removed here; a worktree is
      // discarded by the project room (its work kept under an archive ref first).
      boolean worktree = t.branch != null && !"discarded".equals(t.worktreeState);
      bus.request(Addresses.AGENT_STOP, new JsonObject().put("threadId", t.id).put("delete", true))
          .compose(x -> worktree ? markLeaving(t, "discarding").compose(y -> bus.request(Addresses.PROJECT_DISCARD,
              t.worktreeFacts(), new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(PROJECT_ACTION_MS)))
              : Future.succeededFuture())
          .compose(x -> bus.request(Addresses.STORE_THREAD_DELETE, new JsonObject().put("threadId", t.id)))
          .compose(x -> vertx.executeBlocking(() -> removeTree(sandbox)
              + (t.projectId != null ? 0 : removeTree(workspace)), false))
          .onSuccess(left -> {
            threads.remove(t.id);
            if (left > 0) {
              log.warn("thread {} deleted; {} files of its workspace {} or its temporary folder {} could not be "
                  + "removed", t.id, left, workspace, sandbox);
            } else {
              log.info("thread {} deleted with its workspace", t.id);
            }
            JsonObject gone = json(t).put("deleted", true);
            changed(gone);
            m.reply(gone);
          })
          .onFailure(err -> {
            t.deleting = false;
            log.error("thread {} could not be deleted", t.id, err);
            ErrorCode.STORE_FAILED.fail(m, "could not delete thread " + t.id + ": " + err.getMessage());
          });
    }
  }

  /** Removes a folder and what is in it without following links; returns how many entries it could not remove. */
  private static int removeTree(Path root) throws java.io.IOException {
    if (!Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      return 0;
    }
    int[] left = {0};
    Files.walkFileTree(root, new java.nio.file.SimpleFileVisitor<>() {
      @Override
      public java.nio.file.FileVisitResult visitFile(Path file, java.nio.file.attribute.BasicFileAttributes a) {
        remove(file);
        return java.nio.file.FileVisitResult.CONTINUE;
      }

      @Override
      public java.nio.file.FileVisitResult visitFileFailed(Path file, java.io.IOException e) {
        remove(file);
        return java.nio.file.FileVisitResult.CONTINUE;
      }

      @Override
      public java.nio.file.FileVisitResult postVisitDirectory(Path dir, java.io.IOException e) {
        remove(dir);
        return java.nio.file.FileVisitResult.CONTINUE;
      }

      private void remove(Path p) {
        try {
          Files.delete(p);
        } catch (java.io.IOException e) {
          left[0]++;
        }
      }
    });
    return left[0];
  }

  /** Saves the thread's row, then tells every surface (and the asker) what it is now. */
  private void saveAndAnnounce(Message<JsonObject> m, ThreadState t, String what) {
    bus.request(Addresses.STORE_THREAD_SAVE, t.row())
        .onSuccess(x -> {
          changed(json(t));
          if (m != null) {
            m.reply(json(t));
          }
        })
        .onFailure(err -> {
          log.error("thread {}: could not save {}", t.id, what, err);
          if (m != null) {
            ErrorCode.STORE_FAILED.fail(m, "could not save " + what + ": " + err.getMessage());
          }
        });
  }

  private void history(Message<JsonObject> m, ThreadState t) {
    JsonObject b = m.body();
    bus.<JsonObject>request(Addresses.STORE_TRANSCRIPT_READ, new JsonObject().put("threadId", t.id)
            .put("afterSeq", b.getValue("afterSeq") instanceof Number n ? n.longValue() : 0L)
            .put("limit", b.getValue("limit") instanceof Integer i ? i : 1000))
        .onSuccess(reply -> m.reply(reply.body().put("threadId", t.id).put("lastSeq", t.lastSeq)))
        .onFailure(err -> ErrorCode.STORE_FAILED.fail(m, err.getMessage()));
  }

  private void record(Message<JsonObject> m, ThreadState t) {
    if (!(m.body().getValue("event") instanceof JsonObject event) || !(event.getValue("kind") instanceof String)) {
      ErrorCode.BAD_REQUEST.fail(m, "event must be an object with a kind");
      return;
    }
    if ("session_modes".equals(event.getString("kind")) && event.getValue("modes") instanceof JsonObject modes
        && modes.getValue("availableModes") instanceof JsonArray available) {
      t.modeIds = available.stream().map(o -> o instanceof JsonObject mode ? mode.getString("id") : null)
          .filter(java.util.Objects::nonNull).toList();
    }
    JsonArray options = "session_config".equals(event.getString("kind")) ? event.getJsonArray("configOptions")
        : "acp".equals(event.getString("kind")) && event.getValue("update") instanceof JsonObject u
            && "config_option_update".equals(u.getString("sessionUpdate")) ? u.getJsonArray("configOptions") : null;
    if (options != null) {
      java.util.Map<String, java.util.List<String>> values = new java.util.HashMap<>();
      for (Object o : options) {
        if (o instanceof JsonObject c && c.getValue("id") instanceof String cid && c.getValue("options") instanceof JsonArray vs) {
          values.put(cid, vs.stream().map(v -> v instanceof JsonObject j ? String.valueOf(j.getValue("value")) : null)
              .filter(java.util.Objects::nonNull).toList());
        }
      }
      t.configValues = values;
    }
    // An agent's own name for the session becomes the thread's title, unless a person chose one.
    if ("acp".equals(event.getString("kind")) && event.getValue("update") instanceof JsonObject u
        && "session_info_update".equals(u.getString("sessionUpdate")) && u.getValue("title") instanceof String title
        && !title.isBlank() && !"person".equals(t.titleBy) && !shorten(title).equals(t.title)) {
      t.title = shorten(title);
      t.titleBy = "agent";
      saveAndAnnounce(null, t, "the agent's title");
    }
    append(t, AgentMedia.kept(event), event).onComplete(done -> m.reply(new JsonObject().put("seq", done.result())));
  }

  /** Numbers the event, writes it to the transcript, then publishes it. */
  private Future<Long> append(ThreadState t, JsonObject event) {
    return append(t, event, event);
  }

  /**
   * Numbers the event, writes {@code kept} to the transcript, then publishes {@code live} (the same
   * event, or one with media the transcript keeps only a note of).
   */
  private Future<Long> append(ThreadState t, JsonObject kept, JsonObject live) {
    JsonObject event = live;
    long seq = ++t.lastSeq;
    String kind = event.getString("kind");
    if (kind.equals("turn_started")) {
      t.busy = true;
    } else if (kind.equals("turn_ended") || kind.equals("agent_exited")) {
      if (t.busy && kind.equals("turn_ended")) {
        checkpoint(t);
      }
      t.busy = false;
    }
    long at = System.currentTimeMillis();
    return bus.request(Addresses.STORE_TRANSCRIPT_APPEND, new JsonObject().put("threadId", t.id).put("seq", seq)
            .put("at", at).put("event", kept))
        .onFailure(err -> log.error("thread {}: event {} could not be written to the transcript", t.id, seq, err))
        .transform(x -> {
          bus.publish(Addresses.threadEvents(t.id), new ThreadEvent(t.id, seq, at, event).toJson());
          return Future.succeededFuture(seq);
        });
  }

  private void session(Message<JsonObject> m, ThreadState t) {
    String session = m.body().getString("acpSessionId");
    t.acpSessionId = session;
    bus.request(Addresses.STORE_THREAD_SAVE, t.row())
        .onSuccess(x -> m.reply(json(t)))
        .onFailure(err -> ErrorCode.STORE_FAILED.fail(m, err.getMessage()));
  }

  /** Passes a command on to another room and relays its reply or failure. */
  private void forward(Message<JsonObject> m, String address, JsonObject body) {
    bus.<JsonObject>request(address, body)
        .onSuccess(reply -> m.reply(reply.body()))
        .onFailure(err -> relayFailure(m, err));
  }

  private static void relayFailure(Message<JsonObject> m, Throwable err) {
    if (err instanceof ReplyException re) {
      m.fail(re.failureCode(), re.getMessage());
    } else {
      m.fail(500, err.getMessage());
    }
  }

  private void withThread(Message<JsonObject> m, java.util.function.Consumer<ThreadState> action) {
    Object id = m.body() == null ? null : m.body().getValue("threadId");
    ThreadState t = id instanceof String s ? threads.get(s) : null;
    if (t == null) {
      ErrorCode.UNKNOWN_THREAD.fail(m, "no thread " + id);
      return;
    }
    if (t.deleting) {
      // Nothing may save, restore or add to it while it goes: a late write would bring back its row.
      ErrorCode.UNKNOWN_THREAD.fail(m, "thread " + id + " is being deleted");
      return;
    }
    action.accept(t);
  }

  private static String shorten(String text) {
    String oneLine = text.strip().replaceAll("\\s+", " ");
    return oneLine.length() > TITLE_LENGTH ? oneLine.substring(0, TITLE_LENGTH - 1) + "…" : oneLine;
  }

  /** A thread as the rooms and surfaces see it; in a cluster it names its node, which the edges route by. */
  private JsonObject json(ThreadState t) {
    return scope.stamp(t.toJson());
  }

  private String newId() {
    return ids.next("t_", 9);
  }
}
