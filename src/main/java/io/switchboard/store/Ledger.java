package io.switchboard.store;

import static io.switchboard.store.Sql.required;
import static io.switchboard.store.Sql.update;

import io.switchboard.common.RandomIds;
import io.switchboard.permission.Card;
import io.switchboard.store.WriteQueue.Write;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The permission ledger's SQL: request rows and their hash-chained audit events. A write is parsed
 * on the event loop (a bad body fails there) and runs on the writer thread; a card for every IM
 * surface, and its end state, go to the outbox in the same transaction as the row.
 */
final class Ledger {
  private final Pool readers;
  private final LedgerChain.Head chainHead;

  /** The ids of the outputs it writes to the outbox with the ledger's rows. */
  private final RandomIds ids = new RandomIds();

  Ledger(Pool readers, LedgerChain.Head chainHead) {
    this.readers = readers;
    this.chainHead = chainHead;
  }

  // Writes: parsed here, run on the writer thread.

  Write append(JsonObject b) {
    String id = required(b, "requestId");
    String threadId = required(b, "threadId");
    String sessionId = required(b, "sessionId");
    String agentId = b.getString("agentId");
    String toolCall = b.getJsonObject("toolCall", new JsonObject()).encode();
    String options = b.getJsonArray("options", new JsonArray()).encode();
    String eligible = b.getJsonArray("eligible", new JsonArray()).encode();
    long at = b.getLong("createdAt", System.currentTimeMillis());
    String projectId = b.getString("projectId");
    String attention = b.getJsonObject("attention", new JsonObject()).encode();
    // The first push goes with the card, unless quiet hours hold it back (then it is a step of its own).
    boolean push = b.getBoolean("pushNow", false);
    // Answered by a rule: each chat gets this line instead of a card (the request ends at once).
    String auto = b.getString("auto");
    return conn -> {
      String digest = LedgerChain.digest(toolCall, options);
      update(conn, """
          INSERT INTO permission_request
            (request_id, thread_id, session_id, agent_id, tool_call, options, eligible, state, created_at, digest,
             project_id, attention)
          VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)""", id, threadId, sessionId, agentId, toolCall, options,
          eligible, at, digest, projectId, attention);
      insertEvent(conn, id, at, "registered", null, null, null, digest);
      // The card for every IM surface is durable in the same transaction as the ledger row.
      JsonObject card = Card.of(b).toOutboxJson();
      JsonArray touched = new JsonArray();
      for (Object surface : new JsonArray(eligible)) {
        String[] im = Outbox.imSurface((String) surface);
        if (im != null) {
          if (auto != null) {
            Outbox.insert(conn, ids, im[0], im[1], "system", id, new JsonObject().put("text", auto)
                .put("threadId", threadId), at);
          } else {
            Outbox.insert(conn, ids, im[0], im[1], "card", id, card, at);
          }
          touched.add(im[0]);
        }
      }
      int pushed = push && auto == null ? pushToDevices(conn, id, "card", card, at) : 0;
      if (pushed > 0) {
        insertEvent(conn, id, at, "pushed", null, null, null, null);
        touched.add(Outbox.PUSH);
      }
      return new JsonObject().put("requestId", id).put("pushed", pushed).put(Outbox.TOUCHED, touched);
    };
  }

  /**
   * One step of a request's attention plan ({@code push}, {@code remind} or {@code escalate}), done
   * at most once: in one transaction, only while the request is pending and the step's event is not
   * in the ledger yet, the event is written with what the step sends (pushes to every subscribed
   * device, a reminder to every chat that had the card, the card to the chats escalated to, which
   * may then answer). Replies {@code done: false} when the step was done already or the request ended.
   */
  Write attend(JsonObject b) {
    String id = required(b, "requestId");
    String step = required(b, "step");
    String event = switch (step) {
      case "push" -> "pushed";
      case "remind" -> "reminded";
      case "escalate" -> "escalated";
      default -> throw new IllegalArgumentException("step must be push, remind or escalate, got " + step);
    };
    long at = b.getLong("at", System.currentTimeMillis());
    JsonObject card = b.getJsonObject("card", new JsonObject());
    String text = b.getString("text", "");
    JsonArray escalateTo = b.getJsonArray("escalateTo", new JsonArray());
    return conn -> {
      JsonObject row = null;
      try (PreparedStatement st = conn.prepareStatement("SELECT r.state, r.eligible, (SELECT COUNT(*) FROM "
          + "permission_event e WHERE e.request_id = r.request_id AND e.event = ?) AS done FROM permission_request r "
          + "WHERE r.request_id = ?")) {
        st.setString(1, event);
        st.setString(2, id);
        try (ResultSet rs = st.executeQuery()) {
          if (rs.next() && rs.getString(1).equals("pending") && rs.getInt(3) == 0) {
            row = new JsonObject().put("eligible", new JsonArray(rs.getString(2)));
          }
        }
      }
      JsonObject reply = new JsonObject().put("requestId", id).put("step", step);
      if (row == null) {
        return reply.put("done", false);
      }
      JsonArray touched = new JsonArray();
      JsonArray added = new JsonArray();
      String detail = null;
      int pushed;
      if (step.equals("push")) {
        pushed = pushToDevices(conn, id, "card", card, at);
        detail = pushed + " devices";
      } else {
        JsonObject reminder = card.copy().put("text", text).put("step", step);
        for (String[] chat : Outbox.chatsWithCard(conn, id)) {
          Outbox.insert(conn, ids, chat[0], chat[1], "reminder", id, reminder, at);
          touched.add(chat[0]);
        }
        if (step.equals("escalate")) {
          JsonArray eligible = row.getJsonArray("eligible");
          for (Object o : escalateTo) {
            String surface = (String) o;
            String[] im = Outbox.imSurface(surface);
            if (im != null && !eligible.contains(surface)) {
              eligible.add(surface);
              added.add(surface);
              Outbox.insert(conn, ids, im[0], im[1], "card", id, card, at);
              touched.add(im[0]);
            }
          }
          update(conn, "UPDATE permission_request SET eligible = ? WHERE request_id = ?", eligible.encode(), id);
          detail = added.isEmpty() ? null : "to " + String.join(", ", added.stream().map(String::valueOf).toList());
        }
        pushed = pushToDevices(conn, id, "reminder", reminder, at);
      }
      if (pushed > 0) {
        touched.add(Outbox.PUSH);
      }
      insertEvent(conn, id, at, event, null, null, detail, null);
      return reply.put("done", true).put("added", added).put("pushed", pushed).put(Outbox.TOUCHED, touched);
    };
  }

