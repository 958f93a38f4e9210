package io.switchboard.testkit;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted ACP agent for what no real agent does on demand: crash mid-turn, send garbage or a
 * 10 MiB line, fall silent, use {@code terminal/*}, replay a loaded session, try to escape its
 * workspace. The mode is its first argument. It reports what it saw as an agent text chunk
 * {@code REPORT:<json>}.
 */
public final class FakeAgent extends StdioPeer {
  private final String mode;
  private final AtomicInteger sessions = new AtomicInteger();
  private volatile String cwd = ".";

  private FakeAgent(String mode) {
    this.mode = mode;
  }

  public static void main(String[] args) throws Exception {
    new FakeAgent(args.length > 0 ? args[0] : "plain").run();
  }

  @Override
  protected void unmatched(JsonObject m) {
    if ("garbage".equals(mode)) {
      // the gateway's answer to our malformed message: report it
      send(chunk("fake-session-1", "REPORT:" + new JsonObject().put("answeredInvalid", m).encode() + "\n"));
    }
  }

  @Override
  protected Object handle(String method, JsonObject params) throws Exception {
    switch (method) {
      case "initialize":
        return new JsonObject().put("protocolVersion", 1)
            .put("agentCapabilities", new JsonObject().put("loadSession", mode.equals("load")))
            .put("authMethods", new JsonArray());
      case "session/new":
        cwd = params.getString("cwd");
        return new JsonObject().put("sessionId", "fake-session-" + sessions.incrementAndGet());
      case "session/load":
        cwd = params.getString("cwd");
        send(chunk(params.getString("sessionId"), "REPLAYED HISTORY"));
        return null;
      case "session/prompt":
        return prompt(params.getString("sessionId"));
      default:
        return new JsonObject();
    }
  }

  private JsonObject prompt(String sessionId) throws Exception {
    switch (mode) {
      case "crash-permission" -> {
        send(new JsonObject().put("jsonrpc", "2.0").put("id", nextId.getAndIncrement())
            .put("method", "session/request_permission").put("params", new JsonObject().put("sessionId", sessionId)
                .put("toolCall", new JsonObject().put("toolCallId", "doomed").put("title", "Doomed").put("kind", "edit"))
                .put("options", new JsonArray().add(new JsonObject().put("optionId", "yes").put("name", "Yes")
                    .put("kind", "allow_once")))));
        Thread.sleep(700);
        System.exit(3);
      }
      case "many-questions" -> {
        // Twelve permission questions at once, as a runaway agent might ask; the turn ends once all are answered.
        java.util.List<java.util.concurrent.CompletableFuture<JsonObject>> asked = new java.util.ArrayList<>();
        for (int i = 0; i < 12; i++) {
          asked.add(ask("session/request_permission", new JsonObject().put("sessionId", sessionId)
              .put("toolCall", new JsonObject().put("toolCallId", "q" + i).put("title", "Question " + i).put("kind", "edit"))
              .put("options", new JsonArray().add(new JsonObject().put("optionId", "yes").put("name", "Yes")
                  .put("kind", "allow_once")))));
        }
        for (var answer : asked) {
          answer.get(60, TimeUnit.SECONDS);
        }
      }
      case "garbage" -> {
        out.println("this is not json");
        out.println("{\"jsonrpc\":\"2.0\",\"id\":77}");
        out.println("[1, 2, 3]");
        out.println("{\"jsonrpc\":\"2.0\",\"id\":4242,\"result\":{}}");
        out.flush();
        Thread.sleep(300);
        send(chunk(sessionId, "after garbage"));
      }
      case "huge" -> {
        StringBuilder big = new StringBuilder(11 * 1024 * 1024);
        big.append("{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"").append(sessionId)
            .append("\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"");
        big.append("x".repeat(10 * 1024 * 1024)).append("\"}}}}");
        out.println(big);
        out.flush();
        send(chunk(sessionId, "after huge"));
      }
      case "silent" -> {
        Thread.sleep(TimeUnit.MINUTES.toMillis(10));
      }
      case "ids" -> {
        // An update kind from a newer protocol, with off-schema fields: passed through, not fatal.
        send(new JsonObject().put("jsonrpc", "2.0").put("method", "session/update").put("params", new JsonObject()
            .put("sessionId", sessionId).put("update", new JsonObject().put("sessionUpdate", "brand_new_kind")
                .putNull("used").put("_meta", new JsonObject().put("x", 1)))));
        // Our request ids start at 0 too, like every real agent's.
        String file = Path.of(cwd, "notes", "ids.txt").toString();
        JsonObject write = request("fs/write_text_file", new JsonObject().put("sessionId", sessionId)
            .put("path", file).put("content", "written"));
        JsonObject read = request("fs/read_text_file", new JsonObject().put("sessionId", sessionId)
            .put("path", file));
        JsonObject missing = request("fs/read_text_file", new JsonObject().put("sessionId", sessionId)
            .put("path", Path.of(cwd, "missing.txt").toString()));
        report(sessionId, new JsonObject().put("write", write).put("read", read).put("missing", missing));
      }
      case "terminal" -> {
        JsonObject small = terminal(sessionId, "sh", new JsonArray().add("-c").add("printf '%0.s\u00e9' $(seq 1 100)"), 51);
        String id = small.getJsonObject("result").getString("terminalId");
        JsonObject exit = request("terminal/wait_for_exit", new JsonObject().put("sessionId", sessionId)
            .put("terminalId", id));
        JsonObject output = request("terminal/output", new JsonObject().put("sessionId", sessionId)
            .put("terminalId", id));
        String sleeper = terminal(sessionId, "sleep", new JsonArray().add("31.5"), 100)
            .getJsonObject("result").getString("terminalId");
        request("terminal/kill", new JsonObject().put("sessionId", sessionId).put("terminalId", sleeper));
        JsonObject killed = request("terminal/wait_for_exit", new JsonObject().put("sessionId", sessionId)
            .put("terminalId", sleeper));
        terminal(sessionId, "sleep", new JsonArray().add("32.5"), 100); // left running on purpose
        JsonObject outside = terminal(sessionId, "pwd", new JsonArray(), 100, "/");
        report(sessionId, new JsonObject().put("exit", exit).put("output", output).put("killed", killed)
            .put("outside", outside));
      }
      case "escape" -> {
        Path link = Path.of(cwd, "etc-link");
        Files.deleteIfExists(link);
        Files.createSymbolicLink(link, Path.of("/etc"));
        JsonObject results = new JsonObject();
        for (String path : new String[] {cwd + "/../outside.txt", "/etc/passwd", link + "/passwd"}) {
          results.put("read " + path.replace(cwd, "<ws>"), request("fs/read_text_file",
              new JsonObject().put("sessionId", sessionId).put("path", path)));
        }
        results.put("write ../x", request("fs/write_text_file", new JsonObject().put("sessionId", sessionId)
            .put("path", cwd + "/../x").put("content", "x")));
        results.put("write link", request("fs/write_text_file", new JsonObject().put("sessionId", sessionId)
            .put("path", link + "/switchboard-escape").put("content", "x")));
        report(sessionId, results);
      }
      default -> send(chunk(sessionId, "fresh answer"));
    }
    return new JsonObject().put("stopReason", "end_turn");
  }

  private JsonObject terminal(String sessionId, String command, JsonArray args, int limit) throws Exception {
    return terminal(sessionId, command, args, limit, null);
  }

  private JsonObject terminal(String sessionId, String command, JsonArray args, int limit, String dir)
      throws Exception {
    JsonObject params = new JsonObject().put("sessionId", sessionId).put("command", command).put("args", args)
        .put("outputByteLimit", limit);
    if (dir != null) {
      params.put("cwd", dir);
    }
    return request("terminal/create", params);
  }

  private void report(String sessionId, JsonObject what) {
    send(chunk(sessionId, "REPORT:" + what.encode() + "\n"));
  }

}
