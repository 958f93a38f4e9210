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
 * acknowledging, die on the next read receipt) and reads
 * everything the gateway sent in {@code out.jsonl}, one JSON object a line with a {@code type}.
 * In the acp dialect it acknowledges every durable output it receives, unless told not to.
 *
 * <p>In the vibearound dialect it behaves like VibeAround's SDK where it matters
 * (jazzenchen/va-plugin-channel-sdk, docs/protocol-plugins.md): its renderer is ready only
 * {@code render-delay=<ms>} after initialize (outputs before are dropped, recorded as
 * {@code dropped}; a card is answered cancelled), and then it sends heartbeats; when a chat's
 * prompt ends, its cards still open are answered {@code reject_once}; with {@code taps-after-prompt}
 * (0.6.x's Telegram plugin) a tap is read only once the chat's prompt has ended, and dropped if
 * its card was answered meanwhile; with {@code redeliver}, prompts a dead process had not finished
 * are sent again by the next one, with the same message ids (the platform's redelivery). With
 * {@code auto-tap=<optionId>} it answers every card at once with that option and no sender. It
 * takes {@code _va/session_info} only if the SDK would ({@link #sdkDrops}, else recorded as
 * {@code invalid}), keeps each chat's workspace from it, and sends a file an agent links
 * ({@code resource_link}) as the SDK does: recorded as a {@code document} if it is inside that
 * workspace, else as the {@code text} or {@code error} the chat would show.
 */
public final class FakePlugin extends StdioPeer {
  private final String dialect;
  private final Path control;
  private volatile boolean acknowledge;
  /** Cards waiting for a tap, by output id (acp) or request id (vibearound). */
  private final Map<String, CompletableFuture<JsonObject>> cards = new ConcurrentHashMap<>();
  private volatile boolean reading = true;
  /** Exit (code 7) on the next read receipt ({@code terminal/release}) instead of answering it. */
  private volatile boolean dieOnReceipt;
  /** vibearound: whether the renderer exists yet. */
  private volatile boolean rendering;
  private final long renderDelayMs;
  private final boolean tapsAfterPrompt;
  private final boolean redeliver;
  /** {@code auto-tap=<optionId>}: every card is answered at once with that option, saying no sender (a misbehaving plugin). */
  private final String autoTap;
  /** vibearound: open cards by request id -> {chatId, options}. */
  private final Map<String, JsonObject> openCards = new ConcurrentHashMap<>();
  /** Chats whose prompt is in flight (taps wait while {@code taps-after-prompt}). */
  private final Map<String, Integer> prompting = new ConcurrentHashMap<>();
  /** vibearound: each route's workspace path from its last _va/session_info (the SDK's channelRouteKey). */
  private final Map<List<Object>, String> workspaces = new ConcurrentHashMap<>();

  private FakePlugin(String dialect, Path control, List<String> flags) {
    this.dialect = dialect;
    this.control = control;
    this.acknowledge = !flags.contains("no-ack");
    this.renderDelayMs = flags.stream().filter(f -> f.startsWith("render-delay=")).findFirst()
        .map(f -> Long.parseLong(f.substring("render-delay=".length()))).orElse(0L);
    this.tapsAfterPrompt = flags.contains("taps-after-prompt");
    this.redeliver = flags.contains("redeliver");
    this.autoTap = flags.stream().filter(f -> f.startsWith("auto-tap=")).findFirst()
        .map(f -> f.substring("auto-tap=".length())).orElse(null);
    this.rendering = !dialect.equals("vibearound");
  }

  public static void main(String[] args) throws Exception {
    FakePlugin plugin = new FakePlugin(args[0], Path.of(args[1]), List.of(args));
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
      if (!rendering) {
        // The SDK makes its renderer after the platform answered (getMe), then starts its heartbeat.
        Thread ready = new Thread(this::becomeReady, "fake-plugin-renderer");
        ready.setDaemon(true);
        ready.start();
      }
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

  private void becomeReady() {
    try {
      Thread.sleep(renderDelayMs);
      rendering = true;
      record(new JsonObject().put("type", "rendering"));
      if (redeliver) {
        redeliverUnfinished();
      }
      while (true) {
        send(new JsonObject().put("jsonrpc", "2.0").put("method", "_va/heartbeat")
            .put("params", new JsonObject().put("ts", System.currentTimeMillis())));
        Thread.sleep(30_000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The platform hands over again what the dead process had fetched but not finished. */
  private void redeliverUnfinished() {
    try {
      Path log = control.resolve("inbound.jsonl");
      List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
      Map<String, JsonObject> open = new java.util.LinkedHashMap<>();
      for (String line : lines) {
        JsonObject e = new JsonObject(line);
        if (e.getBoolean("done", false)) {
          open.remove(e.getString("messageId"));
        } else {
          open.put(e.getString("messageId"), e.getJsonObject("action"));
        }
      }
      for (JsonObject action : open.values()) {
        record(new JsonObject().put("type", "redelivered").put("action", action));
        Thread t = new Thread(() -> act(action));
        t.setDaemon(true);
        t.start();
      }
    } catch (IOException e) {
      e.printStackTrace();
    }
  }

  private synchronized void inboundLog(JsonObject entry) {
    try {
      Files.writeString(control.resolve("inbound.jsonl"), entry.encode() + "\n", StandardCharsets.UTF_8,
          StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      e.printStackTrace();
    }
  }

  /**
   * The SDK's end of a chat's prompt: its cards still open are answered with their reject_once
   * option, before the platform's next updates (a tap waiting in {@code taps-after-prompt}) are read.
   */
  private void promptEnded(String chat) {
    rejectOpenCards(chat, openCardsOf(chat)); // on the reader thread: no card can arrive meanwhile
    prompting.computeIfPresent(chat, (c, n) -> n <= 1 ? null : n - 1);
  }

  /** The keys of the chat's cards open now. */
  private List<String> openCardsOf(String chat) {
    return openCards.entrySet().stream().filter(e -> chat.equals(e.getValue().getString("chatId")))
        .map(Map.Entry::getKey).toList();
  }

  /**
   * Answers those of {@code keys} still open with their reject_once option (or cancelled), as the
   * SDK does with the cards it shows when a prompt is sent or ends.
   */
  private void rejectOpenCards(String chat, List<String> keys) {
    for (Map.Entry<String, JsonObject> open : openCards.entrySet()) {
      if (!chat.equals(open.getValue().getString("chatId")) || !keys.contains(open.getKey())) {
        continue;
      }
      String reject = open.getValue().getJsonArray("options").stream().map(o -> (JsonObject) o)
          .filter(o -> "reject_once".equals(o.getString("kind"))).map(o -> o.getString("optionId")).findFirst()
          .orElse(null);
      CompletableFuture<JsonObject> card = cards.get(open.getKey());
      if (card != null && card.complete(reject == null ? new JsonObject().put("outcome",
          new JsonObject().put("outcome", "cancelled")) : new JsonObject().put("outcome",
          new JsonObject().put("outcome", "selected").put("optionId", reject)))) {
        record(new JsonObject().put("type", "auto_reject").put("key", open.getKey()));
      }
    }
  }

  private void act(JsonObject a) {
    try {
      if (a.containsKey("prompt")) {
        String chat = a.getString("chat", "42");
        while (!rendering) {
          Thread.sleep(20); // the platform's messages are read only once the bot started, after the renderer
        }
        prompting.merge(chat, 1, Integer::sum);
        if (redeliver && a.getString("messageId") != null) {
          inboundLog(new JsonObject().put("messageId", a.getString("messageId")).put("action", a));
        }
        JsonObject routing = new JsonObject().put("chatId", chat).put("senderId", a.getString("sender", "42"))
            .put("scope", a.getString("scope", "dm"));
        String messageId = a.getString("messageId");
        if (messageId != null && dialect.equals("acp")) {
          routing.put("messageId", messageId);
        }
        JsonObject meta = dialect.equals("acp") ? new JsonObject().put("switchboard", routing)
            : new JsonObject().put("va.channel", routing.copy().put("channelInstanceId", "fake").put("actorId", "fake")
                .put("platformMessageId", messageId != null ? messageId : "m" + System.nanoTime()));
        // The SDK's end of the prompt (its cards still open rejected) runs as the answer is read,
        // before the next message from the gateway is: a card sent after the answer stays open.
        // The SDK is one JavaScript thread: the cards it rejects when it sends a prompt are those
        // shown as it sends it, never one that arrives after (read only once it is done).
        List<String> shownAsSent = openCardsOf(chat);
        // Recorded before the prompt is written: whatever the gateway says of it comes after.
        record(new JsonObject().put("type", "prompt_sent").put("chat", chat).put("prompt", a.getString("prompt")));
        CompletableFuture<JsonObject> asked = ask("session/prompt", new JsonObject().put("sessionId", chat)
            .put("prompt", new JsonArray().add(new JsonObject().put("type", "text").put("text", a.getString("prompt"))))
            .put("_meta", meta), answer -> {
              if (dialect.equals("vibearound")) {
                promptEnded(chat);
              }
            });
        if (dialect.equals("vibearound")) {
          rejectOpenCards(chat, shownAsSent); // the SDK's onPromptSent: the chat's cards still shown are rejected
          // A test that taps a card shown while a prompt was being sent waits for this: the tap of a
          // card rejected here is dropped, and the gateway asks again with a new card.
          record(new JsonObject().put("type", "sent_cards_rejected").put("chat", chat));
        }
        JsonObject response = asked.get(60, java.util.concurrent.TimeUnit.SECONDS);
        record(new JsonObject().put("type", "prompt_result").put("chat", chat).put("prompt", a.getString("prompt"))
            .put("response", response));
        if (redeliver && a.getString("messageId") != null) {
          inboundLog(new JsonObject().put("messageId", a.getString("messageId")).put("done", true));
        }
        if (!dialect.equals("vibearound")) {
          prompting.computeIfPresent(chat, (c, n) -> n <= 1 ? null : n - 1);
        }
      } else if (a.containsKey("tap")) {
        JsonObject tap = a.getJsonObject("tap");
        JsonObject open = openCards.get(tap.getString("card"));
        if (tapsAfterPrompt && open != null) {
          while (prompting.containsKey(open.getString("chatId"))) {
            Thread.sleep(20); // the platform's updates are fetched only after the prompt's handler returns
          }
        }
        JsonObject result = new JsonObject().put("outcome", new JsonObject().put("outcome", "selected")
            .put("optionId", tap.getString("optionId")));
        if (tap.containsKey("sender")) {
          result.put("_meta", new JsonObject().put("switchboard", new JsonObject().put("senderId", tap.getString("sender"))));
        }
        CompletableFuture<JsonObject> card = cards.get(tap.getString("card"));
        if (card == null || !card.complete(result)) {
          record(new JsonObject().put("type", "tap_dropped").put("key", tap.getString("card"))); // "already handled"
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
        record(new JsonObject().put("type", "set").put("action", a));
      } else if (a.containsKey("dieOnReceipt")) {
        dieOnReceipt = a.getBoolean("dieOnReceipt");
        record(new JsonObject().put("type", "set").put("action", a));
      } else if (a.containsKey("stopReading")) {
        reading = false;
        record(new JsonObject().put("type", "set").put("action", a));
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
    if (!rendering && method.startsWith("_va/")) {
      record(new JsonObject().put("type", "dropped").put("method", method).put("params", params));
      return;
    }
    if (method.equals("_va/request_permission")) {
      openCards.put(params.getString("requestId"), new JsonObject()
          .put("chatId", params.getJsonObject("target").getString("chatId"))
          .put("options", params.getJsonObject("request").getJsonArray("options")));
    }
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
    if (!rendering && method.startsWith("_va/")) {
      return new JsonObject().put("outcome", new JsonObject().put("outcome", "cancelled")); // no renderer yet
    }
    if (isCard(method)) {
      String key = cardKey(method, params);
      CompletableFuture<JsonObject> tap = cards.computeIfAbsent(key, k -> new CompletableFuture<>());
      if (dialect.equals("acp")) {
        ack(key);
      }
      if (autoTap != null) {
        cards.remove(key, tap);
        openCards.remove(key);
        return new JsonObject().put("outcome", new JsonObject().put("outcome", "selected").put("optionId", autoTap));
      }
      JsonObject answer = tap.get();
      cards.remove(key, tap);
      openCards.remove(key);
      return answer;
    }
    if (dieOnReceipt && method.equals("terminal/release")) {
      Runtime.getRuntime().halt(7); // read the outputs, died before confirming them
    }
    // Recorded just before the answer: a recorded sync is one this process answered.
    record(new JsonObject().put("type", "request").put("method", method).put("params", params));
    return new JsonObject();
  }

  @Override
  protected void notification(String method, JsonObject params) {
    waitWhileNotReading();
    if (!rendering && method.startsWith("_va/")) {
      return; // recorded as dropped when it arrived
    }
    if (method.equals("_va/session_info")) {
      String drops = sdkDrops(params);
      if (drops != null) { // the SDK logs "invalid va/session_info notification"
        record(new JsonObject().put("type", "invalid").put("why", drops).put("params", params));
        return;
      }
      workspaces.put(routeKey(params.getJsonObject("target")),
          params.getJsonObject("info").getString("workspacePath"));
    }
    record(new JsonObject().put("type", "notification").put("method", method).put("params", params));
    if (method.equals("_va/thread_reply")) {
      Object content = params.getJsonObject("reply").getJsonObject("payload").getJsonObject("notification")
          .getJsonObject("update").getValue("content"); // a tool call's is an array
      if (content instanceof JsonObject link && "resource_link".equals(link.getString("type"))) {
        sendLinkedFile(params.getJsonObject("target"), link);
      }
    }
    if (dialect.equals("acp") && params.getValue("outputId") instanceof String id) {
      ack(id);
    }
  }

  /**
   * Why VibeAround's channel SDK drops a {@code _va/session_info} notification, or null when it takes
   * it. Its rules as read in jazzenchen/va-plugin-channel-sdk 0.6.8, {@code src/plugin.ts}: the
   * notification needs a target ({@code parseChannelTarget}) and an info
   * ({@code parseChannelSessionInfo}), else it logs "invalid va/session_info notification".
   * <ul>
   * <li>{@code target} is an object (not an array); {@code channelInstanceId}, {@code actorId},
   *     {@code chatId} are non-empty strings; {@code topicId} and {@code replyTo}, when present
   *     (null counts as present), are non-empty strings;
   * <li>{@code info} is an object and {@code info.agent} an object (neither an array);
   * <li>{@code workspaceId}, {@code workspacePath}, {@code threadId}, {@code sessionId} are strings
   *     (any: {@code typeof === "string"});
   * <li>{@code start} is {@code "new"} or {@code "resumed"};
   * <li>{@code agent.id} and {@code agent.name} are strings ({@code version} and {@code profileId}
   *     are optional and ignored when not strings).
   * </ul>
   */
  public static String sdkDrops(JsonObject params) {
    if (!(params.getValue("target") instanceof JsonObject target)) {
      return "target is not an object";
    }
    for (String field : List.of("channelInstanceId", "actorId", "chatId")) {
      if (!(target.getValue(field) instanceof String v) || v.isEmpty()) {
        return "target." + field + " is not a non-empty string";
      }
    }
    for (String field : List.of("topicId", "replyTo")) {
      if (target.containsKey(field) && !(target.getValue(field) instanceof String v && !v.isEmpty())) {
        return "target." + field + " is present and not a non-empty string";
      }
    }
    if (!(params.getValue("info") instanceof JsonObject info)) {
      return "info is not an object";
    }
    if (!(info.getValue("agent") instanceof JsonObject agent)) {
      return "info.agent is not an object";
    }
    for (String field : List.of("workspaceId", "workspacePath", "threadId", "sessionId")) {
      if (!(info.getValue(field) instanceof String)) {
        return "info." + field + " is not a string: " + info.getValue(field);
      }
    }
    if (!"new".equals(info.getValue("start")) && !"resumed".equals(info.getValue("start"))) {
      return "info.start is neither \"new\" nor \"resumed\": " + info.getValue("start");
    }
    for (String field : List.of("id", "name")) {
      if (!(agent.getValue(field) instanceof String)) {
        return "info.agent." + field + " is not a string: " + agent.getValue(field);
      }
    }
    return null;
  }

  /** The SDK's key of a route: a reply's target without its replyTo. */
  private static List<Object> routeKey(JsonObject target) {
    return java.util.Arrays.asList(target.getString("channelInstanceId"), target.getString("actorId"),
        target.getString("chatId"), target.getString("topicId"));
  }

  /** What the SDK's renderer does with a {@code resource_link} the agent sent (deliverResourceLink). */
  private void sendLinkedFile(JsonObject target, JsonObject link) {
    String uri = link.getString("uri", "");
    String name = link.getString("name", uri.substring(uri.lastIndexOf('/') + 1));
    JsonObject shown = new JsonObject().put("chat", target.getString("chatId")).put("name", name);
    try {
      Path file = Path.of(java.net.URI.create(uri));
      String workspace = workspaces.get(routeKey(target));
      if (workspace == null) {
        record(shown.put("type", "error").put("text", "\u274c Error: cannot send " + name
            + ": active workspace is unavailable"));
      } else if (!file.toRealPath().startsWith(Path.of(workspace).toRealPath())) {
        record(shown.put("type", "text").put("text", "\u26a0\ufe0f " + name
            + " was not sent because it is outside the active workspace."));
      } else if (!Files.isRegularFile(file.toRealPath())) {
        record(shown.put("type", "error").put("text", "\u274c Error: cannot send " + name + ": resource is not a file"));
      } else {
        record(shown.put("type", "document").put("path", file.toRealPath().toString()));
      }
    } catch (IOException | RuntimeException e) { // not a file: URI, or no such file
      record(shown.put("type", "error").put("text", "\u274c Error: " + e));
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
