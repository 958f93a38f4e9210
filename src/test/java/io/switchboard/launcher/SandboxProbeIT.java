package io.switchboard.launcher;

import static io.switchboard.testkit.PersonGit.git;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Issue 42's probe against the real jar at -Xmx64m, with a scripted hostile agent under bubblewrap
 * in a project thread's worktree: a repository of its own there whose filter would run on the host,
 * writes to the host's /tmp, a look at the gateway's temporary folder. The gateway is started with
 * {@code -Djava.io.tmpdir} on a folder of the test's: nothing of the gateway's may land there (it
 * keeps its temporary files, the page's cache and sqlite-jdbc's library in its data directory
 * however it is started). And a worktree of 100,000 files: Changes answers, bounded, and the
 * gateway lives.
 */
class SandboxProbeIT extends BadAgentJar {
  Path repo;
  Path hostTmp;

  private Path projectConfig() throws Exception {
    repo = Files.createDirectories(dir.resolve("repo"));
    git(repo, "init", "-q", "-b", "main");
    Files.writeString(repo.resolve("README.md"), "hello\n");
    git(repo, "add", "README.md");
    git(repo, "commit", "-q", "-m", "first");
    hostTmp = Files.createDirectories(dir.resolve("host-tmp"));
    Path file = config("nest-probe", new JsonObject().put("env", new JsonObject()
        .put("BAD_AGENT_MARKER", dir.resolve("filter-ran").toString())).put("sandbox", "bwrap"));
    JsonObject config = new JsonObject(Files.readString(file))
        .put("projects", new JsonArray().add(new JsonObject().put("id", "app").put("path", repo.toString())))
        .put("defaultProject", "app");
    Files.writeString(file, config.encode());
    return file;
  }

  private ChatClient web(JarGateway started) {
    ChatClient web = ChatClient.open(vertx, started.port(), token());
    web.next("welcome");
    return web;
  }

  private static String newThread(ChatClient web) {
    String thread = web.send(new JsonObject().put("type", "new_thread").put("clientRef", "t"))
        .next(f -> "t".equals(f.getValue("clientRef")), "the thread", 120).getString("threadId");
    web.send(new JsonObject().put("type", "attach").put("threadId", thread));
    return thread;
  }

  private static void turn(ChatClient web, String thread, String text) {
    web.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", text));
    web.next(SandboxProbeIT::turnEnd, "the end of the turn \"" + text + "\"", 60);
  }

  private static boolean turnEnd(JsonObject f) {
    return "event".equals(f.getString("type")) && "turn_ended".equals(f.getJsonObject("event").getString("kind"));
  }

  private static JsonObject ask(ChatClient web, JsonObject frame, String ref) {
    return web.send(frame.put("clientRef", ref)).next(f -> ref.equals(f.getValue("clientRef")), ref, 180);
  }

  private void checkpoints(String thread, int atLeast) throws Exception {
    PermissionHarness.waitFor(() -> {
      try {
        return git(repo, "reflog", "show", "--format=%H", "refs/switchboard/checkpoints/" + thread).lines().count() >= atLeast;
      } catch (Throwable notYet) {
        return false;
      }
    }, atLeast + " checkpoints");
  }

  @Test
  void theProbesTrapsNeverRunAndNothingOfTheGatewaysLiesWhereTheAgentCanWrite() throws Exception {
    // As README's java -jar runs it: no class-data archive, so no library path of the systemd unit's either.
    JarGateway started = start(projectConfig(), List.of("-Xmx64m", "-Xshare:off", "-Djava.io.tmpdir=" + hostTmp));
    ChatClient web = web(started);
    String thread = newThread(web);
    String branchBefore = git(repo, "rev-parse", "main");

    turn(web, thread, "set the trap");
    JsonObject report = report(web.seen);
    assertEquals("done", report.getString("nested"), report.encode());
    assertTrue(report.getString("hostTmpFile").startsWith("refused"), "the host's /tmp is read-only: " + report);
    assertTrue(report.getString("hostTmpFifo").startsWith("refused"), "the host's /tmp is read-only: " + report);
    assertEquals("written", report.getString("ownTmp"), "its own TMPDIR is writable: " + report);
    assertTrue(report.getString("dataTmp").startsWith("refused"), "the gateway's tmp is hidden: " + report);
    checkpoints(thread, 1); // the first turn's checkpoint, with no action of the person's
    turn(web, thread, "edit again");
    checkpoints(thread, 2);

    JsonObject changes = ask(web, new JsonObject().put("type", "changes").put("threadId", thread), "c");
    JsonObject sub = changes.getJsonArray("files").stream()
        .map(JsonObject.class::cast).filter(f -> "sub".equals(f.getString("path"))).findFirst().orElseThrow(
            () -> new AssertionError("sub is not among the changes: " + changes.encode()));
    assertEquals(true, sub.getBoolean("repository"), sub.encode());
    assertEquals("project_action", ask(web, new JsonObject().put("type", "commit").put("threadId", thread)
        .put("message", "the agent's work"), "k").getString("type"));
    assertEquals("project_action", ask(web, new JsonObject().put("type", "merge").put("threadId", thread), "m")
        .getString("type"));
    assertFalse(branchBefore.equals(git(repo, "rev-parse", "main")), "the merge went through");
    assertEquals("turn 1\n", Files.readString(repo.resolve("turn1.txt")));

    assertFalse(Files.exists(dir.resolve("filter-ran")), "the nested repository's filter ran on the host");
    HttpResponse<String> page = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + started.port() + "/")).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, page.statusCode());
    try (Stream<Path> left = Files.list(hostTmp)) {
      assertEquals(List.of(), left.toList(), "the gateway left files in the temporary folder it was started with");
    }
    String maps = Files.readString(Path.of("/proc", Long.toString(gateway.pid()), "maps"));
    String library = maps.lines().filter(l -> l.contains("sqlitejdbc")).findFirst().orElseThrow();
    assertTrue(library.contains(dir.resolve("data/tmp").toString()), "sqlite-jdbc's library loaded from " + library);
    assertTrue(gateway.isAlive());
  }

  @Test
  void changesOf100000FilesAnswerBoundedAt64MiB() throws Exception {
    JarGateway started = start(projectConfig(), List.of("-Xmx64m", "-XX:+ExitOnOutOfMemoryError"));
    ChatClient web = web(started);
    String thread = newThread(web);
    Path worktree = dir.resolve("data/worktrees/app").resolve(thread);
    int n = 100_000;
    for (int d = 0; d < 100; d++) {
      Path folder = Files.createDirectories(worktree.resolve("many/d" + d));
      for (int i = 0; i < n / 100; i++) {
        Files.writeString(folder.resolve("f" + i), Integer.toString(d * 1000 + i, 36));
      }
    }
    long t0 = System.nanoTime();
    JsonObject reply = ask(web, new JsonObject().put("type", "changes").put("threadId", thread), "c");
    long ms = (System.nanoTime() - t0) / 1_000_000;
    JsonObject changes = reply;
    assertEquals(n, changes.getInteger("filesTotal"), "every file counted: " + changes.fieldNames());
    assertEquals(1_000, changes.getJsonArray("files").size(), "the first thousand listed");
    assertEquals(n, changes.getInteger("uncommitted"));
    HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + started.port() + "/healthz")).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, health.statusCode());
    assertTrue(gateway.isAlive(), "the gateway died");
    assertFalse(Files.readString(dir.resolve("gateway.log")).contains("OutOfMemoryError"));
    System.out.printf("Changes of %,d new files at -Xmx64m: answered in %,d ms%n", n, ms);
  }
}
