package io.switchboard.agent;

import io.switchboard.common.BlockingLane;
import io.switchboard.bus.Addresses;
import io.switchboard.bus.Bus;
import io.switchboard.bus.ErrorCode;
import io.switchboard.jsonrpc.JsonRpcError;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ACP client methods the agent calls on one session: {@code session/request_permission} and
 * {@code elicitation/create} (asked of the permission room), {@code fs/*} (confined to the workspace, one at a time off the event
 * loop) and {@code terminal/*} (the session's {@link Terminals}). Lives on the agent room's event loop.
 */
final class ClientMethods {
  private static final Logger log = LoggerFactory.getLogger(ClientMethods.class);

  private final AgentSession session;
  private final EventBus bus;
  private final Workspace workspace;
  /** This session's file calls: one at a time, never behind another session's. */
  private final BlockingLane files;

  ClientMethods(AgentSession session, EventBus bus, Workspace workspace, BlockingLane files) {
    this.session = session;
    this.bus = bus;
    this.workspace = workspace;
    this.files = files;
  }

  /** The client methods Switchboard offers an agent (docs: reference/acp-client.md). */
  static final java.util.Set<String> KNOWN = java.util.Set.of("session/request_permission", "elicitation/create",
      "fs/read_text_file",
      "fs/write_text_file", "terminal/create", "terminal/output", "terminal/wait_for_exit", "terminal/kill",
      "terminal/release");

  /** A request of the agent for this session, from process {@code g}. */
  Future<Object> serve(AgentProcess g, String method, Object params) {
    return serve(g, method, params, io.vertx.core.Promise.<Void>promise().future());
  }

  /** The same; {@code withdrawn} completes if the agent withdraws it ({@code $/cancel_request}). */
  Future<Object> serve(AgentProcess g, String method, Object params, Future<Void> withdrawn) {
    JsonObject p = JsonRpcPeer.object(params);
    Terminals mine = session.terminalsOf(g);
    if (method.startsWith("terminal/") && mine == null) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the session is closed"));
    }
    return switch (method) {
      case "session/request_permission" -> {
        session.asked(g);
        yield permission(g, p, withdrawn).onComplete(x -> session.answered());
      }
      case "elicitation/create" -> question(g, p, withdrawn);
      case "fs/read_text_file" -> files.run(() -> (Object) new JsonObject().put("content",
          alive(g).read(p.getValue("path"), integer(p.getValue("line")), integer(p.getValue("limit")))));
      case "fs/write_text_file" -> files.run(() -> {
        alive(g).write(p.getValue("path"), p.getValue("content"));
        return (Object) null;
      });
      case "terminal/create" -> mine.create(p);
      case "terminal/output" -> mine.output(p);
      case "terminal/wait_for_exit" -> mine.waitForExit(p);
      case "terminal/kill" -> mine.kill(p);
      case "terminal/release" -> mine.release(p);
      default -> Future.failedFuture(new JsonRpcError(JsonRpcError.METHOD_NOT_FOUND, "Method not found: " + method));
    };
  }

  /** The workspace, for a process still running: a dead agent's queued file call does nothing. */
  private Workspace alive(AgentProcess g) {
    if (g.exited) {
      throw new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the agent exited");
    }
    return workspace;
  }

  private Future<Object> permission(AgentProcess g, JsonObject p, Future<Void> withdrawn) {
    JsonObject asked = p.getValue("toolCall") instanceof JsonObject tc ? tc : new JsonObject();
    Object id = asked.getValue("toolCallId");
    String toolCallId = id instanceof String s && !s.isEmpty() ? s : "permission-" + System.nanoTime();
    // Some agents announce the tool call first, others only here: show what is known of it.
    JsonObject toolCall = session.toolCalls().asked(toolCallId, asked);
    return ask(g, toolCall, p.getValue("options"), withdrawn)
        .map(outcome -> {
          if ("expired".equals(outcome.getString("outcome"))) {
            expired("permission request", toolCall, outcome);
          }
          // An expiry with a reject option answers it (never an allow); otherwise the agent hears cancelled.
          boolean chosen = "selected".equals(outcome.getString("outcome"))
              || "expired".equals(outcome.getString("outcome")) && outcome.getString("optionId") != null;
          JsonObject answer = chosen
              ? new JsonObject().put("outcome", "selected").put("optionId", outcome.getString("optionId"))
              : new JsonObject().put("outcome", "cancelled");
          return (Object) new JsonObject().put("outcome", answer);
        })
        .recover(err -> {
          if (ErrorCode.of(err) == ErrorCode.BAD_REQUEST) {
            session.emit(AgentSession.error("The agent asked for permission in a form Switchboard cannot show ("
                + err.getMessage() + "); it was answered cancelled."));
          } else {
            log.error("[{}] permission request failed", session.tag(), err);
          }
          return Future.succeededFuture(new JsonObject().put("outcome", new JsonObject().put("outcome", "cancelled")));
        });
  }

  /**
   * An {@code elicitation/create}: a question asked of a person through the permission room, so it
   * ends exactly once as a permission request does. The agent gets {@code {action, content?}}: the
   * person's accept (with the form's content), decline or cancel; every other end is a cancel.
   */
  private Future<Object> question(AgentProcess g, JsonObject p, Future<Void> withdrawn) {
    JsonObject question;
    try {
      question = io.switchboard.permission.Question.fromAgent(p);
    } catch (IllegalArgumentException e) {
      session.emit(AgentSession.error("The agent asked a question Switchboard cannot show (" + e.getMessage()
          + "); it was told its request is invalid."));
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS, "elicitation/create: "
          + e.getMessage()));
    }
    JsonObject toolCall = io.switchboard.permission.Question.toolCall("question-" + System.nanoTime(), question);
    session.asked(g);
    return ask(g, toolCall, io.switchboard.permission.Question.options(question), withdrawn)
        .map(outcome -> {
          if ("expired".equals(outcome.getString("outcome"))) {
            expired("question", toolCall, outcome);
          }
          String action = "selected".equals(outcome.getString("outcome")) ? outcome.getString("kind") : "cancel";
          JsonObject result = new JsonObject().put("action", action);
          if ("accept".equals(action) && outcome.getValue("content") instanceof JsonObject content) {
            result.put("content", content);
          }
          return (Object) result;
        })
        .recover(err -> {
          log.error("[{}] question failed", session.tag(), err);
          return Future.succeededFuture(new JsonObject().put("action", "cancel"));
        })
        .onComplete(x -> session.answered());
  }

  /** Registers a request with the permission room; completes with its outcome once it ended. */
  private Future<JsonObject> ask(AgentProcess g, JsonObject toolCall, Object options, Future<Void> withdrawn) {
    String toolCallId = toolCall.getString("toolCallId");
    // The session is the one this gateway opened, never the id the agent writes: a request under a
    // foreign id must still end with this session's cancel.
    String sessionId = session.acpSessionId() != null ? session.acpSessionId() : "unopened";
    boolean afterCancel = session.cancelling();
    String promptedBy = session.promptedBy(); // read now: the turn that asks, not the one current when the thread answers
    String threadId = session.threadId();
    return bus.<JsonObject>request(Addresses.THREAD_GET, new JsonObject().put("threadId", threadId))
        .compose(thread -> {
          JsonObject request = new JsonObject().put("threadId", threadId).put("sessionId", sessionId)
              .put("agentId", session.spec().id()).put("generation", g.generation).put("toolCall", toolCall)
              .put("options", options)
              .put("eligible", thread.body().getJsonArray("routes", new JsonArray()))
              .put("startedBy", thread.body().getString("startedBy"))
              .put("projectId", thread.body().getString("project")).put("promptedBy", promptedBy)
              .put("cwd", workspace.root().toAbsolutePath().toString()); // what rules resolve paths against
          Future<JsonObject> outcome = bus.<JsonObject>request(Addresses.PERMISSION_REGISTER, request,
              Bus.untilEnded()).map(m -> m.body().getJsonObject("outcome"));
          // The agent took its question back: the request ends "withdrawn", once, and every card says so.
          withdrawn.onSuccess(v -> bus.send(Addresses.PERMISSION_WITHDRAW, new JsonObject().put("threadId", threadId)
              .put("generation", g.generation).put("toolCallId", toolCallId)));
          if (afterCancel) {
            session.publishSessionCancelled(); // asked after the user stopped the turn: it ends cancelled too
          }
          return outcome;
        });
  }

  /** A deadline passed: the thread says so, and {@code cancelTurn} stops the turn it waited in. */
  private void expired(String what, JsonObject toolCall, JsonObject outcome) {
    boolean stop = "cancelTurn".equals(outcome.getString("onExpiry"));
    session.emit(AgentSession.system("The " + what + " \u201c" + toolCall.getString("title", "a tool call")
        + "\u201d expired unanswered (" + outcome.getString("rule") + "): "
        + (stop ? "the turn was stopped." : outcome.getString("optionId") != null ? "the agent was told no."
            : what.equals("question") ? "the agent was told it was cancelled."
            : "the agent was told it was cancelled (it offered no way to say no).")));
    if (stop) {
      session.cancel();
    }
  }

  private static Integer integer(Object value) {
    return value instanceof Number n ? n.intValue() : null;
  }
}
