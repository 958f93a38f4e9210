package io.switchboard.web;

import io.switchboard.bus.Addresses;
import io.switchboard.thread.ThreadEvent;
import io.switchboard.permission.Card;
import io.switchboard.bus.ErrorCode;
import io.switchboard.config.AgentSpec;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code /ws/chat} connection: parses and checks each client frame (a bad one gets an
 * {@code error} frame and changes nothing), turns frames into bus commands, and sends the threads'
 * events and cards. Attaching replays history after {@code afterSeq}, then the pending cards, then
 * the turn state; live events that arrive meanwhile are held and sent after, without duplicates.
 * Its send queue is bounded: a browser that stops reading is disconnected with a reason.
 */
final class ChatSocket {
  private static final Logger log = LoggerFactory.getLogger(ChatSocket.class);
  static final int MAX_FRAME_BYTES = 1024 * 1024;
  static final int REPLAY_LIMIT = 1000;

  private final WebRoom room;
  private final SocketHub hub;
  private final Vertx vertx;
  private final ServerWebSocket ws;
  /** threadId -> the last seq sent on this socket. */
  private final Map<String, Long> lastSeq = new HashMap<>();
  /** threadId -> frames that arrived while the thread's history was being replayed. */
  private final Map<String, List<Held>> held = new HashMap<>();

  /** What waits while a thread's history is replayed: a live event, or a frame encoded once by its key. */
  private sealed interface Held permits LiveEvent, Frame {
    String threadId();
  }

  private record LiveEvent(ThreadEvent event) implements Held {
    public String threadId() {
      return event.threadId();
    }
  }

  private record Frame(String threadId, String key, JsonObject body) implements Held {}
  private final ArrayDeque<String> queue = new ArrayDeque<>();
  private long queuedBytes;
  private boolean closed;
  /** The login it was opened with ({@code session}: null for a bearer token; who, how): logging out closes it. */
  private final JsonObject login;
  private long pingTimer = -1;
  /** Server pings keep a quiet socket inside the connection idle timeout, whatever the tab's timers do. */
  static final long PING_MS = 20_000;

  /** A client frame that breaks the protocol; the message names what is wrong. */
  private static final class BadFrame extends Exception {
    BadFrame(String message) {
      super(message, null, false, false);
    }
  }

  ChatSocket(WebRoom room, SocketHub hub, Vertx vertx, ServerWebSocket ws, JsonObject login) {
    this.room = room;
    this.hub = hub;
    this.vertx = vertx;
    this.ws = ws;
    this.login = login;
  }

  String session() {
    return login.getString("session");
  }

  /** Who this socket's login names now; a disabled or removed person's frame is refused (and the socket ends soon). */
  private io.switchboard.people.Principal me() throws BadFrame {
    io.switchboard.people.Principal me = room.principal(login);
    if (me == null) {
      throw new BadFrame("this login's person is disabled or removed; log in again");
    }
    return me;
  }

  /** Ends the socket because its login ended (logout, token rotated): the page asks to log in again. */
  void closeUnauthorized(String why) {
    close();
    ws.close((short) 4401, why);
  }

  void start() {
    hub.opened(this);
    pingTimer = vertx.setPeriodic(PING_MS, t -> {
      if (!closed) {
        ws.writePing(io.vertx.core.buffer.Buffer.buffer());
      }
    });
    ws.textMessageHandler(this::frame);
    ws.binaryMessageHandler(b -> error("bad_frame", "binary frames are not part of the protocol; send JSON text", null,
        null));
    ws.closeHandler(v -> close());
    ws.exceptionHandler(err -> log.debug("chat socket error: {}", err.getMessage()));
    ws.drainHandler(v -> drain());
    room.ask(Addresses.THREAD_LIST, new JsonObject()).onComplete(done -> {
      JsonArray agents = new JsonArray();
      for (AgentSpec a : room.settings().agents()) {
        agents.add(new JsonObject().put("id", a.id()).put("name", a.name()));
      }
      JsonArray threads = new JsonArray();
      if (done.succeeded()) {
        for (Object o : done.result().getJsonArray("threads")) {
          JsonObject t = (JsonObject) o;
          threads.add(new JsonObject().put("threadId", t.getString("threadId")).put("agent", t.getString("agent"))
              .put("title", t.getString("title")).put("busy", t.getBoolean("busy"))
              .put("archived", t.getBoolean("archived", false)).mergeIn(WebRoom.threadFacts(t))
              .put("pending", room.pendingCount(t.getString("threadId"))));
        }
      }
      JsonObject welcome = new JsonObject().put("type", "welcome").put("version", room.version()).put("agents", agents)
          .put("defaultAgent", room.settings().defaultAgent()).put("threads", threads)
          .put("projects", projects()).put("defaultProject", room.settings().defaultProject());
      if (room.settings().cluster() != null) {
        welcome.put("nodes", new JsonArray(room.agentNodes())); // where a new thread may run
      }
      if (room.pushKey() != null) {
        welcome.put("push", new JsonObject().put("publicKey", room.pushKey()));
      }
      send(welcome);
    });
  }

