package io.switchboard.testkit;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.Bus;
import io.switchboard.bus.ErrorCode;
import io.switchboard.permission.PermissionRoom;
import io.switchboard.store.StoreRoom;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A store room on a real SQLite file plus a permission room, driven over the event bus the way
 * the agent room and the surfaces drive them, with every published fact recorded.
 */
public final class PermissionHarness implements AutoCloseable {
  public final Vertx vertx;
  private final Path databaseFile;
  private String storeDeployment;
  private String permissionDeployment;
  private final List<MessageConsumer<?>> consumers = new ArrayList<>();

  public final List<JsonObject> shown = new CopyOnWriteArrayList<>();
  public final List<JsonObject> ended = new CopyOnWriteArrayList<>();
  /** requestId by toolCallId, learned from the shown and ended facts. */
  public final Map<String, String> idsByToolCall = new ConcurrentHashMap<>();

  public PermissionHarness(Vertx vertx, Path databaseFile) {
    this.vertx = vertx;
    this.databaseFile = databaseFile;
    record(Addresses.PERMISSION_SHOWN, shown);
    record(Addresses.PERMISSION_RESOLVED, ended);
    record(Addresses.PERMISSION_CANCELLED, ended);
  }

  private void record(String address, List<JsonObject> into) {
    consumers.add(vertx.eventBus().<JsonObject>consumer(address, m -> {
      JsonObject body = m.body();
      String toolCallId = body.containsKey("toolCall")
          ? body.getJsonObject("toolCall").getString("toolCallId") : body.getString("toolCallId");
      idsByToolCall.put(toolCallId, body.getString("requestId"));
      into.add(body);
    }));
  }

  public PermissionHarness start() {
    storeDeployment = await(vertx.deployVerticle(new StoreRoom(databaseFile)));
    startPermissionRoom();
    return this;
  }

  public void startPermissionRoom() {
    startPermissionRoom(io.switchboard.config.Limits.ofThisJvm().pendingRequests());
  }

  /** When set, what {@link #startPermissionRoom()} and the restarts deploy (rooms with rules, a clock...). */
  public java.util.function.Supplier<PermissionRoom> factory;

  /** Starts the permission room holding at most {@code maxPending} requests. */
  public void startPermissionRoom(int maxPending) {
    permissionDeployment = await(vertx.deployVerticle(factory != null ? factory.get() : new PermissionRoom(maxPending)));
    await(vertx.eventBus().request(Addresses.PERMISSION_ANNOUNCE_VOIDED, new JsonObject()));
  }

  /** Starts the given permission room (one with attention settings or a clock of its own). */
  public void startPermissionRoom(PermissionRoom room) {
    permissionDeployment = await(vertx.deployVerticle(room));
    await(vertx.eventBus().request(Addresses.PERMISSION_ANNOUNCE_VOIDED, new JsonObject()));
  }

  /** Drops the permission room without its graceful shutdown, as a crash would. */
  public void crashPermissionRoom() {
    await(vertx.undeploy(permissionDeployment));
  }

  /** A crash and a start: what a gateway restart does to the permission room. */
  public void restartPermissionRoom() {
    restartPermissionRoom(io.switchboard.config.Limits.ofThisJvm().pendingRequests());
  }

  public void restartPermissionRoom(int maxPending) {
    crashPermissionRoom();
    startPermissionRoom(maxPending);
  }

  public static JsonArray optionList() {
    return new JsonArray()
        .add(new JsonObject().put("optionId", "allow").put("name", "Allow once").put("kind", "allow_once"))
        .add(new JsonObject().put("optionId", "always").put("name", "Always allow").put("kind", "allow_always"))
        .add(new JsonObject().put("optionId", "reject").put("name", "Reject").put("kind", "reject_once"));
  }

