package io.switchboard.permission;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.errorOf;
import static io.switchboard.testkit.PermissionHarness.request;
import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.config.Attention;
import io.switchboard.testkit.ManualClock;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request's attention plan walked on a clock moved by hand, against a real SQLite ledger and
 * outbox: each step once at its time, none after the request ends, and an expiry in its own state.
 */
@ExtendWith(VertxExtension.class)
class AttentionPlanTest {
  private static final long MIN = 60_000;
  /** 2026-12-02 12:00 UTC: outside the quiet hours used below. */
  private static final long NOON = ZonedDateTime.of(2026, 12, 2, 12, 0, 0, 0, ZoneOffset.UTC).toInstant().toEpochMilli();

  @TempDir
  Path dir;
  PermissionHarness rooms;
  ManualClock clock;
  final List<JsonObject> attention = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start(Vertx vertx) {
    rooms = new PermissionHarness(vertx, dir.resolve("switchboard.db")).start();
    vertx.eventBus().<JsonObject>consumer(Addresses.PERMISSION_ATTENTION, m -> attention.add(m.body()));
  }

  @AfterEach
  void stop() {
    rooms.close();
  }

  private void plan(Attention.Spec spec, long startAt) {
    clock = new ManualClock(startAt);
    rooms.crashPermissionRoom();
    rooms.startPermissionRoom(new PermissionRoom(100).attention(new Attention(spec, Map.of(), Map.of())).clock(clock));
  }

  private static Attention.Spec spec(long remind, long escalate, long deadline, Attention.OnExpiry onExpiry) {
    return new Attention.Spec(remind, escalate, List.of("chat:boss"), deadline, onExpiry, null);
  }

  @Test
  void aPlanWalksThroughReminderEscalationAndDeadlineEachStepOnceAtItsTime() {
    plan(spec(2 * MIN, 5 * MIN, 10 * MIN, Attention.OnExpiry.REJECT), NOON);
    Future<JsonObject> asked = rooms.register(request("t1", "s1", "tc1", "web", "chat:c1"));
    waitFor(() -> rooms.shown.size() == 1, "the card shown");
    String id = rooms.idOf("tc1");
    JsonObject card = rooms.shown.get(0);
    assertEquals(NOON + 10 * MIN, card.getJsonObject("deadline").getLong("at"), "the card carries its deadline");
    assertEquals("deadline 10m of the gateway's attention settings", card.getJsonObject("deadline").getString("rule"));

    moveTo(2 * MIN - 1);
    assertEquals(List.of("registered"), events(id), "nothing before the reminder's time");
    moveTo(2 * MIN);
    waitFor(() -> events(id).contains("reminded"), "the reminder at two minutes");
    List<JsonObject> reminders = outputs("chat", "reminder");
    assertEquals(1, reminders.size(), "one reminder, a new message in the chat that had the card: " + reminders);
    assertEquals("c1", reminders.get(0).getString("chatId"));
    String text = reminders.get(0).getJsonObject("body").getString("text");
    assertTrue(text.contains("Still waiting") && text.contains("2 min") && text.contains("expires at 12:10"), text);

    moveTo(5 * MIN);
    waitFor(() -> events(id).contains("escalated"), "the escalation at five minutes");
    assertEquals(List.of("c1", "boss"), outputs("chat", "card").stream().map(o -> o.getString("chatId")).toList(),
        "the chat escalated to gets the card");
    assertTrue(rooms.ledgerRow(id).getJsonArray("eligible").contains("chat:boss"), "and may answer it");

    moveTo(10 * MIN - 1);
    assertFalse(asked.isComplete(), "still waiting a moment before its deadline");
    moveTo(10 * MIN);
    JsonObject outcome = await(asked).getJsonObject("outcome");
    assertEquals("expired", outcome.getString("outcome"));
    assertEquals("reject", outcome.getString("optionId"), "the agent gets the reject-kind option, never an allow");
    assertEquals("reject_once", outcome.getString("kind"));
    JsonObject row = rooms.ledgerRow(id);
    assertEquals("expired", row.getString("state"), "its own ledger state, not a person's refusal");
    assertEquals("deadline 10m of the gateway's attention settings", row.getJsonObject("outcome").getString("rule"));
    assertEquals(List.of("registered", "reminded", "escalated", "expired"), events(id), "each step once");
    assertEquals(2, outputs("chat", "card_end").size(), "both chats' cards say it expired");
    assertEquals("expired", outputs("chat", "card_end").get(0).getJsonObject("body").getJsonObject("outcome")
        .getString("outcome"));

    ErrorCode late = errorOf(rooms.answer(id, "allow", "chat:boss", "boss"));
    assertEquals(ErrorCode.ALREADY_ANSWERED, late);
    moveTo(60 * MIN);
    assertEquals(List.of("registered", "reminded", "escalated", "expired"), events(id), "nothing after the end");
    assertEquals(List.of("remind", "escalate"), attention.stream().map(a -> a.getString("step")).toList());
  }

