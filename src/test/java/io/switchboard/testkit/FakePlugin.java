package io.switchboard.testkit;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A scripted IM plugin, run as a child process: the ACP client side of either dialect
 * ({@code acp} or {@code vibearound}). A test drives it through files in a control folder: it
 * appends actions to {@code in.jsonl} (prompt, tap, cancel, exit, garbage, stop reading, stop
 * acknowledging, die on the next sync request) and reads
 * everything the gateway sent in {@code out.jsonl}, one JSON object a line with a {@code type}.
 * In the acp dialect it acknowledges every durable output it receives, unless told not to.
 */
public final class FakePlugin extends StdioPeer {
  private final String dialect;
  private final Path control;
  private volatile boolean acknowledge;
  /** Exit (code 7) on the next {@code _switchboard/sync} request instead of answering it. */
  private volatile boolean dieOnSync;
  /** Cards waiting for a tap, by output id (acp) or request id (vibearound). */
  private final Map<String, CompletableFuture<JsonObject>> cards = new ConcurrentHashMap<>();
  private volatile boolean reading = true;

  private FakePlugin(String dialect, Path control, boolean acknowledge) {
    this.dialect = dialect;
    this.control = control;
    this.acknowledge = acknowledge;
  }

  public static void main(String[] args) throws Exception {
    FakePlugin plugin = new FakePlugin(args[0], Path.of(args[1]), !List.of(args).contains("no-ack"));
    plugin.record(new JsonObject().put("type", "started").put("pid", ProcessHandle.current().pid())
        .put("stateDir", System.getenv(args[0].equals("acp") ? "SWITCHBOARD_PLUGIN_STATE_DIR"
            : "VIBEAROUND_PLUGIN_STATE_DIR")));
    Thread actions = new Thread(plugin::actions, "fake-plugin-actions");
    actions.setDaemon(true);
    actions.start();
    plugin.run();
  }

  private void actions() {
    try {
      // Actions written for an earlier process of this plugin are not replayed. Counted before
      // "initialized" is recorded: a test writes this process's actions only after seeing that.
      Path in = control.resolve("in.jsonl");
      int done = Files.exists(in) ? Files.readAllLines(in).size() : 0;
      JsonObject init = request("initialize", new JsonObject().put("protocolVersion", 1)
          .put(dialect.equals("acp") ? "clientCapabilities" : "capabilities", new JsonObject()));
      record(new JsonObject().put("type", "initialized").put("response", init));
      while (true) {
        List<String> lines = Files.exists(in) ? Files.readAllLines(in) : List.of();
        for (; done < lines.size(); done++) {
          JsonObject action = new JsonObject(lines.get(done));
          Thread t = new Thread(() -> act(action));
          t.setDaemon(true);
          t.start();
        }
        Thread.sleep(20);
      }
    } catch (Exception e) {
      e.printStackTrace();
    }
  }

