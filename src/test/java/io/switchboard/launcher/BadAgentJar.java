package io.switchboard.launcher;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/** The real jar with one scripted bad agent (src/test/badpeers/bad-agent.js) as its default agent. */
abstract class BadAgentJar {
  static final Path SCRIPT = Path.of("src", "test", "badpeers", "bad-agent.js").toAbsolutePath();

  @TempDir
  Path dir;
  Process gateway;
  final Vertx vertx = Vertx.vertx();

  @AfterEach
  void stopGateway() {
    if (gateway != null) {
      gateway.destroyForcibly();
    }
    PermissionHarness.await(vertx.close());
  }

  /** Writes the config: the agent runs the script in {@code mode}, with {@code extra} fields (env, sandbox). */
  Path config(String mode, JsonObject extra) throws Exception {
    JsonObject agent = new JsonObject().put("id", mode)
        .put("command", new JsonArray().add("node").add(SCRIPT.toString()).add(mode)).mergeIn(extra);
    JsonObject config = new JsonObject().put("http", new JsonObject().put("port", 0))
        .put("dataDir", dir.resolve("data").toString()).put("defaultAgent", mode)
        .put("agents", new JsonArray().add(agent));
    Path file = dir.resolve("switchboard.json");
    Files.writeString(file, config.encode());
    return file;
  }

  JarGateway start(Path config, List<String> jvmFlags) throws Exception {
    return start(config, jvmFlags, 0);
  }

  JarGateway start(Path config, List<String> jvmFlags, int port) throws Exception {
    JarGateway started = JarGateway.start(dir, config, jvmFlags, port);
    gateway = started.process();
    if (token == null) {
      token = started.token(); // only the first start on the data directory prints it
    }
    return started;
  }

  private String token;

  String token() {
    return token;
  }

  /** The text of an agent message chunk frame, or "". */
  static String chunk(JsonObject f) {
    JsonObject event = f.getJsonObject("event");
    if ("event".equals(f.getString("type")) && event != null && "acp".equals(event.getString("kind"))
        && "agent_message_chunk".equals(event.getJsonObject("update").getString("sessionUpdate"))) {
      return event.getJsonObject("update").getJsonObject("content").getString("text", "");
    }
    return "";
  }

  /** The first REPORT line the agent wrote in the frames seen. */
  static JsonObject report(List<JsonObject> frames) {
    StringBuilder text = new StringBuilder();
    for (JsonObject f : frames) {
      JsonObject event = f.getJsonObject("event");
      if ("event".equals(f.getString("type")) && "acp".equals(event.getString("kind"))
          && "agent_message_chunk".equals(event.getJsonObject("update").getString("sessionUpdate"))) {
        text.append(event.getJsonObject("update").getJsonObject("content").getString("text"));
      }
    }
    int at = text.indexOf("REPORT:");
    assertTrue(at >= 0, "no report in " + text);
    return new JsonObject(text.substring(at + 7, text.indexOf("\n", at)));
  }
}
