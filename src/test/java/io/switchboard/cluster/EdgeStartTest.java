package io.switchboard.cluster;

import static io.switchboard.testkit.PermissionHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.Settings;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An edge starting while an agent node does not answer (issue 43, point 13): the whole edge (its
 * store, router, plugin, metrics and web rooms, a real page socket) on one Vert.x, the cluster's
 * member list and its agent nodes played by consumers at their addresses. One node answers; one is
 * a member but paused (it takes every request and answers none until resumed); one is a stranger
 * that merely claims the agent role (no address of it answers). The edge starts and serves the
 * answering node's threads, and the paused one's threads reach the open page, unasked, once it
 * answers, as a node that joined later would.
 */
class EdgeStartTest {
  @TempDir
  Path dir;
  private Vertx vertx;
  private GatewayHarness edge;
  private final List<FakeNode> nodes = new ArrayList<>();

  /** An agent node as the edge sees it over the bus: its threads, answered now or held while paused. */
  private final class FakeNode {
    final String name;
    final String threadId;
    boolean paused;
    final List<Runnable> held = new ArrayList<>();

    FakeNode(String name, boolean paused) {
      this.name = name;
      this.threadId = "t_" + name.replace("-", "");
      this.paused = paused;
      JsonObject self = new JsonObject().put("node", name).put("incarnation", name + "-1").put("seq", 0);
      Map<String, Function<JsonObject, JsonObject>> answers = Map.of(
          Addresses.THREAD_LIST, b -> self.copy().put("threads", new JsonArray().add(new JsonObject()
              .put("threadId", threadId).put("agent", "demo").put("title", "work on " + name).put("busy", false)
              .put("routes", new JsonArray()).put("node", name))),
          Addresses.THREAD_STATUS, b -> self.copy(),
          Addresses.PERMISSION_STATUS, b -> self.copy().put("pending", 0),
          Addresses.PERMISSION_PENDING, b -> self.copy().put("requests", new JsonArray()),
          Addresses.STORE_LEDGER_LIST, b -> new JsonObject().put("requests", new JsonArray()),
          Addresses.STORE_OUTBOX_PENDING, b -> new JsonObject().put("outputs", new JsonArray()),
          Addresses.STORE_OUTBOX_STATS, b -> new JsonObject().put("plugins", new JsonArray()),
          Addresses.STORE_OUTBOX_REOPEN, b -> new JsonObject());
      answers.forEach((address, answer) -> vertx.eventBus().<JsonObject>consumer(Addresses.onNode(name, address),
          m -> reply(m, answer)));
    }

    private void reply(Message<JsonObject> m, Function<JsonObject, JsonObject> answer) {
      if (paused) {
        held.add(() -> m.reply(answer.apply(m.body()))); // answered late, if at all (its asker may be gone)
      } else {
        m.reply(answer.apply(m.body()));
      }
    }

    void resume() {
      vertx.runOnContext(v -> {
        paused = false;
        held.forEach(Runnable::run);
        held.clear();
      });
    }
  }

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void tearDown() {
    if (edge != null) {
      edge.close();
    }
    await(vertx.close());
  }

  private static JsonObject member(String node) {
    return new JsonObject().put("event", "joined").put("node", node).put("role", "agent")
        .put("incarnation", node + "-1").put("address", "127.0.0.1:5701");
  }

  @Test
  void anEdgeStartsBesideAPausedNodeAndAStrangerAndCatchesThePausedOneUpWhenItAnswers() throws Exception {
    CompletableFuture<FakeNode> paused = new CompletableFuture<>();
    vertx.runOnContext(v -> {
      nodes.add(new FakeNode("build-a", false));
      FakeNode b = new FakeNode("build-b", true);
      nodes.add(b);
      paused.complete(b);
    });
    FakeNode buildB = paused.get(10, TimeUnit.SECONDS);
    // The cluster's members: both nodes and a stranger claiming the agent role, none of whose addresses answer.
    vertx.eventBus().<JsonObject>localConsumer(Addresses.CLUSTER_MEMBERS, m -> m.reply(new JsonObject()
        .put("members", new JsonArray().add(member("build-a")).add(member("build-b")).add(member("claimer")))));

    Settings settings = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("edge"),
        "demo", List.of(new AgentSpec("demo", "Demo", "demo", List.of(), Map.of(), null, null)), List.of(),
        Settings.LogFormat.TEXT, Settings.AgentProcesses.defaults(),
        new Settings.Cluster("edge", Settings.Cluster.Role.EDGE, "127.0.0.1", 5701, 5702,
            List.of("127.0.0.1:5701"), 5, 60, null));
    edge = new GatewayHarness(vertx, settings, io.switchboard.Gateway.Tuning.DEFAULT);
    // Started while build-b still holds every request it was asked (the first thread list among them).
    assertFalse(buildB.held.isEmpty(), "build-b was asked and has not answered");

    ChatClient page = ChatClient.open(vertx, edge.port, edge.token);
    JsonObject welcome = page.next("welcome");
    List<String> listed = welcome.getJsonArray("threads").stream().map(t -> ((JsonObject) t).getString("threadId"))
        .toList();
    assertEquals(List.of("t_builda"), listed, "the answering node's thread, served: " + welcome.encode());
    assertEquals(new JsonArray().add("build-a").add("build-b").add("claimer"), welcome.getJsonArray("nodes"));

    buildB.resume();
    JsonObject caughtUp = page.next(f -> "thread".equals(f.getString("type"))
        && "t_buildb".equals(f.getString("threadId")), "build-b's thread once it answers", 30);
    assertEquals("work on build-b", caughtUp.getString("title"), caughtUp.encode());
    assertEquals("build-b", caughtUp.getString("node"), caughtUp.encode());
    // A new page lists both nodes' threads; the stranger adds nothing and holds nothing up.
    ChatClient second = ChatClient.open(vertx, edge.port, edge.token);
    JsonObject again = second.next("welcome");
    assertEquals(List.of("t_builda", "t_buildb"), again.getJsonArray("threads").stream()
        .map(t -> ((JsonObject) t).getString("threadId")).sorted().toList(), again.encode());
    assertTrue(edge.port > 0);
  }
}
