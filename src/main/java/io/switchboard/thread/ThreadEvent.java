package io.switchboard.thread;

import io.vertx.core.json.JsonObject;

/**
 * One event of a thread's transcript, as the thread room publishes it live at {@code
 * sb.thread.<id>.events} and keeps it: its number in the thread (from 1, no gaps), when it happened
 * and what (an ACP update, a user message, a turn's start or end, a system line: docs/event-bus.md).
 * Read once at each room's edge; the body stays JSON, as agents and pages speak it.
 */
public record ThreadEvent(String threadId, long seq, long at, JsonObject event) {
  public ThreadEvent {
    if (threadId == null || event == null) {
      throw new IllegalArgumentException("a thread event needs its threadId and event");
    }
  }

  /** A published event; an {@link IllegalArgumentException} names the field that is missing or wrong. */
  public static ThreadEvent of(JsonObject body) {
    if (!(body.getValue("threadId") instanceof String threadId)) {
      throw new IllegalArgumentException("threadId must be a string");
    }
    if (!(body.getValue("seq") instanceof Number seq)) {
      throw new IllegalArgumentException("seq must be a number");
    }
    if (!(body.getValue("event") instanceof JsonObject event)) {
      throw new IllegalArgumentException("event must be an object");
    }
    return new ThreadEvent(threadId, seq.longValue(), body.getValue("at") instanceof Number at ? at.longValue() : 0,
        event);
  }

  /** An event of the thread's history ({@code {seq, at, event}}, the thread implied). */
  public static ThreadEvent inHistory(String threadId, JsonObject row) {
    return of(row.copy().put("threadId", threadId));
  }

  /** What kind of event ({@code acp}, {@code user_message}, {@code turn_started}, ...). */
  public String kind() {
    return event.getString("kind");
  }

  public JsonObject toJson() {
    return new JsonObject().put("threadId", threadId).put("seq", seq).put("at", at).put("event", event);
  }
}
