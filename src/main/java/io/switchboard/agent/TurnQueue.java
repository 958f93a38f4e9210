package io.switchboard.agent;

import io.switchboard.jsonrpc.JsonRpcError;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * One thread's prompts: queued (FIFO, at most {@link #MAX_QUEUED} waiting) and run one turn at a
 * time on a started agent, each turn ended once — by the agent's answer, a failure, or the agent's
 * exit. Queued images are held, in bytes, against the room's budget until their turn ends. Lives
 * on the agent room's event loop.
 */
final class TurnQueue {
  static final int MAX_QUEUED = 16;

  /** The turn in progress. */
  static final class Turn {
    /** The person whose prompt this turn answers (their person id; null: not named). */
    final String promptedBy;
    boolean cancelling;
    long graceTimer = -1;
    /** Tool calls announced in this turn, in order: those unfinished when it ends are marked cancelled. */
    final Set<String> toolCalls = new LinkedHashSet<>();

    Turn(String promptedBy) {
      this.promptedBy = promptedBy;
    }
  }

  /** A prompt waiting for its turn: its text, its images ({@code [{mimeType, data}]}) and their decoded size. */
  private record Prompt(String text, JsonArray images, long imageBytes, String promptedBy) {}

  private final AgentSession session;
  private final Context context;
  private final Backlog backlog;
  private final ArrayDeque<Prompt> queue = new ArrayDeque<>();
  private Turn turn;

  TurnQueue(AgentSession session, Context context, Backlog backlog) {
    this.session = session;
    this.context = context;
    this.backlog = backlog;
  }

  /** Queues a prompt with its images and who sent it; returns how many are ahead of it (0: it runs next). */
  int add(String text, JsonArray images, String promptedBy) {
    if (queue.size() >= MAX_QUEUED) {
      throw new IllegalArgumentException("thread " + session.threadId() + " already has " + MAX_QUEUED
          + " prompts waiting");
    }
    long imageBytes = 0;
    for (Object image : images) {
      imageBytes += ((JsonObject) image).getString("data").length(); // held as base64 text
    }
    if (!backlog.reserveImages(imageBytes)) {
      throw new IllegalArgumentException("the gateway already holds as many images for agents as its memory allows; "
          + "send this one when a turn has ended");
    }
    int ahead = queue.size() + (turn == null ? 0 : 1);
    queue.add(new Prompt(text, images, imageBytes, promptedBy));
    return ahead;
  }

  /** The turn in progress, or null. */
  Turn current() {
    return turn;
  }

  /** Whether a turn is in progress that the person asked to stop. */
  boolean cancelling() {
    return turn != null && turn.cancelling;
  }

  int queued() {
    return queue.size();
  }

  /** The queued prompts are dropped (the session is closing), their images released. */
  void drop() {
    queue.forEach(p -> backlog.releaseImages(p.imageBytes()));
    queue.clear();
  }

  /** Starts the next prompt's turn, if none is running: on the agent, started first if it is not. */
  void pump() {
    if (turn != null || queue.isEmpty() || session.closed()) {
      return;
    }
    Prompt next = queue.poll();
    Turn t = new Turn(next.promptedBy());
    turn = t;
    session.emit(new JsonObject().put("kind", "turn_started"));
    session.ensureStarted()
        .compose(v -> t.cancelling ? Future.succeededFuture(new JsonObject().put("stopReason", "cancelled"))
            : prompt(next, true))
        .onComplete(x -> backlog.releaseImages(next.imageBytes()))
        // Stopped while it waited for a free agent slot: a cancelled turn, not a failure.
        .recover(err -> t.cancelling && err instanceof AgentPool.Withdrawn
            ? Future.succeededFuture(new JsonObject().put("stopReason", "cancelled")) : Future.failedFuture(err))
        .onComplete(done -> end(t, done.succeeded() ? done.result() : null, done.cause()));
  }

  private Future<Object> prompt(Prompt p, boolean mayAuthenticate) {
    AgentProcess current = session.process();
    JsonArray blocks = new JsonArray();
    if (!p.text().isBlank()) {
      blocks.add(new JsonObject().put("type", "text").put("text", p.text()));
    }
    if (!p.images().isEmpty() && !current.takes("image")) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS, "this agent does not take images (its "
          + "promptCapabilities leave image out), so the message was not sent; send it as text"));
    }
    for (Object image : p.images()) {
      blocks.add(((JsonObject) image).copy().put("type", "image"));
    }
    JsonObject params = new JsonObject().put("sessionId", session.acpSessionId()).put("prompt", blocks);
    return current.peer.request("session/prompt", params).recover(err -> mayAuthenticate
        ? session.authenticateAndRetry(err, () -> prompt(p, false)) : Future.failedFuture(err));
  }

  /** Ends turn {@code t} (unless it already ended) with the agent's answer or a failure; the next one starts. */
  void end(Turn t, Object result, Throwable failure) {
    if (turn != t) {
      return; // already ended (the agent exited)
    }
    take();
    if (failure == null) {
      Object reason = JsonRpcPeer.object(result).getValue("stopReason");
      // After a cancel some agents answer end_turn: any result after a cancel ends the turn.
      String stopReason = reason instanceof String s ? s : "end_turn";
      if (t.cancelling || !"end_turn".equals(stopReason)) {
        session.toolCalls().cancelUnfinished(t.toolCalls, session::emit);
      }
      session.emit(new JsonObject().put("kind", "turn_ended").put("stopReason", stopReason));
    } else {
      session.toolCalls().cancelUnfinished(t.toolCalls, session::emit);
      session.emit(session.failure(failure));
      session.emit(new JsonObject().put("kind", "turn_ended").put("stopReason", "error"));
    }
    pump();
    session.checkIdle();
  }

  /** Takes the turn in progress away (its agent exited), its cancel's grace timer stopped; null if none. */
  Turn take() {
    Turn t = turn;
    turn = null;
    if (t != null && t.graceTimer >= 0) {
      context.owner().cancelTimer(t.graceTimer);
    }
    return t;
  }
}
