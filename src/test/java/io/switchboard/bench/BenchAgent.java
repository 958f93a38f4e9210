package io.switchboard.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An ACP agent for benchmarks. {@code stream N}: each prompt streams N text chunks as fast as it
 * can. {@code permission N}: each prompt asks N permissions one after another and reports the
 * round-trip times it measured itself, as a chunk {@code RTT:{p50,p99,mean}} in microseconds.
 */
public final class BenchAgent {
  private final PrintStream out;
  private final String mode;
  private final int n;
  private final AtomicInteger nextId = new AtomicInteger();
  private final Map<Integer, CompletableFuture<JsonObject>> waiting = new ConcurrentHashMap<>();

  private BenchAgent(PrintStream out, String mode, int n) {
    this.out = out;
    this.mode = mode;
    this.n = n;
  }

  public static void main(String[] args) throws Exception {
    PrintStream protocol = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
        StandardCharsets.UTF_8);
    System.setOut(System.err);
    new BenchAgent(protocol, args[0], Integer.parseInt(args[1])).run();
    System.exit(0);
  }

  private void run() throws Exception {
    var work = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r);
      t.setDaemon(true);
      return t;
    });
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      JsonObject m = new JsonObject(line);
      if (m.containsKey("method") && m.getValue("id") != null) {
        work.submit(() -> {
          try {
            Object result = switch (m.getString("method")) {
              case "initialize" -> new JsonObject().put("protocolVersion", 1).put("agentCapabilities", new JsonObject());
              case "session/new" -> new JsonObject().put("sessionId", "bench");
              case "session/prompt" -> prompt();
              default -> new JsonObject();
            };
            send(new JsonObject().put("jsonrpc", "2.0").put("id", m.getValue("id")).put("result", result));
          } catch (Exception e) {
            e.printStackTrace();
          }
        });
      } else if (!m.containsKey("method")) {
        CompletableFuture<JsonObject> f = waiting.remove(m.getInteger("id"));
        if (f != null) {
          f.complete(m);
        }
      }
    }
  }

  private JsonObject prompt() throws Exception {
    if (mode.equals("stream")) {
      for (int i = 0; i < n; i++) {
        send(chunk("chunk " + i + " "));
      }
    } else {
      long[] rtt = new long[n];
      for (int i = 0; i < n; i++) {
        int id = nextId.getAndIncrement();
        CompletableFuture<JsonObject> answer = new CompletableFuture<>();
        waiting.put(id, answer);
        long t0 = System.nanoTime();
        send(new JsonObject().put("jsonrpc", "2.0").put("id", id).put("method", "session/request_permission")
            .put("params", new JsonObject().put("sessionId", "bench")
                .put("toolCall", new JsonObject().put("toolCallId", "call-" + i).put("title", "Edit").put("kind", "edit"))
                .put("options", new JsonArray()
                    .add(new JsonObject().put("optionId", "allow").put("name", "Allow").put("kind", "allow_once"))
                    .add(new JsonObject().put("optionId", "reject").put("name", "Reject").put("kind", "reject_once")))));
        answer.get();
        rtt[i] = System.nanoTime() - t0;
      }
      Arrays.sort(rtt);
      send(chunk("RTT:" + new JsonObject().put("p50", rtt[n / 2] / 1000).put("p99", rtt[(int) (n * 0.99)] / 1000)
          .put("mean", Arrays.stream(rtt).sum() / n / 1000).encode()));
    }
    return new JsonObject().put("stopReason", "end_turn");
  }

  private static JsonObject chunk(String text) {
    return new JsonObject().put("jsonrpc", "2.0").put("method", "session/update").put("params", new JsonObject()
        .put("sessionId", "bench").put("update", new JsonObject().put("sessionUpdate", "agent_message_chunk")
            .put("content", new JsonObject().put("type", "text").put("text", text))));
  }

  private void send(JsonObject message) {
    synchronized (out) {
      out.println(message.encode());
      out.flush();
    }
  }
}