  // ---- client frames ----

  private void frame(String text) {
    if (closed) {
      return;
    }
    JsonObject f = null;
    try {
      if (text.length() > MAX_FRAME_BYTES / 4 && text.getBytes(StandardCharsets.UTF_8).length > MAX_FRAME_BYTES) {
        throw new BadFrame("a frame may carry at most 1 MiB");
      }
      try {
        f = new JsonObject(text);
      } catch (DecodeException | ClassCastException e) {
        throw new BadFrame("a frame must be one JSON object");
      }
      if (!(f.getValue("type") instanceof String type)) {
        throw new BadFrame("the frame has no \"type\"");
      }
      switch (type) {
        case "ping" -> send(new JsonObject().put("type", "pong"));
        case "new_thread" -> newThread(f);
        case "attach" -> attach(f);
        case "prompt" -> prompt(f);
        case "cancel" -> cancel(f);
        case "set_mode" -> setMode(f);
        case "rename_thread" -> rename(f);
        case "archive_thread" -> archive(f);
        case "delete_thread" -> toThread(Addresses.THREAD_DELETE, new JsonObject().put("threadId", text(f, "threadId")),
            clientRef(f));
        case "set_config" -> setConfig(f);
        case "permission_answer" -> answer(f);
        case "push_subscribe" -> pushSubscribe(f);
        case "rules" -> rules(f);
        case "usage" -> usage(f);
        case "agent_logout" -> logout(f);
        case "revoke_rule" -> revokeRule(f);
        case "link_chat" -> linkChat(f);
        case "whoami" -> send(new JsonObject().put("type", "whoami").put("person", me().toJson())
            .put("clientRef", clientRef(f)));
        case "push_unsubscribe" -> pushUnsubscribe(f);
        case "changes" -> changes(f);
        case "sessions" -> sessions(f);
        case "commit" -> projectAction(f, "commit", Addresses.THREAD_COMMIT);
        case "merge" -> projectAction(f, "merge", Addresses.THREAD_MERGE);
        case "discard" -> projectAction(f, "discard", Addresses.THREAD_DISCARD);
        case "keep" -> projectAction(f, "keep", Addresses.THREAD_KEEP);
        default -> throw new BadFrame("unknown type \"" + type + "\"");
      }
    } catch (BadFrame e) {
      error("bad_frame", e.getMessage(), f == null ? null : f.getValue("requestId"),
          f == null ? null : f.getValue("clientRef"));
    }
  }

  private static String text(JsonObject f, String field) throws BadFrame {
    if (!(f.getValue(field) instanceof String s) || s.isEmpty()) {
      throw new BadFrame("\"" + field + "\" must be a non-empty string");
    }
    return s;
  }

  private static Object clientRef(JsonObject f) throws BadFrame {
    Object ref = f.getValue("clientRef");
    if (ref != null && !(ref instanceof String) && !(ref instanceof Number)) {
      throw new BadFrame("\"clientRef\" must be a string or a number");
    }
    return ref;
  }

