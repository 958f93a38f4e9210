package io.switchboard.plugin;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.config.PluginSpec;
import io.switchboard.jsonrpc.JsonRpcError;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.switchboard.permission.ChatApproval;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;

/**
 * A plugin's outbox: writes durable outputs to it, sends what waits there in order to the current
 * generation, marks outputs delivered on the plugin's acknowledgement (or read receipt), and takes
 * the taps on the cards it sent to the permission room, which judges them.
 */
final class OutboxDelivery {
  private static final Logger log = PluginSupervisor.log;
  private static final int DELIVERY_BATCH = 100;

  /**
   * The read receipt for plugins without acknowledgements: {@code terminal/release} is a standard ACP
   * client request, which an IM plugin (it runs no terminals) answers {@code {}} through its ACP
   * library, silently; an extension method would be logged as unhandled by VibeAround's SDK. Any
   * answer, an error included, proves everything written before it was read.
   */
  static Dialect.Out readReceipt() {
    return new Dialect.Out("terminal/release",
        new JsonObject().put("sessionId", "switchboard").put("terminalId", "switchboard-read-receipt"));
  }

  /** One output as the outbox holds it; {@code node}: (cluster mode) the agent node of a card's request. */
  private record Output(String outputId, String chatId, String kind, String node, JsonObject body) {
    static Output of(JsonObject row) {
      return new Output(row.getString("outputId"), row.getString("chatId"), row.getString("kind"),
          row.getString("node"), row.getJsonObject("body"));
    }

    /** A card asked again of the chat (its request still waits). */
    static Output card(String outputId, Route r, JsonObject card) {
      return new Output(outputId, r.chatId, "card", null, card);
    }
  }

  private final PluginSupervisor plugin;
  private final PluginRoom room;
  private final PluginSpec spec;
  private final Dialect dialect;
  private final String tag;
  private boolean delivering;
  private boolean deliverAgain;
  /** Output ids an earlier generation was sent (bounded): sending one again is a redelivery. */
  private final Set<String> sentBefore = io.switchboard.common.Lru.set(10_000);
  private long redeliveries;
  /** Cluster mode: agent node -> the chats told it left (with cards of it open), until it is back. */
  private final Map<String, Set<String>> staleChats = new HashMap<>();

  OutboxDelivery(PluginSupervisor plugin) {
    this.plugin = plugin;
    this.room = plugin.room;
    this.spec = plugin.spec;
    this.dialect = plugin.dialect;
    this.tag = plugin.tag;
  }

  long redeliveries() {
    return redeliveries;
  }

  // ---- writing to the outbox ----

  /** Writes an output for a chat to the outbox; the future is the store's answer (its {@code outputId}). */
  private Future<JsonObject> enqueue(Route r, String kind, JsonObject body) {
    return room.ask(Addresses.STORE_OUTBOX_ENQUEUE, new JsonObject().put("pluginId", spec.id()).put("chatId", r.chatId)
        .put("kind", kind).put("body", body));
  }

  /** A durable output to a chat; completes once the plugin has it (at once while no process runs). */
  Future<Void> written(Route r, String kind, JsonObject body) {
    return enqueue(r, kind, body).compose(m -> awaitAck(m.getString("outputId")));
  }

  /** A durable system text to a chat; completes once the plugin has it. */
  Future<Void> say(Route r, String text) {
    return written(r, "system", new JsonObject().put("text", text));
  }

  /** A durable text to a chat, nobody waiting on it. */
  void enqueueText(Route r, String kind, String text) {
    enqueue(r, kind, new JsonObject().put("text", text))
        .onFailure(err -> log.error("[{}] a {} text for chat {} could not be written to the outbox: {}", tag, kind,
            r.chatId, err.getMessage()));
  }

  private Future<Void> awaitAck(String outputId) {
    Generation g = plugin.current();
    if (g == null) {
      return Future.succeededFuture(); // it goes out after the respawn; this prompt's answer cannot
    }
    return g.ackWaiters.computeIfAbsent(outputId, id -> Promise.promise()).future();
  }

  // ---- delivering the outbox ----