  /** /metrics counts each step the ledger writes, and every push: with the card, a reminder and an escalation. */
  @Test
  void metricsCountEveryPushReminderEscalationAndExpiry() {
    plan(spec(2 * MIN, 5 * MIN, 10 * MIN, Attention.OnExpiry.REJECT), NOON);
    await(rooms.vertx.deployVerticle(new io.switchboard.metrics.MetricsRoom()));
    await(rooms.vertx.eventBus().request(Addresses.STORE_PUSH_SUBSCRIBE, new JsonObject()
        .put("endpoint", "https://push.example/abc").put("p256dh", "k").put("auth", "a")));
    Future<JsonObject> asked = rooms.register(request("t1", "s1", "tc1", "web", "chat:c1"));
    waitFor(() -> rooms.shown.size() == 1, "the card shown");
    String id = rooms.idOf("tc1");
    waitFor(() -> attention.size() == 1, "the first push, counted");
    assertEquals(List.of("registered", "pushed"), events(id));
    assertEquals(1, metric("switchboard_permission_attention_total{step=\"push\"}"), "the push at t0");

    moveTo(2 * MIN);
    waitFor(() -> attention.size() == 2, "the reminder");
    assertEquals(1, metric("switchboard_permission_attention_total{step=\"remind\"}"));
    assertEquals(2, metric("switchboard_permission_attention_total{step=\"push\"}"), "the reminder was pushed too");
    moveTo(5 * MIN);
    waitFor(() -> attention.size() == 3, "the escalation");
    assertEquals(1, metric("switchboard_permission_attention_total{step=\"escalate\"}"));
    assertEquals(3, metric("switchboard_permission_attention_total{step=\"push\"}"), "and so was the escalation");
    moveTo(10 * MIN);
    assertEquals("expired", await(asked).getJsonObject("outcome").getString("outcome"));
    waitFor(() -> metric("switchboard_permission_outcomes_total{detail=\"reject\",outcome=\"expired\"}") == 1,
        "the expiry counted with the outcomes");
    assertEquals(List.of("push", "remind", "escalate"), attention.stream().map(a -> a.getString("step")).toList());
    assertEquals(List.of(1, 1, 1), attention.stream().map(a -> a.getInteger("pushed")).toList(),
        "one device each time");
  }