  private void newThread(JsonObject f) throws BadFrame {
    Object ref = clientRef(f);
    JsonObject body = new JsonObject().put("surface", WebRoom.SURFACE);
    if (f.getValue("agent") != null) {
      body.put("agent", text(f, "agent"));
    }
    if (f.getValue("node") != null) {
      body.put("node", text(f, "node")); // cluster mode: the agent node to run it on
    }
    if (f.containsKey("project")) {
      Object project = f.getValue("project");
      if (project != null && !(project instanceof String)) {
        throw new BadFrame("\"project\" must be a project id, or \"\" for a scratch folder");
      }
      body.put("project", project);
    }
    if (f.getValue("branch") != null) {
      body.put("branch", text(f, "branch"));
    }
    if (f.getValue("session") != null) {
      body.put("session", text(f, "session")); // a session begun elsewhere, from a `sessions` list
    }
    if (f.getValue("title") != null) {
      body.put("title", text(f, "title"));
    }
    room.askSlow(Addresses.THREAD_CREATE, body)
        .onSuccess(reply -> send(new JsonObject().put("type", "thread").put("threadId", reply.getString("threadId"))
            .put("agent", reply.getString("agent")).put("clientRef", ref)
            .mergeIn(WebRoom.threadFacts(reply))))
        .onFailure(err -> fail(err, null, ref));
  }

  private void attach(JsonObject f) throws BadFrame {
    String threadId = text(f, "threadId");
    Object ref = clientRef(f);
    Object after = f.getValue("afterSeq");
    if (after != null && !(after instanceof Number n && n.longValue() >= 0)) {
      throw new BadFrame("\"afterSeq\" must be a number, 0 or more");
    }
    long afterSeq = after == null ? 0 : ((Number) after).longValue();
    room.ask(Addresses.THREAD_ATTACH, new JsonObject().put("threadId", threadId)
            .put("surface", WebRoom.SURFACE))
        .onFailure(err -> fail(err, null, ref))
        .onSuccess(thread -> {
          if (closed) {
            return;
          }
          held.put(threadId, new ArrayList<>());
          hub.attach(threadId, this);
          lastSeq.put(threadId, afterSeq);
          replay(threadId, afterSeq, thread.getLong("lastSeq"))
              .compose(v -> afterSeq == 0 ? answeredCards(threadId) : Future.succeededFuture())
              .compose(v -> room.ask(Addresses.PERMISSION_PENDING, new JsonObject().put("threadId", threadId)))
              .compose(pending -> {
                pending.getJsonArray("requests").forEach(c -> send(cardFrame((JsonObject) c)));
                return room.ask(Addresses.THREAD_GET, new JsonObject().put("threadId", threadId));
              })
              .onComplete(done -> {
                List<Held> waiting = held.remove(threadId);
                if (waiting != null) {
                  waiting.forEach(this::deliver);
                }
                if (done.succeeded()) {
                  send(new JsonObject().put("type", "turn").put("threadId", threadId)
                      .put("busy", done.result().getBoolean("busy")).put("attached", true));
                } else {
                  fail(done.cause(), null, ref);
                }
              });
        });
  }

  /** Cards shown in a thread's history: its answered and cancelled requests, with how each ended. */
  static final int HISTORY_CARDS = 500;

  /**
   * A full replay also brings back the thread's ended cards (the ledger's, oldest first), each
   * followed by how it ended: history shows what was asked and who answered, not only what waits.
   */
  private Future<Void> answeredCards(String threadId) {
    return room.ask(Addresses.STORE_LEDGER_LIST, new JsonObject().put("threadId", threadId)
            .put("state", "all").put("limit", HISTORY_CARDS))
        .map(reply -> {
          List<Object> rows = new ArrayList<>(reply.getJsonArray("requests").getList());
          java.util.Collections.reverse(rows); // the ledger lists the newest first
          for (Object o : rows) {
            JsonObject row = o instanceof JsonObject j ? j : new JsonObject((java.util.Map<String, Object>) o);
            if ("pending".equals(row.getString("state")) || row.getLong("endedAt") == null) {
              continue; // the permission room sends those, answerable
            }
            if (row.getJsonObject("outcome", new JsonObject()).getValue("rule") instanceof JsonObject) {
              JsonObject toolCall = row.getJsonObject("toolCall", new JsonObject());
              send(autoFrame(threadId, row.getString("requestId"), toolCall.getString("toolCallId"),
                  toolCall.getString("title"), row.getJsonObject("outcome"), row.getLong("endedAt")));
              continue;
            }
            send(cardFrame(row));
            send(new JsonObject().put("type", "permission_resolved").put("threadId", threadId)
                .put("requestId", row.getString("requestId")).put("outcome", row.getJsonObject("outcome"))
                .put("endedAt", Instant.ofEpochMilli(row.getLong("endedAt")).toString()));
          }
          return (Void) null;
        })
        .recover(err -> {
          log.warn("the answered cards of thread {} could not be read: {}", threadId, err.getMessage());
          return Future.succeededFuture();
        });
  }

