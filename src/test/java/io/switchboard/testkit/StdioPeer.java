package io.switchboard.testkit;

import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The stdio side of a scripted JSON-RPC peer run as a child process (fake agents, benchmark
 * agents): stdout carries only protocol lines, requests from the gateway are answered on worker
 * threads, and {@link #request} waits for the gateway's answer. The process exits when stdin closes.
 */
public abstract class StdioPeer {
  protected final PrintStream out;
  protected final AtomicInteger nextId = new AtomicInteger();
  private final Map<Integer, CompletableFuture<JsonObject>> waiting = new ConcurrentHashMap<>();
  private final ExecutorService work = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r);
    t.setDaemon(true);
    return t;
  });

  protected StdioPeer() {
    out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    System.setOut(System.err); // nothing but protocol lines may reach stdout
  }

  /** Answers one request from the gateway; the return value is the result. */
  protected abstract Object handle(String method, JsonObject params) throws Exception;

  /** A request from the gateway as it is read, in order, before a worker thread handles it. */
  protected void arrived(String method, JsonObject params) {
  }

  /** A notification from the gateway. */
  protected void notification(String method, JsonObject params) {
  }

  /** A message that answers none of our requests (e.g. an error about a malformed line of ours). */
  protected void unmatched(JsonObject message) {
  }

  /** Reads stdin until it closes, then exits. */
  public final void run() throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      JsonObject m = new JsonObject(line);
      if (m.getValue("method") instanceof String method) {
        JsonObject params = m.getJsonObject("params", new JsonObject());
        if (m.getValue("id") == null) {
          notification(method, params);
        } else {
          arrived(method, params);
          work.submit(() -> {
            try {
              send(new JsonObject().put("jsonrpc", "2.0").put("id", m.getValue("id")).put("result", handle(method, params)));
            } catch (Exception e) {
              e.printStackTrace();
            }
          });
        }
      } else {
        CompletableFuture<JsonObject> f = m.getValue("id") instanceof Number n ? waiting.remove(n.intValue()) : null;
        if (f != null) {
          f.complete(m);
        } else {
          unmatched(m);
        }
      }
    }
    System.exit(0);
  }

  /** Sends a request and waits for the whole response message ({@code result} or {@code error}). */
  protected JsonObject request(String method, JsonObject params) throws Exception {
    return ask(method, params).get(60, TimeUnit.SECONDS);
  }

  /** Sends a request without waiting: the future completes with the whole response message. */
  protected CompletableFuture<JsonObject> ask(String method, JsonObject params) {
    return ask(method, params, r -> { });
  }

  /**
   * The same, with {@code onAnswer} run on the reading thread as the response is read, before any
   * later message is: what a single-threaded peer (Node) does in the response's own tick.
   */
  protected CompletableFuture<JsonObject> ask(String method, JsonObject params,
                                              java.util.function.Consumer<JsonObject> onAnswer) {
    int id = nextId.getAndIncrement();
    CompletableFuture<JsonObject> answer = new CompletableFuture<>();
    answer.thenAccept(onAnswer);
    waiting.put(id, answer);
    send(new JsonObject().put("jsonrpc", "2.0").put("id", id).put("method", method).put("params", params));
    return answer;
  }

  protected void send(JsonObject message) {
    synchronized (out) {
      out.println(message.encode());
      out.flush();
    }
  }

  /** A {@code session/update} notification carrying an agent text chunk. */
  protected static JsonObject chunk(String sessionId, String text) {
    return new JsonObject().put("jsonrpc", "2.0").put("method", "session/update").put("params", new JsonObject()
        .put("sessionId", sessionId).put("update", new JsonObject().put("sessionUpdate", "agent_message_chunk")
            .put("content", new JsonObject().put("type", "text").put("text", text))));
  }
}
