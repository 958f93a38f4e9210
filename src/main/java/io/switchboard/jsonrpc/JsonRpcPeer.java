package io.switchboard.jsonrpc;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One side of a JSON-RPC 2.0 conversation over lines: requests both ways, responses,
 * notifications. Request ids are per direction: our requests are numbered from 0 and only
 * responses are matched against them, so a peer that numbers its own requests from 0 too (every
 * ACP agent does) never collides with ours. Not thread-safe: use it on its owner's event loop.
 */
public final class JsonRpcPeer {
  private static final Logger log = LoggerFactory.getLogger(JsonRpcPeer.class);

  /** Answers the peer's requests and hears its notifications. */
  public interface Handler {
    /** Answer a request; fail with {@link JsonRpcError} to send that error. */
    Future<Object> request(String method, Object params);

    /**
     * The same, with {@code withdrawn}: completed if the peer sends {@code $/cancel_request} for this
     * request while it is in flight (its answer is still sent, once, when the handler ends it).
     */
    default Future<Object> request(String method, Object params, Future<Void> withdrawn) {
      return request(method, params);
    }

    void notification(String method, Object params);
  }

  private final String name;
  private final Function<String, Future<Void>> writer;
  private final Map<String, Promise<Object>> pending = new HashMap<>();
  /** The peer's requests we have not answered yet, and the signal that it withdrew one. */
  private final Map<String, Promise<Void>> inbound = new HashMap<>();
  private Handler handler;
  private long nextId;
  private boolean closed;

  /**
   * @param name for log lines, e.g. the agent and thread
   * @param writer writes one line to the peer
   */
  /** Malformed lines are logged at most 20 a minute per peer (a flood of garbage is counted, not copied). */
  private final io.switchboard.logging.LogBudget garbageLog = new io.switchboard.logging.LogBudget(20);

  public JsonRpcPeer(String name, Function<String, Future<Void>> writer) {
    this.name = name;
    this.writer = writer;
  }

  public void handler(Handler handler) {
    this.handler = handler;
  }

  /** Sends a request; the future fails with {@link JsonRpcError} if the peer answers an error. */
  public Future<Object> request(String method, Object params) {
    return request(method, params, null);
  }