  /**
   * Sends the history after {@code afterSeq} up to {@code untilSeq}, a page of {@link #REPLAY_LIMIT}
   * at a time: a client far behind gets every event the transcript still has, not only the last page.
   */
  private Future<Void> replay(String threadId, long afterSeq, long untilSeq) {
    if (afterSeq >= untilSeq || closed) {
      return Future.succeededFuture();
    }
    return room.ask(Addresses.THREAD_HISTORY, new JsonObject().put("threadId", threadId)
            .put("afterSeq", afterSeq).put("limit", REPLAY_LIMIT))
        .compose(history -> {
          long last = afterSeq;
          for (Object o : history.getJsonArray("events")) {
            ThreadEvent e = ThreadEvent.inHistory(threadId, (JsonObject) o);
            last = e.seq();
            sendEvent(e);
          }
          // An empty page: the rest was pruned (the transcript keeps a bounded tail) or is not written yet.
          return last == afterSeq ? Future.succeededFuture() : replay(threadId, last, untilSeq);
        });
  }

  private void prompt(JsonObject f) throws BadFrame {
    String threadId = text(f, "threadId");
    Object images = f.getValue("images");
    if (!(f.getValue("text") instanceof String body) || (body.isBlank() && images == null)) {
      throw new BadFrame("\"text\" must be a non-empty string (it may be empty when \"images\" are sent)");
    }
    Object ref = clientRef(f);
    // The thread room checks the images (kinds, sizes, bytes) and names what is wrong.
    room.ask(Addresses.THREAD_PROMPT, new JsonObject().put("threadId", threadId)
            .put("text", body).put("images", images).put("surface", WebRoom.SURFACE)
            .put("promptedBy", me().personId()))
        .onFailure(err -> fail(err, null, ref));
  }

  private void rename(JsonObject f) throws BadFrame {
    toThread(Addresses.THREAD_RENAME, new JsonObject().put("threadId", text(f, "threadId"))
        .put("title", text(f, "title")), clientRef(f));
  }

  private void archive(JsonObject f) throws BadFrame {
    Object archived = f.getValue("archived", true);
    if (!(archived instanceof Boolean)) {
      throw new BadFrame("\"archived\" must be true or false");
    }
    toThread(Addresses.THREAD_ARCHIVE, new JsonObject().put("threadId", text(f, "threadId")).put("archived", archived),
        clientRef(f));
  }

  private void setConfig(JsonObject f) throws BadFrame {
    toThread(Addresses.THREAD_SET_CONFIG, new JsonObject().put("threadId", text(f, "threadId"))
        .put("configId", text(f, "configId")).put("value", text(f, "value")), clientRef(f));
  }

  private void setMode(JsonObject f) throws BadFrame {
    toThread(Addresses.THREAD_SET_MODE, new JsonObject().put("threadId", text(f, "threadId"))
        .put("modeId", text(f, "modeId")), clientRef(f));
  }

  private void cancel(JsonObject f) throws BadFrame {
    toThread(Addresses.THREAD_CANCEL, new JsonObject().put("threadId", text(f, "threadId")), clientRef(f));
  }

  /**
   * A command for the thread room; only a refusal comes back to the page (the outcome reaches it as
   * events), with the frame's {@code clientRef} so the page knows which of its frames it answers.
   */
  private void toThread(String address, JsonObject body, Object clientRef) {
    room.ask(address, body).onFailure(err -> fail(err, null, clientRef));
  }