  private void act(JsonObject a) {
    try {
      if (a.containsKey("prompt")) {
        String chat = a.getString("chat", "42");
        JsonObject routing = new JsonObject().put("chatId", chat).put("senderId", a.getString("sender", "42"))
            .put("scope", a.getString("scope", "dm"));
        String messageId = a.getString("messageId");
        if (messageId != null && dialect.equals("acp")) {
          routing.put("messageId", messageId);
        }
        JsonObject meta = dialect.equals("acp") ? new JsonObject().put("switchboard", routing)
            : new JsonObject().put("va.channel", routing.copy().put("channelInstanceId", "fake").put("actorId", "fake")
                .put("platformMessageId", messageId != null ? messageId : "m" + System.nanoTime()));
        JsonObject response = request("session/prompt", new JsonObject().put("sessionId", chat)
            .put("prompt", new JsonArray().add(new JsonObject().put("type", "text").put("text", a.getString("prompt"))))
            .put("_meta", meta));
        record(new JsonObject().put("type", "prompt_result").put("chat", chat).put("prompt", a.getString("prompt"))
            .put("response", response));
      } else if (a.containsKey("tap")) {
        JsonObject tap = a.getJsonObject("tap");
        JsonObject result = new JsonObject().put("outcome", new JsonObject().put("outcome", "selected")
            .put("optionId", tap.getString("optionId")));
        if (tap.containsKey("sender")) {
          result.put("_meta", new JsonObject().put("switchboard", new JsonObject().put("senderId", tap.getString("sender"))));
        }
        CompletableFuture<JsonObject> card = cards.get(tap.getString("card"));
        if (card != null) {
          card.complete(result);
        }
      } else if (a.containsKey("cancel")) {
        JsonObject routing = new JsonObject().put("chatId", a.getString("cancel"));
        send(new JsonObject().put("jsonrpc", "2.0").put("method", "session/cancel").put("params", new JsonObject()
            .put("sessionId", a.getString("cancel")).put("_meta", dialect.equals("acp")
                ? new JsonObject().put("switchboard", routing) : new JsonObject().put("va.channel", routing))));
      } else if (a.containsKey("heartbeat")) {
        send(new JsonObject().put("jsonrpc", "2.0").put("method", dialect.equals("acp") ? "_switchboard/heartbeat"
            : "_va/heartbeat").put("params", new JsonObject().put("ts", System.currentTimeMillis())));
      } else if (a.containsKey("garbage")) {
        synchronized (out) {
          out.println("not json at all");
          out.println("{\"jsonrpc\":\"2.0\",\"id\":999}");
          out.println("x".repeat(10 * 1024 * 1024));
          out.flush();
        }
      } else if (a.containsKey("acking")) {
        acknowledge = a.getBoolean("acking");
      } else if (a.containsKey("dieOnSync")) {
        dieOnSync = a.getBoolean("dieOnSync");
      } else if (a.containsKey("stopReading")) {
        reading = false;
      } else if (a.containsKey("exit")) {
        System.exit(a.getInteger("exit"));
      }
    } catch (Exception e) {
      record(new JsonObject().put("type", "action_failed").put("action", a).put("error", String.valueOf(e)));
    }
  }

  private static boolean isCard(String method) {
    return method.equals("session/request_permission") || method.equals("_va/request_permission");
  }

  private static String cardKey(String method, JsonObject params) {
    return method.startsWith("_va") ? params.getString("requestId")
        : params.getJsonObject("_meta").getJsonObject("switchboard").getString("outputId");
  }

  @Override
  protected void arrived(String method, JsonObject params) {
    if (isCard(method)) {
      // Recorded in the order read: a sync answered later proves this card was read before it.
      String key = cardKey(method, params);
      cards.put(key, new CompletableFuture<>());
      record(new JsonObject().put("type", "card").put("method", method).put("key", key).put("params", params));
    }
  }

  @Override
  protected Object handle(String method, JsonObject params) throws Exception {
    waitWhileNotReading();
    if (isCard(method)) {
      String key = cardKey(method, params);
      CompletableFuture<JsonObject> tap = cards.computeIfAbsent(key, k -> new CompletableFuture<>());
      if (dialect.equals("acp")) {
        ack(key);
      }
      JsonObject answer = tap.get();
      cards.remove(key, tap);
      return answer;
    }
    if (dieOnSync && method.equals("_switchboard/sync")) {
      Runtime.getRuntime().halt(7); // read the outputs, died before confirming them
    }
    // Recorded just before the answer: a recorded sync is one this process answered.
    record(new JsonObject().put("type", "request").put("method", method).put("params", params));
    return new JsonObject();
  }

  @Override
  protected void notification(String method, JsonObject params) {
    waitWhileNotReading();
    record(new JsonObject().put("type", "notification").put("method", method).put("params", params));
    if (dialect.equals("acp") && params.getValue("outputId") instanceof String id) {
      ack(id);
    }
  }

  private void ack(String outputId) {
    if (acknowledge) {
      send(new JsonObject().put("jsonrpc", "2.0").put("method", "_switchboard/ack")
          .put("params", new JsonObject().put("outputIds", new JsonArray().add(outputId))));
    }
  }

  private void waitWhileNotReading() {
    while (!reading) {
      try {
        Thread.sleep(1000);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private synchronized void record(JsonObject what) {
    try {
      Files.writeString(control.resolve("out.jsonl"), what.encode() + "\n", StandardCharsets.UTF_8,
          StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      e.printStackTrace();
    }
  }
}
