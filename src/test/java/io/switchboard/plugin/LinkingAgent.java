package io.switchboard.plugin;

import io.switchboard.testkit.StdioPeer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/**
 * An ACP agent that writes a report into its session's folder and links it ({@code resource_link}),
 * as a coding agent shows a file it made; {@code crash} makes it exit mid-turn. It can resume a
 * session ({@code sessionCapabilities.resume}), so a restart after a crash continues the same one.
 */
public final class LinkingAgent extends StdioPeer {
  private volatile String cwd = ".";

  public static void main(String[] args) throws Exception {
    new LinkingAgent().run();
  }

  @Override
  protected Object handle(String method, JsonObject params) throws Exception {
    switch (method) {
      case "initialize":
        return new JsonObject().put("protocolVersion", 1).put("authMethods", new JsonArray())
            .put("agentCapabilities", new JsonObject().put("loadSession", false)
                .put("sessionCapabilities", new JsonObject().put("resume", new JsonObject())));
      case "session/new":
        cwd = params.getString("cwd");
        return new JsonObject().put("sessionId", "linker-" + UUID.randomUUID());
      case "session/resume":
        cwd = params.getString("cwd");
        return new JsonObject();
      case "session/prompt":
        String session = params.getString("sessionId");
        String text = params.getJsonArray("prompt").getJsonObject(0).getString("text");
        if (text.equals("crash")) {
          send(chunk(session, "going down"));
          Thread.sleep(200);
          System.exit(3);
        }
        Path report = Path.of(cwd, "report.txt");
        Files.writeString(report, "the report on: " + text + "\n");
        send(chunk(session, "I wrote the report: "));
        send(new JsonObject().put("jsonrpc", "2.0").put("method", "session/update").put("params", new JsonObject()
            .put("sessionId", session).put("update", new JsonObject().put("sessionUpdate", "agent_message_chunk")
                .put("content", new JsonObject().put("type", "resource_link").put("uri", report.toUri().toString())
                    .put("name", "report.txt").put("mimeType", "text/plain")))));
        return new JsonObject().put("stopReason", "end_turn");
      default:
        return new JsonObject();
    }
  }
}