  /** The projects a new thread may start in (phone first: the picker lists these). */
  private JsonArray projects() {
    JsonArray out = new JsonArray();
    room.settings().projects().forEach(p -> out.add(new JsonObject().put("id", p.id()).put("name", p.name())
        .put("worktrees", p.worktrees().key).put("agents", new JsonArray(p.agents()))));
    return out;
  }

  /** The sessions an agent keeps for a project's folder: answered with a {@code sessions} frame. */
  private void sessions(JsonObject f) throws BadFrame {
    String agent = text(f, "agent");
    String project = text(f, "project");
    Object ref = clientRef(f);
    JsonObject body = new JsonObject().put("agentId", agent).put("projectId", project);
    if (f.getValue("cursor") != null) {
      body.put("cursor", text(f, "cursor"));
    }
    room.askSlow(Addresses.AGENT_SESSIONS, body)
        .onSuccess(reply -> send(reply.put("type", "sessions").put("agent", agent).put("project", project)
            .put("clientRef", ref)))
        .onFailure(err -> fail(err, null, ref));
  }

  /** A thread's work against its base branch: answered with a {@code changes} frame. */
  private void changes(JsonObject f) throws BadFrame {
    String threadId = text(f, "threadId");
    Object ref = clientRef(f);
    room.askSlow(Addresses.THREAD_CHANGES, new JsonObject().put("threadId", threadId))
        .onSuccess(reply -> send(reply.put("type", "changes").put("clientRef", ref)))
        .onFailure(err -> fail(err, null, ref));
  }

  /** A person's commit, merge or discard: answered with a {@code project_action} frame naming what it did. */
  private void projectAction(JsonObject f, String action, String address) throws BadFrame {
    String threadId = text(f, "threadId");
    Object ref = clientRef(f);
    JsonObject body = new JsonObject().put("threadId", threadId).put("surface", WebRoom.SURFACE);
    if (action.equals("commit")) {
      body.put("message", text(f, "message"));
    }
    if (action.equals("merge") && f.getValue("squash") != null) {
      if (!(f.getValue("squash") instanceof Boolean squash)) {
        throw new BadFrame("\"squash\" must be true or false");
      }
      body.put("squash", squash);
    }
    room.askSlow(address, body)
        .onSuccess(reply -> send(new JsonObject().put("type", "project_action").put("threadId", threadId)
            .put("action", action).put("result", reply).put("clientRef", ref)))
        .onFailure(err -> fail(err, null, ref));
  }

  private void answer(JsonObject f) throws BadFrame {
    String requestId = text(f, "requestId");
    String optionId = text(f, "optionId");
    if (f.getValue("grant") != null && !(f.getValue("grant") instanceof JsonObject)) {
      throw new BadFrame("\"grant\" must be {reach, life, command?}");
    }
    if (f.getValue("content") != null && !(f.getValue("content") instanceof JsonObject)) {
      throw new BadFrame("\"content\" must be an object: a question's form, field by field");
    }
    // With a grant, an "always" stays the gateway's (a rule it can revoke); the room checks the grant,
    // and a question's content against its form.
    room.ask(Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", requestId)
            .put("optionId", optionId).put("surface", WebRoom.SURFACE).put("grant", f.getValue("grant"))
            .put("content", f.getValue("content")).put("by", me().toJson()))
        .onFailure(err -> fail(err, requestId, null));
  }

  /** Every rule and grant, with its use, for the Rules view. */
  private void rules(JsonObject f) throws BadFrame {
    Object ref = clientRef(f);
    room.ask(Addresses.STORE_RULES_LIST, new JsonObject())
        .onSuccess(reply -> {
          JsonArray rules = new JsonArray();
          for (Object o : reply.getJsonArray("rules")) {
            JsonObject r = (JsonObject) o;
            rules.add(r.copy().put("words", io.switchboard.rules.Rule.fromJson(r).toJson().getString("words")));
          }
          send(new JsonObject().put("type", "rules").put("rules", rules).put("clientRef", ref));
        })
        .onFailure(err -> fail(err, null, ref));
  }