  /** Sends what waits in the outbox, in order, to the current generation. */
  void deliver() {
    Generation g = plugin.current();
    if (g == null || !g.rendering) {
      return;
    }
    if (delivering) {
      deliverAgain = true; // outputs added while the last read was out: read again after it
      return;
    }
    delivering = true;
    deliverAgain = false;
    room.ask(Addresses.STORE_OUTBOX_PENDING, new JsonObject().put("pluginId", spec.id())
            .put("limit", DELIVERY_BATCH))
        .onComplete(reply -> {
          delivering = false;
          if (deliverAgain) {
            plugin.context.runOnContext(v -> deliver());
          }
          if (reply.failed() && plugin.current() == g && !deliverAgain) {
            // Nothing else may come to wake the delivery (in a cluster, a node's read timed out).
            log.warn("[{}] the outbox could not be read ({}); trying again in 2 s", tag, reply.cause().getMessage());
            plugin.context.owner().setTimer(2_000, t -> deliver());
          }
          if (reply.failed() || plugin.current() != g) {
            return;
          }
          JsonArray outputs = reply.result().getJsonArray("outputs");
          List<String> written = new ArrayList<>();
          List<Future<Void>> writes = new ArrayList<>();
          for (Object o : outputs) {
            Output out = Output.of((JsonObject) o);
            if (g.sent.add(out.outputId())) {
              if (!sentBefore.add(out.outputId())) {
                redeliveries++;
              }
              written.add(out.outputId());
              writes.add(deliverOne(g, out));
            }
          }
          if (!dialect.acknowledges() && !written.isEmpty()) {
            // This dialect has no acknowledgement: the answer to a request written after them proves the
            // plugin read them (it reads its stdin in order). The request is a read receipt the SDK
            // answers without side effects or log lines (docs/protocol-plugins.md). Only an answer
            // counts: a failed write or a plugin that dies first leaves them for its next process.
            Future.all(writes).compose(x -> g.ask(readReceipt())
                    .recover(err -> err instanceof JsonRpcError.Answered ? Future.succeededFuture() // read, all the same
                        : Future.failedFuture(err)))
                .onSuccess(x -> acknowledged(g, new JsonArray(written)))
                .onFailure(err -> log.warn("[{}] {} outputs not confirmed ({}); they go to its next process", tag,
                    written.size(), err.getMessage()));
          }
        });
  }

  /** Writes one output; the future is the write's (a card's answer comes later, as a tap). */
  private Future<Void> deliverOne(Generation g, Output out) {
    String id = out.outputId();
    Route r = plugin.route(out.chatId());
    JsonObject body = out.body();
    switch (out.kind()) {
      case "card" -> {
        // A chat not known to be a direct message (a group, or one not heard from since a restart)
        // gets no card from a plugin that cannot say who taps, unless the plugin opted in.
        if (!dialect.acknowledges() && !"dm".equals(r.scope) && !spec.cardsInGroups()) {
          return g.send(dialect.text(r, id, "system", "A permission request is waiting: " + title(body)
              + ". This plugin cannot tell who taps in a group, so answer it in the web chat."));
        }
        Dialect.Out card = dialect.card(r, id, withDeadline(io.switchboard.permission.Question.forChat(body)));
        String typed = io.switchboard.permission.Question.typedField(body);
        if (typed != null) {
          r.typedAnswer = new Route.TypedAnswer(body.getString("requestId"), typed); // the chat's next message answers it
        }
        r.openCards.put(id, new Route.OpenCard(body.getString("requestId"), out.node()));
        g.ask(card).onSuccess(response -> tapped(g, r, id, body, JsonRpcPeer.object(response)));
        return Future.succeededFuture();
      }
      case "card_end" -> {
        // Ended: its node's departure no longer concerns the chat (the card itself stays open until
        // the plugin answers it, for the SDK's own rejections).
        r.openCards.replaceAll((outputId, c) -> c.requestId() != null && c.requestId().equals(body.getString(
            "requestId")) ? new Route.OpenCard(c.requestId(), null) : c);
        if (r.typedAnswer != null && r.typedAnswer.requestId().equals(body.getString("requestId"))) {
          r.typedAnswer = null; // ended: the chat's next message is a prompt again
        }
        Dialect.Out end = dialect.cardEnd(r, id, body);
        return end == null ? Future.succeededFuture() : g.send(end); // null: the card shows it already
      }
      case "final" -> {
        Integer streamedTo = body.getInteger("streamedTo");
        if (!dialect.acknowledges() && streamedTo != null && streamedTo == g.number) {
          return Future.succeededFuture(); // this generation got the whole turn live; the sync barrier acknowledges it
        }
        Dialect.Out text = dialect.text(r, id, "final", body.getString("text"));
        // A plugin that showed this turn live may skip the whole reply; one that missed it shows it.
        text.params().put("streamed", streamedTo != null && streamedTo == g.number);
        return g.send(text);
      }
      default -> {
        return g.send(dialect.text(r, id, out.kind(), body.getString("text")));
      }
    }
  }

