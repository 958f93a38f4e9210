package io.switchboard.plugin;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A followed thread's events as a plugin's chats get them: the agent's output streamed live to the
 * current generation, system texts into the outbox, and each turn's text gathered (bounded) into
 * the durable final reply that ends the chat's wait for its turn.
 */
final class TurnText {
  static final String REPLY_CUT = "\n\n[… the rest of this reply is too long for the chat; it is in the web chat]";

  private final PluginSupervisor plugin;
  private final ChatInbound inbound;
  private final OutboxDelivery outbox;
  /** The most of a turn's text kept for its durable final reply ({@code Limits#replyChars}). */
  private final int maxReplyChars;
  /** threadId -> the agent text of its current turn, for the durable final reply. */
  private final Map<String, StringBuilder> turnText = new HashMap<>();
  /** threadId -> the generation that was current when its turn started. */
  private final Map<String, Integer> turnGeneration = new HashMap<>();
  /** threadId -> the generation whose chats were told of its session this turn (at its first live output). */
  private final Map<String, Integer> sessionTold = new HashMap<>();

  TurnText(PluginSupervisor plugin, ChatInbound inbound, OutboxDelivery outbox, int maxReplyChars) {
    this.plugin = plugin;
    this.inbound = inbound;
    this.outbox = outbox;
    this.maxReplyChars = maxReplyChars;
  }

  /**
   * Generation {@code g} took over the running prompt of chat {@code r} (the platform sent its message
   * again after the process that had it died): it is shown the turn's text so far, and streams on.
   * When {@code r} is the thread's only chat here, {@code g} then has the whole turn and skips the
   * final reply, as a process that streamed it all does.
   */
  void joined(Generation g, Route r) {
    StringBuilder text = r.threadId == null ? null : turnText.get(r.threadId);
    if (text == null || !g.rendering) {
      return; // no turn of its thread runs yet (it waits for its turn), or nothing can be shown now
    }
    List<Route> attached = plugin.routes().stream().filter(o -> r.threadId.equals(o.threadId)).toList();
    sessionLive(g, r.threadId, attached); // before the text, as for any live output
    if (text.length() > 0) {
      g.stream(r.chatId, plugin.dialect.stream(r, new JsonObject().put("sessionUpdate", "agent_message_chunk")
          .put("content", new JsonObject().put("type", "text").put("text", text.toString()))));
    }
    if (attached.size() == 1) {
      turnGeneration.put(r.threadId, g.number);
    }
  }

  /** The chats of a thread are told its session once per process and turn, before its first live output. */
  private void sessionLive(Generation gen, String threadId, List<Route> attached) {
    if (!Integer.valueOf(gen.number).equals(sessionTold.put(threadId, gen.number))) {
      inbound.sessionLive(gen, threadId, attached);
    }
  }

  /** One event of a followed thread, in order. */
  void threadEvent(io.switchboard.thread.ThreadEvent e) {
    String threadId = e.threadId();
    List<Route> attached = plugin.routes().stream().filter(r -> threadId.equals(r.threadId)).toList();
    if (attached.isEmpty()) {
      return;
    }
    JsonObject event = e.event();
    String kind = e.kind();
    Generation gen = plugin.current();
    switch (kind) {
      case "turn_started" -> {
        turnText.put(threadId, new StringBuilder());
        // The process that gets the whole turn live may skip its durable final reply; none does if
        // no process can show output now (below: or misses a chunk later).
        turnGeneration.put(threadId, gen != null && gen.rendering ? gen.number : -1);
        sessionTold.remove(threadId); // its agent may have started anew since
      }
      case "acp" -> {
        JsonObject update = event.getJsonObject("update");
        if ("agent_message_chunk".equals(update.getString("sessionUpdate"))) {
          // Agent output is read leniently: a content or text of another type adds nothing.
          Object text = Dialect.object(update, "content").getValue("text");
          StringBuilder reply = turnText.computeIfAbsent(threadId, t -> new StringBuilder());
          if (text instanceof String s && reply.length() < maxReplyChars) {
            // Bounded: an agent that talks without end costs the chat's final reply, not the heap.
            reply.append(s, 0, Math.min(s.length(), maxReplyChars - reply.length()));
            if (reply.length() == maxReplyChars) {
              reply.append(REPLY_CUT);
            }
          }
        }
        boolean missed = gen == null || !gen.rendering;
        if (!missed) {
          sessionLive(gen, threadId, attached); // the agent answers: its session exists
          for (Route r : attached) {
            if (r.current != null && r.current.generation != gen.number) {
              // The chat's prompt was taken by a process that died: this process has no message to
              // stream it into (it would show as a stray one). Held in the turn's text, for the
              // platform's redelivery of that prompt (joined) or the final reply.
              missed = true;
            } else {
              gen.stream(r.chatId, plugin.dialect.stream(r, update));
            }
          }
        }
        if (missed) {
          turnGeneration.put(threadId, -1); // a chunk nobody saw live: the final reply goes out whole
        }
      }
      case "system" -> attached.forEach(r -> outbox.enqueueText(r, "system", event.getString("text")));
      case "agent_exited" -> {
        attached.forEach(r -> outbox.enqueueText(r, "system", "The agent exited"
            + (event.getValue("code") == null ? "" : " with code " + event.getValue("code"))
            + ". Your next message starts it again."));
        inbound.agentExited(threadId);
        sessionTold.remove(threadId);
      }
      default -> { }
    }
    if ("turn_ended".equals(kind) || "agent_exited".equals(kind)) {
      StringBuilder text = turnText.remove(threadId);
      Integer streamedTo = turnGeneration.remove(threadId);
      for (Route r : attached) {
        // The turn's final reply is durable: a chat that missed the stream (plugin restarting) gets it whole.
        Future<Void> written = text == null || text.length() == 0 ? Future.succeededFuture()
            : outbox.written(r, "final", new JsonObject().put("text", text.toString()).put("threadId", threadId)
                .put("streamedTo", streamedTo));
        if (r.current != null) {
          r.turnEnds.add(new Route.TurnEnd(e.seq(),
              "agent_exited".equals(kind) ? "end_turn" : event.getString("stopReason", "end_turn")));
        }
        written.onComplete(x -> inbound.turnEnded(r));
      }
    }
  }
}