  /** "Log out of this agent": the agent logs out of its account, where it offers to (ACP logout). */
  private void logout(JsonObject f) throws BadFrame {
    String agentId = text(f, "agentId");
    Object ref = clientRef(f);
    room.askSlow(Addresses.AGENT_LOGOUT, new JsonObject().put("agentId", agentId)) // it starts the agent
        .onSuccess(reply -> send(reply.copy().put("type", "agent_logout").put("agentId", agentId).put("clientRef", ref)))
        .onFailure(err -> fail(err, null, ref));
  }

  /** What agents reported they cost, per day and agent (the last {@code days}, 30 unless asked). */
  private void usage(JsonObject f) throws BadFrame {
    Object ref = clientRef(f);
    Object days = f.getValue("days");
    if (days != null && !(days instanceof Number n && n.intValue() >= 1 && n.intValue() <= 366)) {
      throw new BadFrame("\"days\" must be a whole number of 1..366");
    }
    room.ask(Addresses.STORE_USAGE_DAYS, new JsonObject().put("days", days))
        .onSuccess(reply -> send(new JsonObject().put("type", "usage").put("days", reply.getJsonArray("days"))
            .put("clientRef", ref)))
        .onFailure(err -> fail(err, null, ref));
  }

  private void revokeRule(JsonObject f) throws BadFrame {
    String ruleId = text(f, "ruleId");
    Object ref = clientRef(f);
    room.ask(Addresses.PERMISSION_RULES_REVOKE, new JsonObject().put("ruleId", ruleId).put("by", "web"))
        .onSuccess(rule -> send(new JsonObject().put("type", "rule_revoked").put("rule", rule).put("clientRef", ref)))
        .onFailure(err -> fail(err, null, ref));
  }

  /** A /link code from a chat: the chat account it names answers as this page's person from now on. */
  private void linkChat(JsonObject f) throws BadFrame {
    String code = text(f, "code");
    if (code.length() > 20) {
      throw new BadFrame("\"code\" is the 8 letters and digits /link showed in the chat");
    }
    Object ref = clientRef(f);
    io.switchboard.people.Principal me = me();
    room.ask(Addresses.PLUGIN_LINK_REDEEM, new JsonObject().put("code", code).put("personId", me.personId())
            .put("name", me.name()))
        .onSuccess(linked -> send(new JsonObject().put("type", "chat_linked").put("plugin", linked.getString("plugin"))
            .put("userId", linked.getString("userId")).put("person", me.who()).put("clientRef", ref)))
        .onFailure(err -> fail(err, null, ref));
  }

  /** This device wants pushes: its browser's subscription, and whether a lock screen may show the tool call. */
  private void pushSubscribe(JsonObject f) throws BadFrame {
    if (room.pushKey() == null) {
      throw new BadFrame("this gateway sends no pushes (a cluster's edge node does not yet)");
    }
    if (!(f.getValue("subscription") instanceof JsonObject json)) {
      throw new BadFrame("\"subscription\" must be the browser's PushSubscription as JSON");
    }
    if (f.getValue("details") != null && !(f.getValue("details") instanceof Boolean)) {
      throw new BadFrame("\"details\" must be true or false");
    }
    io.switchboard.push.PushSubscription sub;
    try {
      sub = io.switchboard.push.PushSubscription.parse(json);
    } catch (IllegalArgumentException e) {
      throw new BadFrame(e.getMessage());
    }
    Object ref = clientRef(f);
    room.ask(Addresses.STORE_PUSH_SUBSCRIBE, new JsonObject().put("endpoint", sub.endpoint()).put("p256dh", sub.p256dh())
            .put("auth", sub.auth()).put("details", Boolean.TRUE.equals(f.getValue("details"))))
        .onSuccess(r -> send(new JsonObject().put("type", "push_subscribed").put("endpoint", sub.endpoint())
            .put("clientRef", ref)))
        .onFailure(err -> fail(err, null, ref));
  }