  /**
   * A card with a deadline says so in its title, the one line every chat shows (a chat's card is
   * a message: it cannot count down; its reminder says how long is left).
   */
  private static JsonObject withDeadline(JsonObject card) {
    JsonObject deadline = card.getJsonObject("deadline");
    if (deadline == null || deadline.getLong("at") == null) {
      return card;
    }
    JsonObject copy = card.copy();
    JsonObject toolCall = copy.getJsonObject("toolCall", new JsonObject());
    toolCall.put("title", toolCall.getString("title", "A tool call") + " \u2014 "
        + io.switchboard.permission.Waiting.expiry(deadline.getLong("at"), System.currentTimeMillis(),
            java.time.ZoneId.systemDefault()) + ", unless answered");
    return copy.put("toolCall", toolCall);
  }

  private static String title(JsonObject card) {
    return card.getJsonObject("toolCall", new JsonObject()).getString("title", "a tool call");
  }

  /** These outputs reached the plugin ({@code _switchboard/ack}, a read receipt, a tap): no longer waited on. */
  void acknowledged(Generation g, JsonArray outputIds) {
    JsonArray mine = new JsonArray();
    for (Object id : outputIds) {
      if (id instanceof String s) {
        mine.add(s);
        Promise<Void> waiter = g.ackWaiters.remove(s);
        if (waiter != null) {
          waiter.tryComplete();
        }
      }
    }
    if (!mine.isEmpty()) {
      room.ask(Addresses.STORE_OUTBOX_ACK, new JsonObject().put("pluginId", spec.id()).put("outputIds", mine))
          .onComplete(x -> deliver());
    }
  }

  /**
   * A generation died: nobody waits on its acknowledgements any more (what it did not acknowledge
   * stays in the outbox and goes to the next process; a route waiting to answer its prompt moves on),
   * and the cards it showed are due again, for the next process.
   */
  void died(Generation g) {
    List<Promise<Void>> waiting = List.copyOf(g.ackWaiters.values());
    g.ackWaiters.clear();
    waiting.forEach(Promise::tryComplete);
    if (plugin.current() == g) {
      plugin.routes().forEach(r -> {
        r.openCards.clear(); // they go to the next process, which has not shown them yet
        r.autoRejectable.clear();
      });
    }
    // The cards it showed died with it: the next process gets those still pending again.
    room.ask(Addresses.STORE_OUTBOX_REOPEN, new JsonObject().put("pluginId", spec.id()))
        .onSuccess(m -> log.info("[{}] {} cards of pending requests are due again", tag, m.getInteger("reopened")))
        .onFailure(err -> log.error("[{}] could not reopen its cards: {}", tag, err.getMessage()));
  }

  // ---- taps ----

  /**
   * VibeAround's SDK answers the cards it shows in a chat with {@code reject_once} itself when the
   * chat's prompt ends or its next one starts: from now on, a rejection of a card open now is the
   * SDK's, not a person's (see {@link #tapped}).
   */
  void expectAutoRejects(Route r) {
    if (!dialect.acknowledges()) {
      r.autoRejectable.addAll(r.openCards.keySet());
    }
  }

