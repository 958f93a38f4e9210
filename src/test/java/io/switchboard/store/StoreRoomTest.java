package io.switchboard.store;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.errorOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(VertxExtension.class)
class StoreRoomTest {
  @TempDir
  Path dir;

  private static JsonObject row(String id) {
    return new JsonObject().put("requestId", id).put("threadId", "t").put("sessionId", "s")
        .put("toolCall", new JsonObject().put("toolCallId", "tc")).put("options", new JsonArray())
        .put("eligible", new JsonArray().add("web")).put("createdAt", System.currentTimeMillis());
  }

  private static Future<JsonObject> send(Vertx vertx, String address, JsonObject body) {
    return vertx.eventBus().<JsonObject>request(address, body).map(m -> m.body());
  }

  private static JsonObject get(Vertx vertx, String id) {
    return await(send(vertx, Addresses.STORE_LEDGER_GET, new JsonObject().put("requestId", id))).getJsonObject("request");
  }

  @Test
  void oneBadWriteInAGroupCommitSinksOnlyItself(Vertx vertx) {
    await(vertx.deployVerticle(new StoreRoom(dir.resolve("db.sqlite"))));
    List<Future<JsonObject>> writes = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      writes.add(send(vertx, Addresses.STORE_LEDGER_APPEND, row("r" + i)));
      if (i == 25) {
        writes.add(send(vertx, Addresses.STORE_LEDGER_END,
            new JsonObject().put("requestId", "never-registered").put("state", "cancelled").put("reason", "x")));
      }
    }
    for (int i = 0; i < writes.size(); i++) {
      if (i == 26) {
        assertEquals(ErrorCode.CONFLICT, errorOf(writes.get(i)));
      } else {
        assertNull(errorOf(writes.get(i)), "write " + i);
      }
    }
    JsonArray all = await(send(vertx, Addresses.STORE_LEDGER_LIST,
        new JsonObject().put("state", "all").put("limit", 1000))).getJsonArray("requests");
    assertEquals(50, all.size());
  }

  /** Asked with {@code events}, the list gives each row its audit events (what the audit view shows). */
  @Test
  void theLedgerListCarriesEachRowsEventsWhenAsked(Vertx vertx) {
    await(vertx.deployVerticle(new StoreRoom(dir.resolve("db.sqlite"))));
    long t0 = System.currentTimeMillis();
    await(send(vertx, Addresses.STORE_LEDGER_APPEND, row("r1").put("createdAt", t0)));
    await(send(vertx, Addresses.STORE_LEDGER_APPEND, row("r2").put("createdAt", t0 + 1).put("threadId", "other")));
    await(send(vertx, Addresses.STORE_LEDGER_ATTEND, new JsonObject().put("requestId", "r1").put("step", "remind")
        .put("at", t0 + 300_000).put("text", "Still waiting")));
    JsonArray all = await(send(vertx, Addresses.STORE_LEDGER_LIST, new JsonObject().put("state", "all")
        .put("limit", 10).put("events", true))).getJsonArray("requests");
    assertEquals(List.of("r2", "r1"), all.stream().map(r -> ((JsonObject) r).getString("requestId")).toList());
    assertEquals(List.of("registered"), events(all.getJsonObject(0)));
    assertEquals(List.of("registered", "reminded"), events(all.getJsonObject(1)));
    assertEquals(t0 + 300_000, all.getJsonObject(1).getJsonArray("events").getJsonObject(1).getLong("at"));
    JsonArray oneThread = await(send(vertx, Addresses.STORE_LEDGER_LIST, new JsonObject().put("state", "pending")
        .put("limit", 1).put("threadId", "t").put("events", true))).getJsonArray("requests");
    assertEquals(1, oneThread.size());
    assertEquals(List.of("registered", "reminded"), events(oneThread.getJsonObject(0)));
    assertNull(await(send(vertx, Addresses.STORE_LEDGER_LIST, new JsonObject().put("state", "all").put("limit", 10)))
        .getJsonArray("requests").getJsonObject(0).getValue("events"), "not asked: rows alone");
  }

  private static List<String> events(JsonObject row) {
    return row.getJsonArray("events").stream().map(e -> ((JsonObject) e).getString("event")).toList();
  }

  @Test
  void transcriptsKeepABoundedTail(Vertx vertx) {
    await(vertx.deployVerticle(new StoreRoom(dir.resolve("db.sqlite"))));
    int total = Transcripts.RETENTION + 600;
    Future<JsonObject> last = null;
    for (int seq = 1; seq <= total; seq++) {
      last = send(vertx, Addresses.STORE_TRANSCRIPT_APPEND, new JsonObject().put("threadId", "t").put("seq", seq)
          .put("at", 1L).put("event", new JsonObject().put("kind", "system").put("text", "e" + seq)));
    }
    await(last);
    JsonArray kept = await(send(vertx, Addresses.STORE_TRANSCRIPT_READ, new JsonObject().put("threadId", "t")
        .put("afterSeq", 0).put("limit", 10_000))).getJsonArray("events");
    long first = kept.getJsonObject(0).getLong("seq");
    assertTrue(first > 1, "the oldest events were pruned");
    assertTrue(total - first + 1 >= Transcripts.RETENTION, "at least the retention is kept");
    JsonArray tail = await(send(vertx, Addresses.STORE_TRANSCRIPT_READ, new JsonObject().put("threadId", "t")
        .put("afterSeq", total - 2).put("limit", 10))).getJsonArray("events");
    assertEquals(2, tail.size());
    assertEquals("e" + total, tail.getJsonObject(1).getJsonObject("event").getString("text"));
  }

  private static JsonArray outbox(Vertx vertx, String pluginId) {
    return await(send(vertx, Addresses.STORE_OUTBOX_PENDING, new JsonObject().put("pluginId", pluginId)))
        .getJsonArray("outputs");
  }

  @Test
  void imCardsAreDurableWithTheLedgerRowAndSupersededByTheEndState(Vertx vertx) {
    await(vertx.deployVerticle(new StoreRoom(dir.resolve("db.sqlite"))));
    JsonObject request = row("r1").put("eligible", new JsonArray().add("web").add("tg:42").add("tg:7"));
    await(send(vertx, Addresses.STORE_LEDGER_APPEND, request));
    JsonArray cards = outbox(vertx, "tg");
    assertEquals(2, cards.size());
    assertEquals("card", cards.getJsonObject(0).getString("kind"));
    assertEquals("42", cards.getJsonObject(0).getString("chatId"));
    // The same outputs, with the same ids, until they are acknowledged.
    assertEquals(cards, outbox(vertx, "tg"));
    String delivered = cards.getJsonObject(0).getString("outputId");
    await(send(vertx, Addresses.STORE_OUTBOX_ACK, new JsonObject().put("pluginId", "tg")
        .put("outputIds", new JsonArray().add(delivered))));
    assertEquals(1, outbox(vertx, "tg").size());

    await(send(vertx, Addresses.STORE_LEDGER_END, new JsonObject().put("requestId", "r1").put("state", "cancelled")
        .put("reason", "shutdown").put("outcome", new JsonObject().put("outcome", "cancelled").put("reason", "shutdown"))));
    JsonArray after = outbox(vertx, "tg");
    // The undelivered card is gone; both chats get the end state instead.
    assertEquals(2, after.size());
    for (Object o : after) {
      JsonObject out = (JsonObject) o;
      assertEquals("card_end", out.getString("kind"));
      assertEquals("shutdown", out.getJsonObject("body").getJsonObject("outcome").getString("reason"));
    }
  }

  @Test
  void finishedOutputsAreKeptBoundedPerPlugin(Vertx vertx) throws Exception {
    Path db = dir.resolve("db.sqlite");
    await(vertx.deployVerticle(new StoreRoom(db)));
    int total = Outbox.KEPT_PER_PLUGIN + 1_000;
    List<Future<JsonObject>> enqueued = new ArrayList<>();
    for (int i = 0; i < total; i++) {
      enqueued.add(send(vertx, Addresses.STORE_OUTBOX_ENQUEUE, new JsonObject().put("pluginId", "tg")
          .put("chatId", "1").put("kind", "system").put("body", new JsonObject().put("text", "t" + i))));
    }
    List<Future<JsonObject>> acks = new ArrayList<>();
    for (Future<JsonObject> f : enqueued) {
      acks.add(send(vertx, Addresses.STORE_OUTBOX_ACK, new JsonObject().put("pluginId", "tg")
          .put("outputIds", new JsonArray().add(await(f).getString("outputId")))));
    }
    acks.forEach(f -> await(f));
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
         ResultSet count = c.createStatement().executeQuery("SELECT COUNT(*) FROM outbox")) {
      int kept = count.getInt(1);
      assertTrue(kept < total, "finished outputs were pruned: " + kept);
      assertTrue(kept >= Outbox.KEPT_PER_PLUGIN, "the newest are kept: " + kept);
    }
  }

  @Test
  void aRestartVoidsPendingRowsAndEnqueuesTheirEndStates(Vertx vertx) {
    await(vertx.deployVerticle(new StoreRoom(dir.resolve("db.sqlite"))));
    await(send(vertx, Addresses.STORE_LEDGER_APPEND, row("r1").put("eligible", new JsonArray().add("tg:42"))));
    await(send(vertx, Addresses.STORE_LEDGER_VOID_PENDING, new JsonObject().put("reason", "voided-by-restart")));
    JsonArray after = outbox(vertx, "tg");
    assertEquals(1, after.size());
    assertEquals("card_end", after.getJsonObject(0).getString("kind"));
    assertEquals("voided-by-restart", after.getJsonObject(0).getJsonObject("body").getJsonObject("outcome")
        .getString("reason"));
  }

  @Test
  void aRequestCannotEndTwiceInTheLedger(Vertx vertx) {
    await(vertx.deployVerticle(new StoreRoom(dir.resolve("db.sqlite"))));
    await(send(vertx, Addresses.STORE_LEDGER_APPEND, row("r1")));
    JsonObject end = new JsonObject().put("requestId", "r1").put("state", "selected").put("optionId", "allow")
        .put("optionKind", "allow_once").put("surface", "web");
    await(send(vertx, Addresses.STORE_LEDGER_END, end));
    assertEquals(ErrorCode.CONFLICT, errorOf(send(vertx, Addresses.STORE_LEDGER_END,
        end.copy().put("state", "cancelled").put("reason", "shutdown"))));
    assertEquals("allow", get(vertx, "r1").getJsonObject("outcome").getString("optionId"));
  }

  @Test
  void malformedWritesAreRefused(Vertx vertx) {
    await(vertx.deployVerticle(new StoreRoom(dir.resolve("db.sqlite"))));
    assertEquals(ErrorCode.BAD_REQUEST, errorOf(send(vertx, Addresses.STORE_LEDGER_APPEND, new JsonObject())));
    assertEquals(ErrorCode.BAD_REQUEST, errorOf(send(vertx, Addresses.STORE_LEDGER_END,
        new JsonObject().put("requestId", "r").put("state", "maybe"))));
    assertEquals(ErrorCode.BAD_REQUEST, errorOf(send(vertx, Addresses.STORE_LEDGER_LIST,
        new JsonObject().put("state", "some"))));
  }

  @Test
  void theDatabaseIsWalAndSurvivesAReopenWithoutRerunningMigrations(Vertx vertx) throws Exception {
    Path db = dir.resolve("db.sqlite");
    String first = await(vertx.deployVerticle(new StoreRoom(db)));
    await(send(vertx, Addresses.STORE_LEDGER_APPEND, row("kept")));
    await(vertx.undeploy(first));
    await(vertx.deployVerticle(new StoreRoom(db)));
    assertNotNull(get(vertx, "kept"));
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
         ResultSet mode = c.createStatement().executeQuery("PRAGMA journal_mode");
         ResultSet version = c.createStatement().executeQuery("PRAGMA user_version")) {
      assertEquals("wal", mode.getString(1));
      assertEquals(Migrations.VERSIONS.size(), version.getInt(1));
    }
  }

  @Test
  void aDatabaseFromANewerReleaseIsRefused(Vertx vertx) throws Exception {
    Path db = dir.resolve("db.sqlite");
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db)) {
      c.createStatement().execute("PRAGMA user_version = 99");
    }
    Future<String> deployed = vertx.deployVerticle(new StoreRoom(db));
    Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
        () -> deployed.await(10, java.util.concurrent.TimeUnit.SECONDS));
    assertTrue(e.getMessage().contains("newer"), e.getMessage());
  }
}
