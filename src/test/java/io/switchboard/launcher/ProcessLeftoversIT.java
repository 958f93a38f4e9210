package io.switchboard.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * No process the gateway started outlives it for long: an agent that ignores the end of its stdin,
 * with children (one in a session of its own), survives a gateway SIGKILL; the next gateway on the
 * same data directory kills them all before it starts anything.
 */
class ProcessLeftoversIT extends BadAgentJar {

  @Test
  void aRestartedGatewayKillsWhatAKilledOneLeftRunning() throws Exception {
    Path pids = dir.resolve("pids");
    // Unconfined: the marks are what finds an unsandboxed agent's leftovers (and its pids are the host's).
    Path file = config("stubborn", new JsonObject().put("env", new JsonObject().put("BAD_AGENT_PIDS", pids.toString()))
        .put("sandbox", "none"));
    JarGateway first = start(file, List.of());
    ChatClient web = ChatClient.open(vertx, first.port(), token());
    List<JsonObject> frames = new java.util.concurrent.CopyOnWriteArrayList<>();
    web.ws.textMessageHandler(t -> frames.add(new JsonObject(t)));
    web.ws.writeTextMessage(new JsonObject().put("type", "new_thread").put("clientRef", "t").encode());
    PermissionHarness.waitFor(() -> frames.stream().anyMatch(f -> "thread".equals(f.getString("type"))), "a thread");
    String thread = frames.stream().filter(f -> "thread".equals(f.getString("type"))).findFirst().orElseThrow()
        .getString("threadId");
    web.ws.writeTextMessage(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", "go").encode());
    PermissionHarness.waitFor(() -> Files.exists(pids) && lines(pids).size() == 3, "the agent and its two children");

    gateway.destroyForcibly();
    assertTrue(gateway.waitFor(20, TimeUnit.SECONDS));
    List<Long> left = lines(pids);
    Thread.sleep(500);
    assertEquals(3, left.stream().filter(ProcessLeftoversIT::alive).count(),
        "a SIGKILLed gateway leaves the stubborn agent and its children running");

    start(file, List.of());
    PermissionHarness.waitFor(() -> left.stream().noneMatch(ProcessLeftoversIT::alive),
        "the restarted gateway to kill " + left, 15_000);
    assertTrue(Files.readString(dir.resolve("gateway.log")).contains("that an earlier gateway on this data directory"
        + " left running"));
  }

  private static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  private static List<Long> lines(Path file) {
    try {
      return Files.readAllLines(file).stream().filter(s -> !s.isBlank()).map(Long::parseLong).toList();
    } catch (java.io.IOException e) {
      return List.of();
    }
  }
}