  /** Writes {@code body} for every subscribed device (the push room sends them); how many. */
  private int pushToDevices(Connection conn, String requestId, String kind, JsonObject body, long at)
      throws SQLException {
    List<String> devices = new ArrayList<>();
    try (PreparedStatement st = conn.prepareStatement("SELECT subscription_id FROM push_subscription");
         ResultSet rs = st.executeQuery()) {
      while (rs.next()) {
        devices.add(rs.getString(1));
      }
    }
    for (String device : devices) {
      Outbox.insert(conn, ids, Outbox.PUSH, device, kind, requestId, body, at);
    }
    return devices.size();
  }

  Write end(JsonObject b) {
    String id = required(b, "requestId");
    String state = required(b, "state");
    if (!state.equals("selected") && !state.equals("cancelled") && !state.equals("expired")) {
      throw new IllegalArgumentException("state must be selected, cancelled or expired, got " + state);
    }
    long at = b.getLong("endedAt", System.currentTimeMillis());
    String optionId = b.getString("optionId");
    String reason = b.getString("reason");
    String surface = b.getString("surface");
    String user = b.getString("user");
    String optionKind = b.getString("optionKind");
    String answerKey = b.getString("answerKey");
    // A question's answer as kept (secret fields left out by the permission room).
    String answer = b.getValue("answer") instanceof JsonObject a ? a.encode() : null;
    String person = b.getValue("person") instanceof JsonObject who ? who.encode() : null;
    JsonObject outcome = b.getValue("outcome") instanceof JsonObject o ? o
        : new JsonObject().put("outcome", state).put("optionId", optionId).put("reason", reason);
    return conn -> {
      int changed = update(conn, """
          UPDATE permission_request
             SET state = ?, option_id = ?, option_kind = ?, reason = ?,
                 answered_surface = ?, answered_user = ?, ended_at = ?, answer_key = ?, answer = ?,
                 answered_person = ?
           WHERE request_id = ? AND state = 'pending'""", state, optionId, optionKind, reason, surface, user, at,
          answerKey, answer, person, id);
      if (changed != 1) {
        throw new StoreConflict("request " + id + " is not pending in the ledger; refusing to end it twice");
      }
      insertEvent(conn, id, at, state, surface, user, state.equals("selected") ? optionId : reason,
          LedgerChain.endState(state, optionId, optionKind, reason, surface, user, at, answer, person));
      // Every IM card of the request is superseded by its end state, in the same transaction.
      JsonArray touched = Outbox.supersede(conn, ids, id, endBody(id, outcome, at), at);
      return new JsonObject().put("requestId", id).put(Outbox.TOUCHED, touched);
    };
  }

  Write note(JsonObject b) {
    String id = required(b, "requestId");
    String event = required(b, "event");
    long at = b.getLong("at", System.currentTimeMillis());
    String surface = b.getString("surface");
    String user = b.getString("user");
    String detail = b.getString("detail");
    return conn -> {
      insertEvent(conn, id, at, event, surface, user, detail, null);
      return new JsonObject().put("requestId", id);
    };
  }

