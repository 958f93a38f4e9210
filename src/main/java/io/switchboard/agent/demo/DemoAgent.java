package io.switchboard.agent.demo;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The built-in demo agent: a real ACP v1 agent over stdio with no model behind it, so a newcomer
 * sees the whole flow without an API key. Each turn it shows a plan, streams a reply word by word,
 * then either proposes an edit to {@code demo-notes.md} (a diff, a permission request, and on
 * allow a write through {@code fs/write_text_file}) or, for a prompt like {@code run: ls -la},
 * asks to run that command and runs it through {@code terminal/*}. It answers
 * {@code session/cancel} with {@code cancelled}. The gateway runs it as a child process.
 */
public final class DemoAgent {
  private static final Pattern RUN = Pattern.compile("^\\s*run[:\\s]\\s*(.+)$", Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  private static final String NOTES = "demo-notes.md";

  private final PrintStream out;
  private final long delayMs;
  private final Map<String, CompletableFuture<Object>> waiting = new ConcurrentHashMap<>();
  private final AtomicLong nextId = new AtomicLong();
  private final Map<String, Session> sessions = new ConcurrentHashMap<>();
  private final ExecutorService work = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "demo-agent-turn");
    t.setDaemon(true);
    return t;
  });

  /** One ACP session: where it works, and the turn in progress. */
  private static final class Session {
    final String id;
    final Path cwd;
    volatile Turn turn;
    volatile boolean alwaysAllowed;
    /** "ask" (the default: propose, then ask) or "read-only" (describe, change nothing). */
    volatile String mode = "ask";
    /** "friendly" (the default: explains itself) or "brief" (a session config option). */
    volatile String tone = "friendly";
    /** Whether its slash commands were announced (at its first prompt: after session/new was answered). */
    volatile boolean commandsAnnounced;
    /** Turns it finished, for its usage reports. */
    int turns;
    int toolCalls;

    Session(String id, Path cwd) {
      this.id = id;
      this.cwd = cwd;
    }
  }

  /** Completes when the client cancels the turn. */
  private static final class Turn {
    final CompletableFuture<Void> cancelled = new CompletableFuture<>();
  }

  /** The turn was cancelled: unwind and answer {@code cancelled}. */
  private static final class Cancelled extends Exception {
    Cancelled() {
      super(null, null, false, false);
    }
  }

  /** The client answered one of our requests with an error. */
  private static final class ClientError extends Exception {
    final int code;

    ClientError(int code, String message) {
      super(message, null, false, false);
      this.code = code;
    }
  }

  DemoAgent(PrintStream out, long delayMs) {
    this.out = out;
    this.delayMs = delayMs;
  }

  public static void main(String[] args) throws IOException {
    long delay = 30;
    String configured = System.getenv("DEMO_AGENT_DELAY_MS");
    if (configured != null && configured.matches("\\d{1,5}")) {
      delay = Long.parseLong(configured);
    }
    PrintStream protocol = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
        StandardCharsets.UTF_8);
    System.setOut(System.err); // nothing but protocol lines may reach stdout
    new DemoAgent(protocol, delay).run(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
    System.exit(0); // stdin closed: the client is done with us
  }

  void run(BufferedReader in) throws IOException {
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      JsonObject message;
      try {
        message = new JsonObject(line);
      } catch (DecodeException | ClassCastException e) {
        System.err.println("demo agent: ignored a line that is not a JSON object");
        continue;
      }
      Object id = message.getValue("id");
      if (message.getValue("method") instanceof String method) {
        JsonObject params = message.getValue("params") instanceof JsonObject p ? p : new JsonObject();
        if (id == null) {
          notification(method, params);
        } else {
          work.submit(() -> answer(id, method, params));
        }
      } else if (id != null) {
        CompletableFuture<Object> f = waiting.remove(String.valueOf(id));
        if (f != null) {
          if (message.getValue("error") instanceof JsonObject error) {
            f.completeExceptionally(new ClientError(error.getInteger("code", -32603), error.getString("message", "")));
          } else {
            f.complete(message.getValue("result"));
          }
        }
      }
    }
  }

  private void notification(String method, JsonObject params) {
    if (method.equals("session/cancel")) {
      Session s = sessions.get(params.getString("sessionId", ""));
      Turn t = s == null ? null : s.turn;
      if (t != null) {
        t.cancelled.complete(null);
      }
    }
  }

  private void answer(Object id, String method, JsonObject params) {
    JsonObject response = new JsonObject().put("jsonrpc", "2.0").put("id", id);
    try {
      response.put("result", handle(method, params));
    } catch (ClientError e) {
      response.put("error", new JsonObject().put("code", e.code).put("message", e.getMessage()));
    } catch (RuntimeException e) {
      response.put("error", new JsonObject().put("code", -32603).put("message", String.valueOf(e.getMessage())));
    }
    send(response);
  }

  private Object handle(String method, JsonObject params) throws ClientError {
    switch (method) {
      case "initialize":
        return new JsonObject().put("protocolVersion", 1)
            .put("agentCapabilities", new JsonObject().put("loadSession", false)
                .put("promptCapabilities", new JsonObject().put("image", true).put("audio", false)
                    .put("embeddedContext", false))
                .put("sessionCapabilities", new JsonObject().put("resume", new JsonObject())))
            .put("authMethods", new JsonArray())
            .put("agentInfo", new JsonObject().put("name", "switchboard-demo").put("title", "Switchboard demo agent")
                .put("version", "1"));
      case "session/new": {
        Session s = new Session("demo-" + UUID.randomUUID(), cwd(params));
        sessions.put(s.id, s);
        return new JsonObject().put("sessionId", s.id).put("modes", modes(s)).put("configOptions", config(s));
      }
      case "session/set_config_option": {
        Session s = sessions.get(params.getString("sessionId", ""));
        if (s == null) {
          throw new ClientError(-32602, "unknown session " + params.getString("sessionId"));
        }
        if (!"tone".equals(params.getString("configId")) || !TONES.contains(params.getString("value"))) {
          throw new ClientError(-32602, "unknown setting " + params.getString("configId") + "=" + params.getString("value")
              + " (known: tone = " + TONES + ")");
        }
        s.tone = params.getString("value");
        return new JsonObject().put("configOptions", config(s));
      }
      case "session/set_mode": {
        Session s = sessions.get(params.getString("sessionId", ""));
        String mode = params.getString("modeId", "");
        if (s == null) {
          throw new ClientError(-32602, "unknown session " + params.getString("sessionId"));
        }
        if (!MODES.containsKey(mode)) {
          throw new ClientError(-32602, "unknown mode " + mode + " (known: " + MODES.keySet() + ")");
        }
        s.mode = mode;
        return new JsonObject();
      }
      case "session/resume": {
        // The demo keeps nothing worth restoring; it only needs to know the session again.
        String sessionId = params.getString("sessionId", "demo-" + UUID.randomUUID());
        Session resumed = new Session(sessionId, cwd(params));
        sessions.put(sessionId, resumed);
        return new JsonObject().put("modes", modes(resumed)).put("configOptions", config(resumed));
      }
      case "session/prompt":
        return prompt(params);
      default:
        throw new ClientError(-32601, "Method not found: " + method);
    }
  }

  /** The session modes it offers (ACP session modes), with their descriptions. */
  private static final Map<String, String> MODES = new java.util.LinkedHashMap<>(Map.of());

  static {
    MODES.put("ask", "Ask: propose a change or a command, and ask before doing it");
    MODES.put("read-only", "Read only: say what it would do, change nothing");
  }

  private static final List<String> TONES = List.of("friendly", "brief");

  /** Its session config options (ACP): one select, the tone of its replies. */
  private static JsonArray config(Session s) {
    return new JsonArray().add(new JsonObject().put("id", "tone").put("name", "Tone").put("type", "select")
        .put("description", "How much the demo agent says").put("currentValue", s.tone)
        .put("options", new JsonArray()
            .add(new JsonObject().put("value", "friendly").put("name", "Friendly"))
            .add(new JsonObject().put("value", "brief").put("name", "Brief"))));
  }

  private static JsonObject modes(Session s) {
    JsonArray available = new JsonArray();
    MODES.forEach((id, description) -> available.add(new JsonObject().put("id", id)
        .put("name", description.substring(0, description.indexOf(':'))).put("description", description)));
    return new JsonObject().put("currentModeId", s.mode).put("availableModes", available);
  }

  private static Path cwd(JsonObject params) {
    return Path.of(params.getString("cwd", ".")).toAbsolutePath();
  }

  private JsonObject prompt(JsonObject params) throws ClientError {
    Session s = sessions.get(params.getString("sessionId", ""));
    if (s == null) {
      throw new ClientError(-32602, "unknown session " + params.getString("sessionId"));
    }
    StringBuilder text = new StringBuilder();
    List<JsonObject> images = new ArrayList<>();
    for (Object block : params.getJsonArray("prompt", new JsonArray())) {
      if (block instanceof JsonObject b && "text".equals(b.getString("type"))) {
        text.append(b.getString("text", ""));
      } else if (block instanceof JsonObject b && "image".equals(b.getString("type"))) {
        images.add(b);
      }
    }
    Turn turn = new Turn();
    s.turn = turn;
    try {
      if (!images.isEmpty()) {
        looked(s, turn, images);
      }
      if (!text.toString().isBlank() || images.isEmpty()) {
        turn(s, turn, text.toString().trim());
      }
      return new JsonObject().put("stopReason", "end_turn");
    } catch (Cancelled c) {
      return new JsonObject().put("stopReason", "cancelled");
    } finally {
      s.turn = null;
    }
  }

  private void turn(Session s, Turn turn, String text) throws Cancelled, ClientError {
    if (!s.commandsAnnounced) {
      s.commandsAnnounced = true;
      update(s, new JsonObject().put("sessionUpdate", "available_commands_update").put("availableCommands",
          new JsonArray().add(new JsonObject().put("name", "help").put("description", "What this demo agent can do"))));
    }
    if (text.startsWith("/help")) {
      say(s, turn, "I can add a note to " + NOTES + " (say anything), run a command once you allow it (say "
          + "\u201crun: ls -la\u201d), or, in Read only mode, only say what I would do.");
      return;
    }
    Matcher run = RUN.matcher(text);
    boolean command = run.matches();
    plan(s, "completed", "in_progress", "pending");
    if ("brief".equals(s.tone)) {
      say(s, turn, "Noted: \u201c" + text + "\u201d. ");
    } else {
      say(s, turn, "You said: \u201c" + text + "\u201d. I am the built-in demo agent: there is no model behind me, "
          + "but I speak real ACP, so you can see how a conversation with a coding agent flows. ");
    }
    if ("read-only".equals(s.mode)) {
      say(s, turn, "I am in read-only mode, so I change nothing: I would have "
          + (command ? "run \u201c" + run.group(1).trim() + "\u201d." : "added your message to " + NOTES + "."));
      plan(s, "completed", "completed", "completed");
      return;
    }
    if (command) {
      say(s, turn, "Let me run that command for you, once you allow it.");
      plan(s, "completed", "completed", "in_progress");
      runCommand(s, turn, run.group(1).trim());
    } else {
      say(s, turn, "I would like to add your message to " + NOTES + " in this thread's workspace. "
          + "(Tip: say \u201crun: ls -la\u201d and I will ask to run a command.)");
      plan(s, "completed", "completed", "in_progress");
      editNotes(s, turn, text);
    }
    plan(s, "completed", "completed", "completed");
    usage(s);
  }

  /**
   * What the demo "sees" in images: their kind, size and (PNG) dimensions, and the first one shown
   * back as an image block, so a page can show what an agent sends as well as what it is sent.
   */
  private void looked(Session s, Turn turn, List<JsonObject> images) throws Cancelled {
    StringBuilder seen = new StringBuilder("I got " + images.size() + (images.size() == 1 ? " image" : " images") + ":");
    for (JsonObject image : images) {
      byte[] bytes = java.util.Base64.getDecoder().decode(image.getString("data", ""));
      seen.append(' ').append(image.getString("mimeType")).append(" of ").append(String.format("%,d", bytes.length))
          .append(" bytes");
      if (bytes.length >= 24 && bytes[0] == (byte) 0x89 && bytes[1] == 'P') {
        java.nio.ByteBuffer ihdr = java.nio.ByteBuffer.wrap(bytes, 16, 8);
        seen.append(", ").append(ihdr.getInt()).append("\u00d7").append(ihdr.getInt()).append(" pixels");
      }
      seen.append(';');
    }
    say(s, turn, seen.substring(0, seen.length() - 1) + ". There is no model behind me, so that is all I can tell; "
        + "here is the first one back. ");
    update(s, new JsonObject().put("sessionUpdate", "agent_message_chunk").put("content", new JsonObject()
        .put("type", "image").put("mimeType", images.get(0).getString("mimeType"))
        .put("data", images.get(0).getString("data"))));
  }

  /** What a model would report of its context window (ACP usage_update): the demo counts its turns. */
  private void usage(Session s) {
    s.turns++;
    update(s, new JsonObject().put("sessionUpdate", "usage_update").put("used", 1200 * s.turns).put("size", 200_000));
  }

  private void editNotes(Session s, Turn turn, String text) throws Cancelled, ClientError {
    String path = s.cwd.resolve(NOTES).toString();
    String oldText;
    try {
      oldText = ((JsonObject) call(turn, "fs/read_text_file", new JsonObject().put("sessionId", s.id)
          .put("path", path))).getString("content");
    } catch (ClientError e) {
      if (e.code != -32002) {
        throw e;
      }
      oldText = null; // a new file
    }
    String newText = (oldText == null ? "# Notes from the demo agent\n\n" : oldText) + "- " + text + "\n";
    String id = "edit-" + (++s.toolCalls);
    update(s, new JsonObject().put("sessionUpdate", "tool_call").put("toolCallId", id)
        .put("title", "Add a note to " + NOTES).put("kind", "edit").put("status", "pending")
        .put("locations", new JsonArray().add(new JsonObject().put("path", path)))
        .put("content", new JsonArray().add(new JsonObject().put("type", "diff").put("path", path)
            .put("oldText", oldText).put("newText", newText)))
        .put("rawInput", new JsonObject().put("path", path).put("content", newText)));
    if (!allowed(s, turn, id, "Add a note to " + NOTES, "edit", path)) {
      update(s, new JsonObject().put("sessionUpdate", "tool_call_update").put("toolCallId", id).put("status", "failed"));
      say(s, turn, " All right, I left " + NOTES + " as it was.");
      return;
    }
    update(s, new JsonObject().put("sessionUpdate", "tool_call_update").put("toolCallId", id)
        .put("status", "in_progress"));
    call(turn, "fs/write_text_file", new JsonObject().put("sessionId", s.id).put("path", path).put("content", newText));
    update(s, new JsonObject().put("sessionUpdate", "tool_call_update").put("toolCallId", id)
        .put("status", "completed"));
    say(s, turn, " Done: your note is in " + NOTES + ".");
  }

  private void runCommand(Session s, Turn turn, String commandLine) throws Cancelled, ClientError {
    List<String> words = Arrays.asList(commandLine.split("\\s+"));
    String id = "run-" + (++s.toolCalls);
    String title = "Run `" + commandLine + "`";
    update(s, new JsonObject().put("sessionUpdate", "tool_call").put("toolCallId", id).put("title", title)
        .put("kind", "execute").put("status", "pending")
        .put("rawInput", new JsonObject().put("command", words.get(0))
            .put("args", new JsonArray(words.subList(1, words.size())))));
    if (!allowed(s, turn, id, title, "execute", null)) {
      update(s, new JsonObject().put("sessionUpdate", "tool_call_update").put("toolCallId", id).put("status", "failed"));
      say(s, turn, " All right, I did not run it.");
      return;
    }
    JsonObject created;
    try {
      created = (JsonObject) call(turn, "terminal/create", new JsonObject().put("sessionId", s.id)
          .put("command", words.get(0)).put("args", new JsonArray(words.subList(1, words.size())))
          .put("cwd", s.cwd.toString()).put("outputByteLimit", 64 * 1024));
    } catch (ClientError e) {
      update(s, new JsonObject().put("sessionUpdate", "tool_call_update").put("toolCallId", id).put("status", "failed"));
      say(s, turn, " I could not start it: " + e.getMessage());
      return;
    }
    String terminal = created.getString("terminalId");
    update(s, new JsonObject().put("sessionUpdate", "tool_call_update").put("toolCallId", id)
        .put("status", "in_progress")
        .put("content", new JsonArray().add(new JsonObject().put("type", "terminal").put("terminalId", terminal))));
    JsonObject exit;
    try {
      exit = (JsonObject) call(turn, "terminal/wait_for_exit", new JsonObject().put("sessionId", s.id)
          .put("terminalId", terminal));
    } catch (Cancelled c) {
      request("terminal/kill", new JsonObject().put("sessionId", s.id).put("terminalId", terminal));
      request("terminal/release", new JsonObject().put("sessionId", s.id).put("terminalId", terminal));
      throw c;
    }
    JsonObject output = (JsonObject) call(turn, "terminal/output", new JsonObject().put("sessionId", s.id)
        .put("terminalId", terminal));
    call(turn, "terminal/release", new JsonObject().put("sessionId", s.id).put("terminalId", terminal));
    Integer code = exit.getInteger("exitCode");
    update(s, new JsonObject().put("sessionUpdate", "tool_call_update").put("toolCallId", id)
        .put("status", code != null && code == 0 ? "completed" : "failed")
        // The terminal stays the tool call's content (the client shows its output, as Zed does).
        .put("content", new JsonArray().add(new JsonObject().put("type", "terminal").put("terminalId", terminal)))
        .put("rawOutput", new JsonObject().put("exitCode", code).put("truncated", output.getBoolean("truncated"))
            .put("output", output.getString("output", ""))));
    say(s, turn, code == null ? " The command was stopped by " + exit.getString("signal") + "."
        : " The command exited with code " + code + ".");
  }

  /** Asks the client; "allow always" is remembered for the rest of the session. */
  private boolean allowed(Session s, Turn turn, String toolCallId, String title, String kind, String path)
      throws Cancelled, ClientError {
    if (s.alwaysAllowed) {
      say(s, turn, " (You allowed everything for this session, so I am not asking again.)");
      return true;
    }
    JsonArray options = new JsonArray()
        .add(new JsonObject().put("optionId", "allow-once").put("name", "Allow once").put("kind", "allow_once"))
        .add(new JsonObject().put("optionId", "allow-always").put("name", "Always allow").put("kind", "allow_always"))
        .add(new JsonObject().put("optionId", "reject").put("name", "Reject").put("kind", "reject_once"));
    JsonObject toolCall = new JsonObject().put("toolCallId", toolCallId).put("title", title).put("kind", kind)
        .put("status", "pending");
    if (path != null) {
      toolCall.put("locations", new JsonArray().add(new JsonObject().put("path", path)));
    }
    JsonObject result = (JsonObject) request("session/request_permission", new JsonObject().put("sessionId", s.id)
        .put("toolCall", toolCall).put("options", options));
    JsonObject outcome = result == null ? new JsonObject() : result.getJsonObject("outcome", new JsonObject());
    if (!"selected".equals(outcome.getString("outcome"))) {
      throw new Cancelled();
    }
    // Choose by kind, never by id.
    String chosen = outcome.getString("optionId");
    String chosenKind = options.stream().map(o -> (JsonObject) o).filter(o -> o.getString("optionId").equals(chosen))
        .map(o -> o.getString("kind")).findFirst().orElse("reject_once");
    if (chosenKind.equals("allow_always")) {
      s.alwaysAllowed = true;
    }
    return chosenKind.startsWith("allow");
  }

  private void say(Session s, Turn turn, String text) throws Cancelled {
    for (String word : text.split("(?<= )")) {
      pause(turn);
      update(s, new JsonObject().put("sessionUpdate", "agent_message_chunk")
          .put("content", new JsonObject().put("type", "text").put("text", word)));
    }
  }

  private void plan(Session s, String... states) {
    String[] steps = {"Read your message", "Write a reply", "Propose a change and ask your permission"};
    JsonArray entries = new JsonArray();
    for (int i = 0; i < steps.length; i++) {
      entries.add(new JsonObject().put("content", steps[i]).put("priority", "medium").put("status", states[i]));
    }
    update(s, new JsonObject().put("sessionUpdate", "plan").put("entries", entries));
  }

  private void pause(Turn turn) throws Cancelled {
    if (turn.cancelled.isDone()) {
      throw new Cancelled();
    }
    try {
      turn.cancelled.get(delayMs, TimeUnit.MILLISECONDS);
      throw new Cancelled();
    } catch (TimeoutException stillGoing) {
      // the usual case: nobody cancelled during the pause
    } catch (InterruptedException | java.util.concurrent.ExecutionException e) {
      throw new Cancelled();
    }
  }

  /** A request made during a turn: a cancel while it is out unwinds the turn. */
  private Object call(Turn turn, String method, JsonObject params) throws Cancelled, ClientError {
    if (turn.cancelled.isDone()) {
      throw new Cancelled();
    }
    Object result = request(method, params);
    if (turn.cancelled.isDone() && !method.startsWith("terminal/")) {
      throw new Cancelled();
    }
    return result;
  }

  private Object request(String method, JsonObject params) throws ClientError {
    String id = Long.toString(nextId.getAndIncrement());
    CompletableFuture<Object> result = new CompletableFuture<>();
    waiting.put(id, result);
    send(new JsonObject().put("jsonrpc", "2.0").put("id", Long.parseLong(id)).put("method", method)
        .put("params", params));
    try {
      return result.get();
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof ClientError ce) {
        throw ce;
      }
      throw new ClientError(-32603, String.valueOf(e.getCause()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ClientError(-32603, "interrupted");
    }
  }

  private void update(Session s, JsonObject update) {
    send(new JsonObject().put("jsonrpc", "2.0").put("method", "session/update")
        .put("params", new JsonObject().put("sessionId", s.id).put("update", update)));
  }

  private void send(JsonObject message) {
    synchronized (out) {
      out.print(message.encode());
      out.print('\n');
      out.flush();
    }
  }
}
