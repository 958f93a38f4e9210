package io.switchboard.cluster;

import static io.switchboard.testkit.PermissionHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The edge's one router and the rooms' clients of it, on one (not clustered) Vert.x: the cluster
 * watcher and an agent node are played by consumers at their addresses. AgentNodesProperties
 * checks the routing itself; this checks what crosses the router's own addresses: replies and
 * failures unchanged, member changes and gaps heard by every client, owners asked for.
 */
class EdgeRouterTest {
  private Vertx vertx;
  /** An answer that reached the agent node, which holds it (never replies). */
  private final CompletableFuture<Message<JsonObject>> heldAnswer = new CompletableFuture<>();

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    vertx.eventBus().<JsonObject>localConsumer(Addresses.CLUSTER_MEMBERS, m -> m.reply(new JsonObject()
        .put("members", new JsonArray().add(member("joined", "build-1")))));
    vertx.eventBus().<JsonObject>consumer(Addresses.onNode("build-1", Addresses.THREAD_GET), m -> {
      if ("t-1".equals(m.body().getString("threadId"))) {
        m.reply(new JsonObject().put("threadId", "t-1").put("node", "build-1"));
      } else {
        ErrorCode.UNKNOWN_THREAD.fail(m, "unknown thread " + m.body().getString("threadId"));
      }
    });
    vertx.eventBus().<JsonObject>consumer(Addresses.onNode("build-1", Addresses.PERMISSION_ANSWER), heldAnswer::complete);
    await(vertx.deployVerticle(new EdgeRouter()));
  }

  @AfterEach
  void stop() {
    await(vertx.close());
  }

  private static JsonObject member(String event, String node) {
    return new JsonObject().put("event", event).put("node", node).put("role", "agent")
        .put("incarnation", node + "-1").put("address", "127.0.0.1:5701");
  }

  /** A client started on a context of its own, as a room's is. */
  private RouterClient client(java.util.function.Consumer<JsonObject> onMember,
                              java.util.function.Consumer<String> onGap) throws Exception {
    CompletableFuture<RouterClient> made = new CompletableFuture<>();
    vertx.runOnContext(v -> {
      RouterClient c = new RouterClient(vertx, true);
      c.start(onMember, node -> onGap.accept("permission " + node), node -> onGap.accept("thread " + node))
          .onSuccess(x -> made.complete(c)).onFailure(made::completeExceptionally);
    });
    return made.get(10, TimeUnit.SECONDS);
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void repliesAndFailuresCrossTheRouterUnchanged() throws Exception {
    RouterClient client = client(m -> { }, gap -> { });
    assertEquals(List.of("build-1"), client.liveNodes());

    JsonObject thread = get(client.ask(Addresses.THREAD_GET, new JsonObject().put("threadId", "t-1")));
    assertEquals("build-1", thread.getString("node"));

    ExecutionException e = assertThrows(ExecutionException.class,
        () -> get(client.askNode("build-1", Addresses.THREAD_GET, new JsonObject().put("threadId", "t-9"),
            new DeliveryOptions())));
    assertEquals(ErrorCode.UNKNOWN_THREAD, ErrorCode.of(e.getCause()), e.getCause().toString());
    assertEquals("unknown thread t-9", e.getCause().getMessage());

    // No route for it in a cluster (no thread named): said, not left to a timeout.
    ExecutionException noRoute = assertThrows(ExecutionException.class,
        () -> get(client.ask("sb.nowhere", new JsonObject())));
    assertTrue(noRoute.getCause().getMessage().contains("no route in a cluster for sb.nowhere"),
        noRoute.getCause().getMessage());
  }

  /** What used to fail in the room's own call fails the ask: never left unanswered, never Vert.x's words. */
  @Test
  void aBodyThatBreaksARouteOrAnEdgeStoreThatIsNotThereFailsInWords() throws Exception {
    RouterClient client = client(m -> { }, gap -> { });
    ExecutionException broken = assertThrows(ExecutionException.class, () -> get(client.ask(
        Addresses.STORE_OUTBOX_ACK, new JsonObject().put("outputIds", "not a list"))));
    assertEquals(ErrorCode.STORE_FAILED, ErrorCode.of(broken.getCause()), broken.getCause().toString());
    // The edge's own store serves this; here nothing does.
    ExecutionException none = assertThrows(ExecutionException.class,
        () -> get(client.ask(Addresses.STORE_WEB_SESSION_LIST, new JsonObject())));
    assertEquals(ErrorCode.UNAVAILABLE, ErrorCode.of(none.getCause()), none.getCause().toString());
    assertEquals("this edge node's own " + Addresses.STORE_WEB_SESSION_LIST + " did not answer; what was asked "
        + "may not have been done", none.getCause().getMessage());
  }

  @Test
  void everyClientHearsANodeLeaveAndWhatWaitedOnItFailsAtOnce() throws Exception {
    CompletableFuture<JsonObject> heardByWeb = new CompletableFuture<>();
    CompletableFuture<JsonObject> heardByPlugins = new CompletableFuture<>();
    List<JsonObject> heard = new CopyOnWriteArrayList<>();
    RouterClient web = client(m -> {
      heard.add(m);
      heardByWeb.complete(m);
    }, gap -> { });
    RouterClient plugins = client(m -> {
      heard.add(m);
      heardByPlugins.complete(m);
    }, gap -> { });
    vertx.eventBus().publish(Addresses.PERMISSION_SHOWN, new JsonObject().put("requestId", "r-1")
        .put("threadId", "t-1").put("node", "build-1").put("incarnation", "build-1-1").put("seq", 1L));
    // The router heard who owns r-1 (the fact and this question reach it in the order sent).
    assertEquals(List.of("r-1"), get(web.ownedBy("build-1", List.of("r-1", "r-2"))));
    assertEquals(List.of(), get(web.ownedBy("build-2", List.of("r-1"))));

    Future<JsonObject> answer = web.ask(Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", "r-1")
        .put("optionId", "allow").put("surface", "web"));
    assertEquals("r-1", heldAnswer.get(10, TimeUnit.SECONDS).body().getString("requestId"),
        "the answer reached the node that owns its request");

    vertx.eventBus().publish(Addresses.CLUSTER_MEMBER, member("left", "build-1"));
    ExecutionException e = assertThrows(ExecutionException.class, () -> get(answer));
    assertEquals(ErrorCode.UNAVAILABLE, ErrorCode.of(e.getCause()), e.getCause().toString());
    assertTrue(e.getCause().getMessage().contains("build-1 left the cluster"), e.getCause().getMessage());

    assertEquals(new JsonArray(), heardByWeb.get(10, TimeUnit.SECONDS).getJsonArray("live"));
    assertEquals(new JsonArray(), heardByPlugins.get(10, TimeUnit.SECONDS).getJsonArray("live"));
    assertEquals("left", heardByWeb.get().getString("event"));
    assertFalse(web.isLive("build-1"));
    assertFalse(plugins.isLive("build-1"));
    ExecutionException refused = assertThrows(ExecutionException.class,
        () -> get(plugins.askNode("build-1", Addresses.THREAD_GET, new JsonObject().put("threadId", "t-1"),
            new DeliveryOptions())));
    assertEquals(ErrorCode.UNAVAILABLE, ErrorCode.of(refused.getCause()));
    assertEquals(2, heard.size(), "each client heard the node leave once: " + heard);
  }

  @Test
  void aMissedFactIsAGapEveryClientWithGapsHears() throws Exception {
    CompletableFuture<String> gap = new CompletableFuture<>();
    client(m -> { }, gap::complete);
    // The first thread fact heard of build-1 is its third: two were missed.
    vertx.eventBus().publish(Addresses.THREAD_CHANGED, new JsonObject().put("threadId", "t-1")
        .put("node", "build-1").put("incarnation", "build-1-1").put("seq", 3L));
    assertEquals("thread build-1", gap.get(10, TimeUnit.SECONDS));
  }

  @Test
  void aRouterThatIsNotThereIsUnavailableNotAHang() throws Exception {
    Vertx bare = Vertx.vertx();
    try {
      RouterClient client = new RouterClient(bare, true);
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> get(client.ask(Addresses.THREAD_GET, new JsonObject().put("threadId", "t-1"))));
      assertTrue(e.getCause() instanceof ReplyException, e.getCause().toString());
    } finally {
      await(bare.close());
    }
  }
}
