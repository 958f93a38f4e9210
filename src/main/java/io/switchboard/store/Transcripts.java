package io.switchboard.store;

import static io.switchboard.store.Sql.required;
import static io.switchboard.store.Sql.update;

import io.switchboard.store.WriteQueue.Write;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

/** The transcripts' SQL: each thread's numbered events, a bounded tail of them kept. Its writes need not survive a power loss. */
final class Transcripts {
  /** Transcript events kept per thread; older ones are pruned as new ones arrive. */
  static final int RETENTION = 10_000;

  private final Pool readers;

  Transcripts(Pool readers) {
    this.readers = readers;
  }

  Write append(JsonObject b) {
    String id = required(b, "threadId");
    Object seqValue = b.getValue("seq");
    if (!(seqValue instanceof Number)) {
      throw new IllegalArgumentException("seq is missing");
    }
    long seq = ((Number) seqValue).longValue();
    if (!(b.getValue("event") instanceof JsonObject event)) {
      throw new IllegalArgumentException("event must be an object");
    }
    String text = event.encode();
    long at = b.getLong("at", System.currentTimeMillis());
    return conn -> {
      update(conn, "INSERT INTO transcript (thread_id, seq, at, event) VALUES (?, ?, ?, ?)", id, seq, at, text);
      if (seq % 256 == 0 && seq > RETENTION) {
        update(conn, "DELETE FROM transcript WHERE thread_id = ? AND seq <= ?", id, seq - RETENTION);
      }
      return new JsonObject().put("seq", seq);
    };
  }

  Future<JsonObject> read(JsonObject body) {
    JsonObject b = body == null ? new JsonObject() : body;
    String id = b.getString("threadId");
    long after = b.getValue("afterSeq") instanceof Number n ? n.longValue() : 0L;
    int limit = b.getValue("limit") instanceof Integer i ? i : 1000;
    if (id == null || limit < 1 || limit > 10_000) {
      throw new IllegalArgumentException("threadId is missing or limit is not 1..10000");
    }
    return Sql.listed(readers.preparedQuery(
            "SELECT seq, at, event FROM transcript WHERE thread_id = ? AND seq > ? ORDER BY seq LIMIT ?")
        .execute(Tuple.of(id, after, limit)), "events", row -> new JsonObject().put("seq", row.getLong("seq"))
            .put("at", row.getLong("at")).put("event", new JsonObject(row.getString("event"))));
  }
}
