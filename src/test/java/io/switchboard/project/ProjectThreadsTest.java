package io.switchboard.project;

import static io.switchboard.project.ProjectRepoTest.newRepo;
import static io.switchboard.project.ProjectRepoTest.person;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.Gateway;
import io.switchboard.config.ProjectSpec;
import io.switchboard.config.Settings;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Threads in projects over /ws/chat, against the whole gateway, the demo agent and a real
 * repository: each thread edits its own worktree, a person commits, merges and discards, and the
 * repository holds exactly what the person merged.
 */
@ExtendWith(VertxExtension.class)
class ProjectThreadsTest {
  @TempDir Path dir;
  Path repo;
  Path plain;
  GatewayHarness gateway;
  ChatClient c;

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    repo = newRepo(dir.resolve("repo"));
    plain = Files.createDirectories(dir.resolve("plain"));
    Settings base = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("data"), "demo",
        List.of(AgentHarness.demo()), List.of(), Settings.LogFormat.TEXT);
    gateway = new GatewayHarness(vertx, GatewayHarness.withProjects(base, List.of(
        new ProjectSpec("app", "App", repo, List.of(), ProjectSpec.Worktrees.PER_THREAD, null,
            new JsonArray(), List.of(".env"), null),
        new ProjectSpec("plain", "Plain", plain, List.of(), ProjectSpec.Worktrees.SHARED, null, null, null, null))),
        Gateway.Tuning.DEFAULT);
    c = ChatClient.open(vertx, gateway.port, gateway.token);
    JsonObject welcome = c.next("welcome");
    assertEquals("app", welcome.getString("defaultProject"));
    assertEquals(2, welcome.getJsonArray("projects").size());
  }

  @AfterEach
  void stop() {
    c.close();
    gateway.close();
  }

  private JsonObject newThread(JsonObject frame, String ref) {
    c.send(frame.put("type", "new_thread").put("clientRef", ref));
    return c.next(f -> ref.equals(f.getValue("clientRef")) && ("thread".equals(f.getString("type"))
        || "error".equals(f.getString("type"))), "the reply to " + ref, 60);
  }

  /** A turn of the demo agent that writes a note (its card allowed): the note lands in the thread's folder. */
  private void noteTurn(String threadId, String text) {
    c.send(new JsonObject().put("type", "attach").put("threadId", threadId));
    c.next(f -> "turn".equals(f.getString("type")) && threadId.equals(f.getString("threadId")), "attached");
    c.send(new JsonObject().put("type", "prompt").put("threadId", threadId).put("text", text));
    JsonObject card = c.next(f -> "permission_request".equals(f.getString("type"))
        && threadId.equals(f.getString("threadId")), "the card", 60);
    c.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
        .put("optionId", "allow-once"));
    c.next(f -> "event".equals(f.getString("type")) && threadId.equals(f.getString("threadId"))
        && "turn_ended".equals(f.getJsonObject("event").getString("kind")), "the turn's end", 60);
  }

  private JsonObject ask(JsonObject frame, String ref) {
    c.send(frame.put("clientRef", ref));
    return c.next(f -> ref.equals(f.getValue("clientRef")), "the reply to " + ref, 120);
  }

  @Test
  void twoThreadsOnOneRepositoryEachInItsOwnWorktreeOneMergedOneDiscarded() throws Exception {
    JsonObject one = newThread(new JsonObject(), "one");
    assertEquals("app", one.getString("project"), one.encode());
    String branchOne = one.getString("branch");
    assertTrue(branchOne.startsWith("switchboard/"), branchOne);
    JsonObject two = newThread(new JsonObject().put("project", "app").put("branch", "try-two"), "two");
    assertEquals("try-two", two.getString("branch"));
    String t1 = one.getString("threadId");
    String t2 = two.getString("threadId");
    Path w1 = gateway.dataDir.resolve("worktrees/app").resolve(t1);
    Path w2 = gateway.dataDir.resolve("worktrees/app").resolve(t2);
    assertEquals("SECRET=1\n", Files.readString(w1.resolve(".env")), "copyFiles");

    noteTurn(t1, "first thread's note");
    noteTurn(t2, "second thread's note");
    assertTrue(Files.readString(w1.resolve("demo-notes.md")).contains("first thread's note"));
    assertFalse(Files.readString(w1.resolve("demo-notes.md")).contains("second"));
    assertTrue(Files.readString(w2.resolve("demo-notes.md")).contains("second thread's note"));
    assertFalse(Files.exists(repo.resolve("demo-notes.md")), "the person's checkout is untouched");

    JsonObject changes = ask(new JsonObject().put("type", "changes").put("threadId", t1), "c1");
    assertEquals("changes", changes.getString("type"), changes.encode());
    assertEquals("demo-notes.md", changes.getJsonArray("files").getJsonObject(0).getString("path"));
    assertEquals(1, changes.getInteger("uncommitted"));
    assertTrue(changes.getString("patch").contains("+- first thread's note"));
    assertTrue(person(repo, "show", "refs/switchboard/checkpoints/" + t1 + ":demo-notes.md")
        .contains("first thread's note"), "a checkpoint after the turn");
    assertEquals(one.getString("branch"), person(w1, "rev-parse", "--abbrev-ref", "HEAD"));
    assertEquals(person(repo, "rev-parse", "main"), person(w1, "rev-parse", "HEAD"), "the checkpoint moved no branch");

    JsonObject early = ask(new JsonObject().put("type", "merge").put("threadId", t1), "m0");
    assertEquals("conflict", early.getString("code"), early.encode());
    assertTrue(early.getString("message").contains("commit them first"));

    JsonObject committed = ask(new JsonObject().put("type", "commit").put("threadId", t1)
        .put("message", "Notes from thread one"), "k1");
    assertEquals("project_action", committed.getString("type"), committed.encode());
    String commit = committed.getJsonObject("result").getString("commit");
    assertEquals(commit, person(repo, "rev-parse", branchOne));
    JsonObject merged = ask(new JsonObject().put("type", "merge").put("threadId", t1), "m1");
    assertEquals("project_action", merged.getString("type"), merged.encode());
    assertTrue(person(repo, "show", "main:demo-notes.md").contains("first thread's note"));
    assertTrue(Files.readString(repo.resolve("demo-notes.md")).contains("first thread's note"),
        "the person's clean checkout of main follows the merge");

    JsonObject discarded = ask(new JsonObject().put("type", "discard").put("threadId", t2), "d2");
    assertEquals("project_action", discarded.getString("type"), discarded.encode());
    assertEquals("refs/switchboard/archive/" + t2, discarded.getJsonObject("result").getString("archive"));
    assertTrue(person(repo, "show", "refs/switchboard/archive/" + t2 + ":demo-notes.md").contains("second"));
    assertFalse(Files.exists(w2));
    assertEquals("", person(repo, "branch", "--list", "try-two"));
    assertFalse(person(repo, "show", "main:demo-notes.md").contains("second"));
    assertEquals(2, person(repo, "worktree", "list").lines().count(), "the main tree and thread one's");
    JsonObject archived = c.seen.stream().filter(f -> "thread".equals(f.getString("type"))
        && t2.equals(f.getString("threadId")) && f.getBoolean("archived", false)).findFirst().orElseThrow();
    assertEquals("discarded", archived.getString("worktree"));
    JsonObject refused = ask(new JsonObject().put("type", "prompt").put("threadId", t2).put("text", "more"), "p2");
    assertTrue(refused.getString("message").contains("discarded"), refused.encode());

    JsonObject audit = ask(new JsonObject().put("type", "changes").put("threadId", t1), "c2");
    assertEquals(0, audit.getJsonArray("files").size(), "after the merge the thread has nothing left to land");
    JsonArray actions = audit.getJsonArray("actions");
    assertEquals(List.of("commit", "merge"), actions.stream().map(a -> ((JsonObject) a).getString("action")).toList());
    assertEquals("web", actions.getJsonObject(1).getString("surface"));
    assertEquals(person(repo, "rev-parse", "main"), actions.getJsonObject(1).getJsonObject("detail")
        .getString("commit"));
    assertTrue(person(repo, "log", "-1", "--format=%B", "main").contains("Switchboard-Merged-By: web"));
  }

  @Test
  void aScratchThreadASharedFolderAndBadChoicesAreEachClear() throws Exception {
    JsonObject scratch = newThread(new JsonObject().put("project", ""), "s");
    assertNull(scratch.getString("project"));
    JsonObject shared = newThread(new JsonObject().put("project", "plain"), "p");
    assertEquals("plain", shared.getString("project"));
    assertNull(shared.getString("branch"));
    noteTurn(shared.getString("threadId"), "in the plain folder");
    assertTrue(Files.readString(plain.resolve("demo-notes.md")).contains("in the plain folder"));
    JsonObject noChanges = ask(new JsonObject().put("type", "changes").put("threadId", shared.getString("threadId")),
        "pc");
    assertEquals("bad_frame", noChanges.getString("code"));
    assertTrue(noChanges.getString("message").contains("own folder, not in a worktree of its own"));

    JsonObject unknown = newThread(new JsonObject().put("project", "nope"), "u");
    assertEquals("bad_frame", unknown.getString("code"));
    assertTrue(unknown.getString("message").contains("unknown project nope (configured: [app, plain])"));
    JsonObject branchless = newThread(new JsonObject().put("project", "plain").put("branch", "x"), "b");
    assertTrue(branchless.getString("message").contains("needs a project whose threads get worktrees"));
    person(repo, "branch", "taken");
    JsonObject taken = newThread(new JsonObject().put("project", "app").put("branch", "taken"), "t");
    assertEquals("conflict", taken.getString("code"));
    assertTrue(taken.getString("message").contains("the branch taken already exists"), taken.encode());
    assertEquals(1, person(repo, "worktree", "list").lines().count(), "a refused thread leaves no worktree");
  }

  @Test
  void keepingAThreadsWorkLeavesItsBranchUnmergedAndTheThreadArchived() throws Exception {
    JsonObject one = newThread(new JsonObject().put("branch", "keep-me"), "one");
    String t1 = one.getString("threadId");
    noteTurn(t1, "worth keeping");
    JsonObject kept = ask(new JsonObject().put("type", "keep").put("threadId", t1), "k");
    assertEquals("project_action", kept.getString("type"), kept.encode());
    assertEquals("kept", kept.getJsonObject("result").getJsonObject("thread").getString("worktree"));
    assertTrue(kept.getJsonObject("result").getJsonObject("thread").getBoolean("archived"));
    assertTrue(person(repo, "show", "keep-me:demo-notes.md").contains("worth keeping"));
    assertEquals(1, person(repo, "worktree", "list").lines().count());
    assertFalse(person(repo, "log", "--format=%s", "main").contains("Work from thread"), "nothing merged");
    JsonObject refused = ask(new JsonObject().put("type", "prompt").put("threadId", t1).put("text", "more"), "p");
    assertTrue(refused.getString("message").contains("kept on branch keep-me"), refused.encode());
  }

  @Test
  void deletingAThreadKeepsItsWorkAndNeverTouchesASharedFolder() throws Exception {
    JsonObject one = newThread(new JsonObject(), "one");
    String t1 = one.getString("threadId");
    noteTurn(t1, "kept after delete");
    JsonObject shared = newThread(new JsonObject().put("project", "plain"), "p");
    noteTurn(shared.getString("threadId"), "the person's folder stays");
    for (String id : List.of(t1, shared.getString("threadId"))) {
      c.send(new JsonObject().put("type", "archive_thread").put("threadId", id));
      c.next(f -> "thread".equals(f.getString("type")) && id.equals(f.getString("threadId"))
          && f.getBoolean("archived", false), "archived");
      c.send(new JsonObject().put("type", "delete_thread").put("threadId", id));
      c.next(f -> "thread".equals(f.getString("type")) && id.equals(f.getString("threadId"))
          && f.getBoolean("deleted", false), "deleted", 60);
    }
    assertTrue(person(repo, "show", "refs/switchboard/archive/" + t1 + ":demo-notes.md").contains("kept after delete"));
    assertEquals(1, person(repo, "worktree", "list").lines().count());
    assertTrue(Files.readString(plain.resolve("demo-notes.md")).contains("the person's folder stays"));
  }
}