  public static JsonObject request(String threadId, String sessionId, String toolCallId, String... surfaces) {
    return new JsonObject().put("threadId", threadId).put("sessionId", sessionId).put("agentId", "demo")
        .put("toolCall", new JsonObject().put("toolCallId", toolCallId).put("title", "Edit " + toolCallId)
            .put("kind", "edit"))
        .put("options", optionList())
        .put("eligible", new JsonArray(List.of((Object[]) surfaces)));
  }

  /** Sends a register; the future completes with {requestId, outcome} when the request ends. */
  public Future<JsonObject> register(JsonObject request) {
    return vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_REGISTER, request, Bus.untilEnded())
        .map(m -> m.body());
  }

  /** Sends an answer; the future fails with the ErrorCode's ReplyException when it is refused. */
  public Future<JsonObject> answer(String requestId, String optionId, String surface, String user) {
    return answer(requestId, optionId, surface, user, null);
  }

  /** An answer with a key ({@code answerKey}, any JSON value: a wrong one must be refused). */
  public Future<JsonObject> answer(String requestId, String optionId, String surface, String user, Object key) {
    JsonObject body = new JsonObject().put("requestId", requestId).put("optionId", optionId).put("surface", surface);
    if (user != null) {
      body.put("user", user);
    }
    if (key != null) {
      body.put("answerKey", key);
    }
    return vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_ANSWER, body).map(m -> m.body());
  }

  public void publish(String address, JsonObject fact) {
    vertx.eventBus().publish(address, fact);
  }

  public JsonObject shutdown() {
    return await(vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_SHUTDOWN, new JsonObject())).body();
  }

  public JsonArray pendingCards(String threadId) {
    JsonObject body = threadId == null ? new JsonObject() : new JsonObject().put("threadId", threadId);
    return await(vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_PENDING, body)).body()
        .getJsonArray("requests");
  }

  /** The ledger row of a request, read back from SQLite through the store room. */
  public JsonObject ledgerRow(String requestId) {
    return await(vertx.eventBus().<JsonObject>request(Addresses.STORE_LEDGER_GET,
        new JsonObject().put("requestId", requestId))).body().getJsonObject("request");
  }

  public JsonArray ledger(String state, int limit) {
    return await(vertx.eventBus().<JsonObject>request(Addresses.STORE_LEDGER_LIST,
        new JsonObject().put("state", state).put("limit", limit))).body().getJsonArray("requests");
  }

  /** Waits until the card of this tool call was shown (or the request ended) and returns its id. */
  public String idOf(String toolCallId) {
    waitFor(() -> idsByToolCall.containsKey(toolCallId), "a card for tool call " + toolCallId);
    return idsByToolCall.get(toolCallId);
  }

  public List<JsonObject> endedFacts(String requestId) {
    return ended.stream().filter(f -> f.getString("requestId").equals(requestId)).toList();
  }

  public static ErrorCode errorOf(Future<?> f) {
    try {
      f.await(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      return ErrorCode.of(e);
    }
    return null;
  }

  public static <T> T await(Future<T> f) {
    try {
      return f.await(20, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("awaited future failed: " + e, e);
    }
  }

  public static void waitFor(BooleanSupplier condition, String what) {
    waitFor(condition, what, 20_000);
  }

  /**
   * Checks {@code condition} until it holds, first every millisecond, then less often (up to every
   * 25 ms): a condition that asks a room over the bus must not keep a core of a 2-core machine busy.
   */
  public static void waitFor(BooleanSupplier condition, String what, long timeoutMs) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    long pause = 1;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      try {
        Thread.sleep(pause);
        pause = Math.min(25, pause * 2);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  @Override
  public void close() {
    consumers.forEach(c -> await(c.unregister()));
    if (permissionDeployment != null && vertx.deploymentIDs().contains(permissionDeployment)) {
      await(vertx.undeploy(permissionDeployment));
    }
    if (storeDeployment != null && vertx.deploymentIDs().contains(storeDeployment)) {
      await(vertx.undeploy(storeDeployment));
    }
  }
}
