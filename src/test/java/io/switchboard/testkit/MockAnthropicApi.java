package io.switchboard.testkit;

import static io.switchboard.testkit.PermissionHarness.await;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A stand-in for Anthropic's Messages API on loopback, for Claude Code as {@code ANTHROPIC_BASE_URL}:
 * every message is answered with {@code reply} (streamed as the API streams, event by event, when
 * asked to), and every request body is kept to read what the model was sent.
 */
public final class MockAnthropicApi implements AutoCloseable {
  /** The bodies of the {@code /v1/messages} requests, in order. */
  public final List<JsonObject> requests = new CopyOnWriteArrayList<>();
  private final String reply;
  private final HttpServer server;

  private MockAnthropicApi(Vertx vertx, String reply) {
    this.reply = reply;
    this.server = vertx.createHttpServer().requestHandler(this::handle);
  }

  public static MockAnthropicApi start(Vertx vertx, String reply) {
    MockAnthropicApi api = new MockAnthropicApi(vertx, reply);
    await(api.server.listen(0, "127.0.0.1"));
    return api;
  }

  public String baseUrl() {
    return "http://127.0.0.1:" + server.actualPort();
  }

  /** The text of every message of request {@code n} (0-based), joined: what the model was shown. */
  public String conversation(int n) {
    StringBuilder all = new StringBuilder();
    for (Object m : requests.get(n).getJsonArray("messages", new JsonArray())) {
      Object content = ((JsonObject) m).getValue("content");
      if (content instanceof String s) {
        all.append(s).append('\n');
      } else if (content instanceof JsonArray blocks) {
        for (Object b : blocks) {
          all.append(((JsonObject) b).getString("text", "")).append('\n');
        }
      }
    }
    return all.toString();
  }

  private void handle(HttpServerRequest req) {
    String path = req.path();
    if (!path.startsWith("/v1/messages")) {
      req.response().end(); // Claude Code's reachability check (HEAD /)
      return;
    }
    req.body().onSuccess(buffer -> {
      JsonObject body = buffer.length() == 0 ? new JsonObject() : buffer.toJsonObject();
      if (path.equals("/v1/messages/count_tokens")) {
        req.response().putHeader("content-type", "application/json").end(new JsonObject().put("input_tokens", 10).encode());
        return;
      }
      requests.add(body);
      JsonObject message = new JsonObject().put("id", "msg_mock_" + requests.size()).put("type", "message")
          .put("role", "assistant").put("model", body.getString("model", "mock")).put("content", new JsonArray())
          .put("stop_reason", null).put("stop_sequence", null)
          .put("usage", new JsonObject().put("input_tokens", 10).put("output_tokens", 1));
      if (!body.getBoolean("stream", false)) {
        message.put("content", new JsonArray().add(new JsonObject().put("type", "text").put("text", reply)))
            .put("stop_reason", "end_turn");
        req.response().putHeader("content-type", "application/json").end(message.encode());
        return;
      }
      StringBuilder events = new StringBuilder();
      event(events, "message_start", new JsonObject().put("message", message));
      event(events, "content_block_start", new JsonObject().put("index", 0)
          .put("content_block", new JsonObject().put("type", "text").put("text", "")));
      event(events, "content_block_delta", new JsonObject().put("index", 0)
          .put("delta", new JsonObject().put("type", "text_delta").put("text", reply)));
      event(events, "content_block_stop", new JsonObject().put("index", 0));
      event(events, "message_delta", new JsonObject()
          .put("delta", new JsonObject().put("stop_reason", "end_turn").put("stop_sequence", null))
          .put("usage", new JsonObject().put("output_tokens", 5)));
      event(events, "message_stop", new JsonObject());
      req.response().putHeader("content-type", "text/event-stream").putHeader("cache-control", "no-cache")
          .end(events.toString());
    });
  }

  private static void event(StringBuilder out, String type, JsonObject data) {
    out.append("event: ").append(type).append('\n')
        .append("data: ").append(new JsonObject().put("type", type).mergeIn(data).encode()).append("\n\n");
  }

  @Override
  public void close() {
    await(server.close());
  }
}