  /** A card's response: a tap (checked against the approvers), or the plugin giving up on it. */
  private void tapped(Generation g, Route r, String outputId, JsonObject card, JsonObject response) {
    acknowledged(g, new JsonArray().add(outputId));
    r.openCards.remove(outputId);
    boolean maybeAuto = r.autoRejectable.remove(outputId);
    JsonObject outcome = Dialect.object(response, "outcome");
    String requestId = card.getString("requestId");
    if (!"selected".equals(outcome.getValue("outcome")) || !(outcome.getValue("optionId") instanceof String)) {
      log.info("[{}] the card of {} in chat {} was dismissed by the plugin", tag, requestId, r.chatId);
      return;
    }
    String kind = optionKind(card, outcome.getString("optionId"));
    if (maybeAuto && (kind.startsWith("reject") || kind.equals("decline") || kind.equals("cancel"))) {
      // The SDK's own end-of-prompt rejection: nobody chose it. Nothing is recorded; a request still
      // waiting is shown again, for a person to answer.
      log.info("[{}] the SDK rejected the card of {} in chat {} at its prompt's end; not an answer", tag, requestId,
          r.chatId);
      // After the chat's command in flight (a /new that came with it moves the chat out of the thread).
      r.commands.transform(x -> stillPending(card)).onSuccess(pending -> {
        // Only to a chat still in the card's thread (after /new it no longer answers there).
        if (pending && plugin.current() == g && card.getString("threadId", "").equals(r.threadId)) {
          deliverOne(g, Output.card(outputId, r, card));
        }
      });
      return;
    }
    String tapper = dialect.tapper(response);
    if (tapper == null && dialect.acknowledges()) {
      tapper = "unknown";
    }
    // A dialect that does not say who tapped, in a chat not known to be a direct message: one of
    // many people. An anonymous tap cannot be told from the SDK's own rejection either, so a
    // rejection of a card that was open at a prompt's end is never counted (above); an approval is.
    boolean anonymous = tapper == null && !"dm".equals(r.scope);
    if (tapper == null && !anonymous) {
      tapper = r.lastSender; // a direct message: the person the chat is with (null: its thread's starter)
    }
    // The permission room judges the tap: the person who linked the account (none: refused), then this
    // plugin's approvers and the card's own thread.
    JsonObject answer = new JsonObject().put("requestId", requestId).put("optionId", outcome.getString("optionId"))
        .put("surface", r.surface()).put("user", tapper)
        .put("chat", new ChatApproval(spec.approvers(), spec.cardsInGroups(), anonymous, spec.requireLinked()).toJson());
    room.people().principal(spec.id(), anonymous ? null : tapper)
        .compose(by -> room.ask(Addresses.PERMISSION_ANSWER, by == null ? answer : answer.put("by", by.toJson())))
        .onFailure(err -> {
      ErrorCode code = ErrorCode.of(err);
      if (code == ErrorCode.ALREADY_ANSWERED) {
        alreadyEnded(r, card, outcome, requestId, err.getMessage());
      } else if (code == ErrorCode.NOT_APPROVER) {
        refused(g, r, outputId, card, err.getMessage());
      } else {
        enqueueText(r, "system", "That answer was not taken: " + err.getMessage());
      }
    });
  }

  /**
   * A tap the permission room refused (not an approver). The chat is told who may answer, once per
   * request, and the card is asked again for an approver — at most {@link #MAX_REASKS} times a
   * request in a chat, and no sooner than {@link #REASK_GAP_MS} after the chat's last re-ask: a
   * person tapping again and again, or a plugin that answers every card by itself, cannot make the
   * gateway send cards without end (each is a new message on a real platform).
   */
  private void refused(Generation g, Route r, String outputId, JsonObject card, String whoMay) {
    String requestId = card.getString("requestId");
    int refusals = r.refusedTaps.merge(requestId, 1, Integer::sum);
    log.warn("[{}] a tap on request {} in chat {} was refused ({} so far): {}", tag, requestId, r.chatId, refusals,
        whoMay);
    if (refusals == 1) {
      enqueueText(r, "system", whoMay);
    }
    if (refusals > MAX_REASKS) {
      if (refusals == MAX_REASKS + 1) {
        enqueueText(r, "system", "That request is not asked again in this chat after " + MAX_REASKS
            + " refused taps; it still waits: an approver can answer it in the web chat.");
      }
      return;
    }
    long now = System.currentTimeMillis();
    long at = Math.max(now, r.lastReaskAt + REASK_GAP_MS);
    r.lastReaskAt = at;
    plugin.context.owner().setTimer(Math.max(1, at - now), t -> stillPending(card).onSuccess(pending -> {
      // Only while it waits, to the same process, in a chat still in the card's thread.
      if (pending && plugin.current() == g && card.getString("threadId", "").equals(r.threadId)) {
        deliverOne(g, Output.card(outputId, r, card));
      }
    }));
  }