  /** Every request still pending was left by a process that is gone: end it with the given reason. */
  Write voidPending(JsonObject b) {
    String reason = required(b, "reason");
    long at = b.getLong("at", System.currentTimeMillis());
    return conn -> {
      JsonArray voided = new JsonArray();
      JsonArray touched = new JsonArray();
      try (PreparedStatement select = conn.prepareStatement(
          "SELECT * FROM permission_request WHERE state = 'pending' ORDER BY created_at");
           ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          voided.add(LedgerRows.toJson(rs));
        }
      }
      for (Object o : voided) {
        JsonObject request = (JsonObject) o;
        String id = request.getString("requestId");
        update(conn, "UPDATE permission_request SET state = 'cancelled', reason = ?, ended_at = ? "
            + "WHERE request_id = ? AND state = 'pending'", reason, at, id);
        insertEvent(conn, id, at, "cancelled", null, null, reason,
            LedgerChain.endState("cancelled", null, null, reason, null, null, at, null, null));
        JsonObject outcome = new JsonObject().put("outcome", "cancelled").put("reason", reason);
        request.put("state", "cancelled").put("endedAt", at).put("outcome", outcome);
        touched.addAll(Outbox.supersede(conn, ids, id, endBody(id, outcome, at), at));
      }
      return new JsonObject().put("voided", voided).put(Outbox.TOUCHED, touched);
    };
  }

  /** Appends an audit event, chained to the one before (LedgerChain); writer thread only. */
  private void insertEvent(Connection conn, String id, long at, String event, String surface, String user,
                           String detail, String vouches) throws SQLException {
    String hash = LedgerChain.link(chainHead.get(conn), id, at, event, surface, user, detail, vouches);
    update(conn, "INSERT INTO permission_event (request_id, at, event, surface, user_name, detail, hash) "
        + "VALUES (?, ?, ?, ?, ?, ?, ?)", id, at, event, surface, user, detail, hash);
    chainHead.moveTo(hash);
  }

  private static JsonObject endBody(String requestId, JsonObject outcome, long at) {
    return new JsonObject().put("requestId", requestId).put("outcome", outcome).put("endedAt", at);
  }

  // Reads: a bad body throws IllegalArgumentException before any query.

  Future<JsonObject> get(JsonObject body) {
    String id = body == null ? null : body.getString("requestId");
    if (id == null) {
      throw new IllegalArgumentException("requestId is missing");
    }
    return readers.preparedQuery("SELECT * FROM permission_request WHERE request_id = ?").execute(Tuple.of(id))
        .compose(rows -> {
          if (rows.size() == 0) {
            return Future.succeededFuture(new JsonObject().putNull("request"));
          }
          JsonObject found = LedgerRows.toJson(rows.iterator().next());
          return readers.preparedQuery("SELECT * FROM permission_event WHERE request_id = ? ORDER BY id")
              .execute(Tuple.of(id))
              .map(events -> {
                JsonArray trail = new JsonArray();
                events.forEach(e -> trail.add(LedgerRows.eventToJson(e)));
                return new JsonObject().put("request", found.put("events", trail));
              });
        });
  }

  Future<JsonObject> list(JsonObject body) {
    JsonObject b = body == null ? new JsonObject() : body;
    String state = b.getValue("state", "all") instanceof String s ? s : "";
    Object limitValue = b.getValue("limit", 100);
    int limit = limitValue instanceof Integer i ? i : -1;
    if (!state.equals("pending") && !state.equals("all") || limit < 1 || limit > 10_000) {
      throw new IllegalArgumentException("state must be pending or all, limit an integer 1..10000");
    }
    String threadId = b.getString("threadId");
    boolean withEvents = b.getBoolean("events", false);
    StringBuilder selection = new StringBuilder(" FROM permission_request WHERE 1 = 1");
    List<Object> args = new ArrayList<>();
    if (state.equals("pending")) {
      selection.append(" AND state = 'pending'");
    }
    if (threadId != null) {
      selection.append(" AND thread_id = ?");
      args.add(threadId);
    }
    selection.append(" ORDER BY created_at DESC, request_id LIMIT ?");
    args.add(limit);
    Future<JsonObject> listed = Sql.listed(readers.preparedQuery("SELECT *" + selection).execute(Tuple.from(args)),
        "requests", LedgerRows::toJson);
    if (!withEvents) {
      return listed;
    }
    // The same selection as a subquery: one statement for the events of every row, however many.
    String events = "SELECT * FROM permission_event WHERE request_id IN (SELECT request_id" + selection
        + ") ORDER BY id";
    return listed.compose(reply -> readers.preparedQuery(events).execute(Tuple.from(args)).map(rows -> {
      java.util.Map<String, JsonArray> trails = new java.util.HashMap<>();
      for (Object o : reply.getJsonArray("requests")) {
        JsonArray trail = new JsonArray();
        trails.put(((JsonObject) o).getString("requestId"), trail);
        ((JsonObject) o).put("events", trail);
      }
      // A request written between the two reads is not listed: its events are left out too.
      rows.forEach(e -> trails.getOrDefault(e.getString("request_id"), new JsonArray())
          .add(LedgerRows.eventToJson(e)));
      return reply;
    }));
  }
}
