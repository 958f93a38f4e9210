package io.switchboard.thread;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** A thread's event read at a room's edge: what is published, read back whole; what is wrong, named. */
class ThreadEventTest {
  @Test
  void aPublishedEventReadsBackWholeAndAHistoryRowTakesItsThread() {
    ThreadEvent e = new ThreadEvent("t_1", 7, 1_000, new JsonObject().put("kind", "turn_started"));
    assertEquals(e, ThreadEvent.of(e.toJson()));
    assertEquals("turn_started", e.kind());
    assertEquals(e, ThreadEvent.inHistory("t_1", new JsonObject().put("seq", 7).put("at", 1_000)
        .put("event", new JsonObject().put("kind", "turn_started"))));
  }

  @Test
  void whatIsMissingOrWrongIsNamed() {
    JsonObject good = new ThreadEvent("t_1", 1, 0, new JsonObject()).toJson();
    assertEquals("seq must be a number", assertThrows(IllegalArgumentException.class,
        () -> ThreadEvent.of(good.copy().put("seq", "1"))).getMessage());
    assertEquals("threadId must be a string", assertThrows(IllegalArgumentException.class,
        () -> ThreadEvent.of(good.copy().putNull("threadId"))).getMessage());
    assertEquals("event must be an object", assertThrows(IllegalArgumentException.class,
        () -> ThreadEvent.of(good.copy().put("event", "x"))).getMessage());
  }
}