  /** How many times a refused tap's card is asked again, a request in a chat. */
  static final int MAX_REASKS = 3;
  /** The least time between two re-asks in one chat. */
  static final long REASK_GAP_MS = 1_000;

  /** The kind of the card's option {@code optionId} ("allow_once", "reject_once", …), or "". */
  private static String optionKind(JsonObject card, String optionId) {
    return card.getJsonArray("options", new JsonArray()).stream()
        .filter(o -> o instanceof JsonObject opt && optionId.equals(opt.getString("optionId")))
        .map(o -> ((JsonObject) o).getString("kind", "")).findFirst().orElse("");
  }

  /** Whether the card's request still waits for an answer (its thread's pending list has it). */
  private Future<Boolean> stillPending(JsonObject card) {
    String requestId = card.getString("requestId");
    return room.ask(Addresses.PERMISSION_PENDING, new JsonObject().put("threadId", card.getString("threadId")))
        .map(m -> m.getJsonArray("requests").stream()
            .anyMatch(o -> o instanceof JsonObject c && requestId.equals(c.getString("requestId"))))
        .otherwise(true); // unsure: treat it as waiting (the permission room refuses a late answer anyway)
  }

  /**
   * A tap on a card whose request has ended: nothing is recorded after the end and the card is not
   * asked again. The chat is told, except for a rejection in a dialect that cannot tell a person's
   * tap from the SDK's own (VibeAround's SDK rejects every card still open when a turn ends).
   */
  private void alreadyEnded(Route r, JsonObject card, JsonObject outcome, String requestId, String why) {
    if (!dialect.acknowledges() && optionKind(card, outcome.getString("optionId")).startsWith("reject")) {
      log.debug("[{}] a rejection of ended request {} in chat {} ignored", tag, requestId, r.chatId);
      return;
    }
    int expired = why == null ? -1 : why.indexOf("already expired");
    enqueueText(r, "system", expired >= 0
        ? "That request " + why.substring(expired) + "; your tap changed nothing."
        : "That request was already answered or ended; your tap changed nothing.");
  }

  // ---- agent nodes (cluster mode) ----

  /**
   * Cluster mode: the agent node whose requests some of this plugin's chats have open cards of left
   * the cluster. Those chats are told at once (a tap on such a card is refused until it is back),
   * as the web chat marks its cards stale.
   */
  void nodeLeft(String node) {
    Set<String> told = staleChats.computeIfAbsent(node, n -> new HashSet<>());
    plugin.routes().forEach(r -> {
      if (r.openCards.values().stream().anyMatch(c -> node.equals(c.node())) && told.add(r.chatId)) {
        enqueueText(r, "system", "Agent node " + node + " left the cluster: the permission requests waiting in "
            + "this chat cannot be answered until it is back (a tap now is refused).");
      }
    });
  }

  /** The node is a member again: the chats told it left learn whether their requests still wait. */
  void nodeBack(String node, boolean restarted) {
    Set<String> told = staleChats.remove(node);
    if (told == null) {
      return;
    }
    told.forEach(chatId -> enqueueText(plugin.route(chatId), "system",
        restarted ? "Agent node " + node + " is back, restarted: the requests that waited here were voided."
            : "Agent node " + node + " is back: the requests waiting in this chat can be answered again."));
  }
}