  private void pushUnsubscribe(JsonObject f) throws BadFrame {
    String endpoint = text(f, "endpoint");
    Object ref = clientRef(f);
    room.ask(Addresses.STORE_PUSH_UNSUBSCRIBE, new JsonObject().put("endpoint", endpoint))
        .onSuccess(r -> send(new JsonObject().put("type", "push_unsubscribed").put("endpoint", endpoint)
            .put("clientRef", ref)))
        .onFailure(err -> fail(err, null, ref));
  }

  // ---- what the room sends this socket ----

  /** A waiting card was reminded of or escalated: the page highlights it again. */
  void attention(JsonObject fact) {
    deliver(new Frame(fact.getString("threadId"), "attention " + fact.getString("requestId") + " "
        + fact.getString("step"), new JsonObject().put("type", "permission_attention")
        .put("threadId", fact.getString("threadId")).put("requestId", fact.getString("requestId"))
        .put("step", fact.getString("step")).put("at", Instant.ofEpochMilli(fact.getLong("at")).toString())
        .put("waitedMs", fact.getLong("waitedMs"))));
  }

  /** A live event of an attached thread; {@code frame} is its frame, encoded once for all the thread's sockets. */
  void event(ThreadEvent e, java.util.function.Supplier<String> frame) {
    String threadId = e.threadId();
    List<Held> waiting = held.get(threadId);
    long seq = e.seq();
    long last = lastSeq.getOrDefault(threadId, 0L);
    if (waiting != null) {
      waiting.add(new LiveEvent(e));
    } else if (seq > last + 1 && lastSeq.containsKey(threadId)) {
      // Events numbered in between never came (in a cluster, a connection between nodes was lost):
      // they are in the transcript, which the thread writes before it publishes. Fetched first, in order.
      log.info("thread {}: live events {}..{} did not arrive; replaying them from the transcript", threadId,
          last + 1, seq - 1);
      List<Held> later = new ArrayList<>();
      later.add(new LiveEvent(e));
      held.put(threadId, later);
      replay(threadId, last, seq - 1).onComplete(done -> {
        List<Held> arrived = held.remove(threadId);
        if (arrived != null) {
          arrived.forEach(this::deliver);
        }
      });
    } else {
      sendEvent(e, frame);
    }
  }

  /** The frame of a thread's event, as every socket gets it. */
  static JsonObject eventFrame(ThreadEvent e) {
    return new JsonObject().put("type", "event").put("threadId", e.threadId()).put("seq", e.seq()).put("at", e.at())
        .put("event", e.event());
  }

  void card(JsonObject card) {
    deliver(new Frame(card.getString("threadId"), "card " + card.getString("requestId"), cardFrame(card)));
  }

  void resolved(JsonObject fact) {
    JsonObject outcome = fact.getJsonObject("outcome");
    deliver(new Frame(fact.getString("threadId"), "resolved " + fact.getString("requestId"),
        outcome.getValue("rule") instanceof JsonObject ? autoFrame(fact.getString("threadId"),
            fact.getString("requestId"), fact.getString("toolCallId"), fact.getString("title"), outcome,
            fact.getLong("endedAt"))
            : new JsonObject().put("type", "permission_resolved").put("threadId", fact.getString("threadId"))
            .put("requestId", fact.getString("requestId")).put("outcome", outcome)
            .put("endedAt", Instant.ofEpochMilli(fact.getLong("endedAt")).toString())));
  }

  /** A request a rule answered: never a card, one line saying which rule (and the way to take a grant back). */
  static JsonObject autoFrame(String threadId, String requestId, String toolCallId, String title, JsonObject outcome,
                               long endedAt) {
    return new JsonObject().put("type", "permission_auto").put("threadId", threadId).put("requestId", requestId)
        .put("toolCallId", toolCallId).put("title", title).put("outcome", outcome).put("rule", outcome.getJsonObject("rule"))
        .put("endedAt", Instant.ofEpochMilli(endedAt).toString());
  }

  /** Sends now, or holds while the thread's history is being replayed. */
  private void deliver(Held item) {
    List<Held> waiting = held.get(item.threadId());
    if (waiting != null) {
      waiting.add(item);
      return;
    }
    if (item instanceof LiveEvent live) {
      sendEvent(live.event());
    } else if (item instanceof Frame f) {
      sendText(hub.encodeOnce(f.key(), f::body));
    }
  }