  /**
   * The same; when {@code giveUp} completes before the answer, the request is abandoned: the peer is
   * sent {@code $/cancel_request} for it (so it may stop the work), the future fails saying so, and a
   * late answer is ignored.
   */
  public Future<Object> request(String method, Object params, Future<?> giveUp) {
    if (closed) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, name + " is closed"));
    }
    long id = nextId++;
    if (giveUp != null) {
      giveUp.onComplete(x -> {
        Promise<Object> p = pending.remove(Long.toString(id));
        if (p != null) {
          notify("$/cancel_request", new JsonObject().put("requestId", id));
          p.tryFail(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, name + ": gave up waiting for the answer to "
              + method));
        }
      });
    }
    Promise<Object> promise = Promise.promise();
    pending.put(Long.toString(id), promise);
    JsonObject message = new JsonObject().put("jsonrpc", "2.0").put("id", id).put("method", method);
    if (params != null) {
      message.put("params", params);
    }
    writer.apply(message.encode()).onFailure(err -> {
      Promise<Object> p = pending.remove(Long.toString(id));
      if (p != null) {
        p.tryFail(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, name + ": could not send " + method + ": "
            + err.getMessage()));
      }
    });
    return promise.future();
  }

  public Future<Void> notify(String method, Object params) {
    JsonObject message = new JsonObject().put("jsonrpc", "2.0").put("method", method);
    if (params != null) {
      message.put("params", params);
    }
    return writer.apply(message.encode());
  }

  /** A {@link LineChannel} listener that feeds this peer; {@code oversize} hears of each dropped line. */
  public LineChannel.Listener listener(java.util.function.LongConsumer oversize) {
    return new LineChannel.Listener() {
      @Override
      public void line(String line) {
        receive(line);
      }

      @Override
      public void oversize(long bytes) {
        oversize.accept(bytes);
      }

      @Override
      public void closed() {
        // the process's exit is what the owner acts on
      }
    };
  }

  /** How many of our requests still wait for an answer. */
  public int pendingRequests() {
    return pending.size();
  }

  /** The connection ended: every request still waiting fails with {@code why}. */
  public void close(String why) {
    closed = true;
    List<Promise<Object>> waiting = new ArrayList<>(pending.values());
    pending.clear();
    for (Promise<Object> p : waiting) {
      p.tryFail(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, why));
    }
  }

  /** Handles one line from the peer. Malformed input is logged (and answered where it has an id). */
  public void receive(String line) {
    Object value;
    try {
      value = Json.decodeValue(line);
    } catch (DecodeException e) {
      if (garbageLog.take(log, name, "malformed lines")) {
        log.warn("{}: ignored a line that is not JSON ({} chars): {}", name, line.length(), preview(line));
      }
      return;
    }
    if (!(value instanceof JsonObject message)) {
      if (garbageLog.take(log, name, "malformed lines")) {
        log.warn("{}: ignored a line that is not a JSON-RPC object: {}", name, preview(line));
      }
      return;
    }
    Object id = message.getValue("id");
    boolean hasId = id != null && (id instanceof Number || id instanceof String);
    if (message.containsKey("method")) {
      if (!(message.getValue("method") instanceof String method)) {
        invalid(hasId ? id : null, "method must be a string", line);
        return;
      }
      Object params = message.getValue("params");
      if (hasId && closed) {
        // Read after the peer ended (its last lines come after its exit): nobody could take the answer,
        // and acting on it (a permission request) would wait on a dead process.
        log.warn("{}: ignored a {} request that arrived after the connection ended", name, method);
      } else if (hasId) {
        answer(id, method, params);
      } else if (method.equals("$/cancel_request")) {
        withdraw(params);
      } else if (handler != null) {
        handler.notification(method, params);
      }
      return;
    }
    if (hasId && (message.containsKey("result") || message.containsKey("error"))) {
      Promise<Object> p = pending.remove(idKey(id));
      if (p == null) {
        log.warn("{}: ignored a response to a request we did not send (id {})", name, id);
      } else if (message.getValue("error") != null) {
        p.tryFail(JsonRpcError.from(message.getValue("error")));
      } else {
        p.tryComplete(message.getValue("result"));
      }
      return;
    }
    invalid(hasId ? id : null, "neither a request, a notification nor a response", line);
  }

  /** {@code $/cancel_request {requestId}}: the peer withdraws one of its requests still in flight. */
  private void withdraw(Object params) {
    Object id = object(params).getValue("requestId");
    Promise<Void> signal = id instanceof Number || id instanceof String ? inbound.get(idKey(id)) : null;
    if (signal == null) {
      log.debug("{}: $/cancel_request for no request in flight ({})", name, id);
      return;
    }
    signal.tryComplete();
  }

  private void answer(Object id, String method, Object params) {
    Future<Object> result;
    Promise<Void> withdrawn = Promise.promise();
    String key = idKey(id);
    inbound.put(key, withdrawn);
    try {
      result = handler == null ? Future.failedFuture(new JsonRpcError(JsonRpcError.METHOD_NOT_FOUND,
          "no handler for " + method)) : handler.request(method, params, withdrawn.future());
    } catch (RuntimeException e) {
      result = Future.failedFuture(e);
    }
    result.onComplete(done -> {
      inbound.remove(key, withdrawn);
      JsonObject response = new JsonObject().put("jsonrpc", "2.0").put("id", id);
      if (done.succeeded()) {
        response.put("result", done.result());
      } else if (done.cause() instanceof JsonRpcError e) {
        response.put("error", e.toJson());
      } else {
        log.error("{}: {} failed", name, method, done.cause());
        response.put("error", new JsonRpcError(JsonRpcError.INTERNAL_ERROR, String.valueOf(done.cause().getMessage()))
            .toJson());
      }
      writer.apply(response.encode());
    });
  }

  private void invalid(Object id, String problem, String line) {
    if (garbageLog.take(log, name, "malformed lines")) {
      log.warn("{}: invalid JSON-RPC message ({}): {}", name, problem, preview(line));
    }
    if (id != null) {
      writer.apply(new JsonObject().put("jsonrpc", "2.0").put("id", id)
          .put("error", new JsonRpcError(JsonRpcError.INVALID_REQUEST, problem).toJson()).encode());
    }
  }

  private static String idKey(Object id) {
    return id instanceof Number n && n.doubleValue() == n.longValue() ? Long.toString(n.longValue()) : id.toString();
  }

  private static String preview(String line) {
    return line.length() > 200 ? line.substring(0, 200) + "…" : line;
  }

  /** Params as an object, or an empty one: ACP params are objects; anything else is read leniently. */
  public static JsonObject object(Object params) {
    return params instanceof JsonObject o ? o : new JsonObject();
  }

  /** Params as an array, or an empty one. */
  public static JsonArray array(Object value) {
    return value instanceof JsonArray a ? a : new JsonArray();
  }
}