  /** The value of one Prometheus series (0 when it is not there yet). */
  private double metric(String series) {
    String text = await(rooms.vertx.eventBus().<String>request(Addresses.METRICS_SCRAPE, new JsonObject())).body();
    for (String line : text.split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1));
      }
    }
    return 0;
  }

  @Test
  void anAnswerInBetweenStopsEveryLaterStep() {
    plan(spec(2 * MIN, 5 * MIN, 10 * MIN, Attention.OnExpiry.REJECT), NOON);
    Future<JsonObject> asked = rooms.register(request("t1", "s1", "tc1", "web", "chat:c1"));
    waitFor(() -> rooms.shown.size() == 1, "the card shown");
    String id = rooms.idOf("tc1");
    moveTo(2 * MIN);
    waitFor(() -> events(id).contains("reminded"), "the reminder");
    await(rooms.answer(id, "allow", "web", null));
    assertEquals("selected", await(asked).getJsonObject("outcome").getString("outcome"));
    moveTo(30 * MIN);
    assertEquals(List.of("registered", "reminded", "selected"), events(id), "no escalation, no expiry after the answer");
    assertTrue(outputs("chat", "reminder").stream().noneMatch(o -> "pending".equals(o.getString("state"))));
    assertEquals(0, clock.timersSet(), "no timer left once nothing waits");
  }

  @Test
  void cancelTurnAtExpiryAnswersNoOptionAndSaysWhichRule() {
    plan(new Attention.Spec(0L, 0L, null, 90_000L, Attention.OnExpiry.CANCEL_TURN, null), NOON);
    Future<JsonObject> asked = rooms.register(request("t1", "s1", "tc1", "web"));
    waitFor(() -> rooms.shown.size() == 1, "the card shown");
    moveTo(90_000);
    JsonObject outcome = await(asked).getJsonObject("outcome");
    assertEquals("expired", outcome.getString("outcome"));
    assertEquals("cancelTurn", outcome.getString("onExpiry"));
    assertNull(outcome.getString("optionId"), "cancelTurn chooses no option");
    assertEquals(List.of("registered", "expired"), events(rooms.idOf("tc1")), "no reminder when it is off");
  }

  @Test
  void quietHoursHoldTheFirstPushAndTheReminderButNotTheDeadline() {
    long lateEvening = ZonedDateTime.of(2026, 12, 2, 23, 0, 0, 0, ZoneOffset.UTC).toInstant().toEpochMilli();
    Attention.QuietHours quiet = new Attention.QuietHours(LocalTime.of(22, 0), LocalTime.of(7, 0), ZoneOffset.UTC);
    plan(new Attention.Spec(2 * MIN, 0L, null, 0L, null, quiet), lateEvening);
    await(rooms.vertx.eventBus().request(Addresses.STORE_PUSH_SUBSCRIBE, new JsonObject()
        .put("endpoint", "https://push.example/abc").put("p256dh", "k").put("auth", "a")));
    rooms.register(request("t1", "s1", "tc1", "web"));
    waitFor(() -> rooms.shown.size() == 1, "the card shown");
    String id = rooms.idOf("tc1");
    assertTrue(outputs("_push", "card").isEmpty(), "no push at 23:00");
    moveTo(7 * 60 * MIN); // 06:00
    assertEquals(List.of("registered"), events(id), "still quiet at six");
    moveTo(8 * 60 * MIN); // 07:00
    waitFor(() -> events(id).containsAll(List.of("pushed", "reminded")), "push and reminder when the quiet ends");
    assertEquals(1, outputs("_push", "card").size());
    assertEquals(1, outputs("_push", "reminder").size());
  }

  @Test
  void aRestartMidPlanVoidsTheRequestOnceAndRepeatsNoStep() {
    plan(spec(2 * MIN, 5 * MIN, 10 * MIN, Attention.OnExpiry.REJECT), NOON);
    rooms.register(request("t1", "s1", "tc1", "web", "chat:c1"));
    waitFor(() -> rooms.shown.size() == 1, "the card shown");
    String id = rooms.idOf("tc1");
    moveTo(2 * MIN);
    waitFor(() -> events(id).contains("reminded"), "the reminder");
    assertEquals(1, outputs("chat", "reminder").size(), "the reminder is written before the crash");
    rooms.crashPermissionRoom();
    rooms.startPermissionRoom(new PermissionRoom(100).attention(new Attention(spec(2 * MIN, 5 * MIN, 10 * MIN,
        Attention.OnExpiry.REJECT), Map.of(), Map.of())).clock(clock));
    moveTo(30 * MIN);
    assertEquals(List.of("registered", "reminded", "cancelled"), events(id),
        "its process is gone: voided once, and no step runs again or late");
    // The chat hears once that it ended; the reminder not yet sent is not sent now (its card is dead).
    assertEquals(1, outputs("chat", "card_end").size());
    assertTrue(outputs("chat", "reminder").isEmpty(), "a reminder of an ended request is never sent");
  }

  private long started = -1;

  /** Moves the clock to {@code ms} after the plan's start, and lets the room run what fell due. */
  private void moveTo(long ms) {
    if (started < 0) {
      started = clock.now();
    }
    // The room publishes a card before it sets the card's timer, in the same handler: a round trip
    // first lets that handler finish, or time could pass a step whose timer is not set yet.
    settle();
    clock.advance(started + ms - clock.now());
    // A fired timer runs on the permission room's loop: a round trip there sees its effects begun.
    settle();
    await(rooms.vertx.eventBus().request(Addresses.STORE_HEALTH, new JsonObject()));
  }

  private void settle() {
    await(rooms.vertx.eventBus().request(Addresses.PERMISSION_STATUS, new JsonObject()));
  }

  private List<String> events(String id) {
    return rooms.ledgerRow(id).getJsonArray("events").stream().map(e -> ((JsonObject) e).getString("event")).toList();
  }

  /** Every output of {@code pluginId} of that kind, delivered or not, oldest first. */
  private List<JsonObject> outputs(String pluginId, String kind) {
    JsonArray all = await(rooms.vertx.eventBus().<JsonObject>request(Addresses.STORE_OUTBOX_PENDING,
        new JsonObject().put("pluginId", pluginId).put("limit", 1000))).body().getJsonArray("outputs");
    return all.stream().map(o -> (JsonObject) o).filter(o -> kind.equals(o.getString("kind"))).toList();
  }
}