  private void sendEvent(ThreadEvent e) {
    sendEvent(e, () -> hub.encodeOnce("event " + e.threadId() + " " + e.seq(), () -> eventFrame(e)));
  }

  private void sendEvent(ThreadEvent e, java.util.function.Supplier<String> frame) {
    String threadId = e.threadId();
    if (e.seq() <= lastSeq.getOrDefault(threadId, 0L)) {
      return; // already sent (replay and live overlap)
    }
    lastSeq.put(threadId, e.seq());
    sendText(frame.get());
    String kind = e.kind();
    if ("turn_started".equals(kind) || "turn_ended".equals(kind) || "agent_exited".equals(kind)) {
      send(new JsonObject().put("type", "turn").put("threadId", threadId).put("busy", "turn_started".equals(kind)));
    }
  }

  private static JsonObject cardFrame(JsonObject card) {
    return Card.of(card).toWebFrame().mergeIn(WebRoom.nodeOf(card));
  }

  private void fail(Throwable err, Object requestId, Object clientRef) {
    ErrorCode code = WebRoom.code(err);
    // Vert.x's own timeout and no-handler texts mean nothing to a person; the room's reason does.
    boolean bare = code == ErrorCode.UNAVAILABLE && ErrorCode.of(err) != ErrorCode.UNAVAILABLE;
    error(code.wireName, bare ? WebRoom.UNAVAILABLE_TEXT : err.getMessage(), requestId, clientRef);
  }

  private void error(String code, String message, Object requestId, Object clientRef) {
    JsonObject frame = new JsonObject().put("type", "error").put("code", code).put("message", message);
    if (requestId != null) {
      frame.put("requestId", requestId);
    }
    if (clientRef != null) {
      frame.put("clientRef", clientRef);
    }
    send(frame);
  }

  // ---- the bounded send queue ----

  /** A frame about no particular attached thread (a new thread, a pending count), sent now. */
  void notice(String frame) {
    sendText(frame);
  }

  private void send(JsonObject frame) {
    if (!closed) {
      sendText(frame.encode());
    }
  }

  private void sendText(String text) {
    if (closed) {
      return;
    }
    // A frame counts as waiting from now until the connection has written it to the network.
    queuedBytes += text.length();
    hub.queued(text.length()); // may close this socket, if it is the one furthest behind
    if (closed) {
      return;
    }
    if (queue.isEmpty() && !ws.writeQueueFull()) {
      write(text);
      return;
    }
    queue.add(text);
    if (queuedBytes > hub.socketQueueBytes()) {
      closeSlow();
    }
  }

  private void write(String text) {
    int size = text.length();
    // Counted until written or failed, also after this socket closed: the connection holds the frame till then.
    ws.writeTextMessage(text).onComplete(x -> {
      queuedBytes -= size;
      hub.queued(-size);
    });
  }

  /** Frames queued here or held by the connection, not yet written to the network (chars). */
  long queuedBytes() {
    return queuedBytes;
  }

  /** Closes a socket whose reader fell too far behind; its frames are in the transcript for a resume. */
  void closeSlow() {
    log.warn("closing a chat socket that stopped reading ({} bytes waiting)", queuedBytes);
    close();
    ws.close((short) 1008, "this browser stopped reading: reconnect and resume with afterSeq");
  }

  private void drain() {
    while (!queue.isEmpty() && !ws.writeQueueFull()) {
      write(queue.poll());
    }
  }

  private void close() {
    if (closed) {
      return;
    }
    closed = true;
    vertx.cancelTimer(pingTimer);
    hub.closed(this);
    long dropped = queue.stream().mapToLong(String::length).sum();
    queue.clear();
    queuedBytes -= dropped;
    hub.queued(-dropped);
    for (String threadId : new ArrayList<>(lastSeq.keySet())) {
      hub.detach(threadId, this);
    }
    for (String threadId : new ArrayList<>(held.keySet())) {
      hub.detach(threadId, this);
    }
  }

}
