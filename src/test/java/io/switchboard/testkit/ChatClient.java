package io.switchboard.testkit;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** A /ws/chat client for protocol tests: sends frames, and waits for the frames it receives. */
public final class ChatClient implements AutoCloseable {
  private final WebSocketClient client; // a field: a client held in a local is collected mid-handshake
  public final WebSocket ws;
  private final LinkedBlockingQueue<JsonObject> inbox = new LinkedBlockingQueue<>();
  public final List<JsonObject> seen = new ArrayList<>();
  public volatile Short closeCode;
  public volatile String closeReason;

  private ChatClient(WebSocketClient client, WebSocket ws) {
    this.client = client;
    this.ws = ws;
    ws.textMessageHandler(t -> inbox.add(new JsonObject(t)));
    ws.closeHandler(v -> {
      closeCode = ws.closeStatusCode();
      closeReason = ws.closeReason();
    });
  }

  /** Connects with a bearer token (or none) and an Origin header (or none); fails with the HTTP status. */
  public static Future<ChatClient> connect(Vertx vertx, int port, String bearer, String origin) {
    WebSocketClient client = vertx.createWebSocketClient(new io.vertx.core.http.WebSocketClientOptions()
        .setMaxFrameSize(16 * 1024 * 1024).setMaxMessageSize(16 * 1024 * 1024));
    WebSocketConnectOptions options = new WebSocketConnectOptions().setHost("127.0.0.1").setPort(port)
        .setURI("/ws/chat");
    if (bearer != null) {
      options.addHeader("Authorization", "Bearer " + bearer);
    }
    if (origin != null) {
      options.addHeader("Origin", origin);
    }
    return client.connect(options).map(ws -> new ChatClient(client, ws));
  }

  public static ChatClient open(Vertx vertx, int port, String bearer) {
    return PermissionHarness.await(connect(vertx, port, bearer, "http://127.0.0.1:" + port));
  }

  public ChatClient send(JsonObject frame) {
    PermissionHarness.await(ws.writeTextMessage(frame.encode()));
    return this;
  }

  public ChatClient send(String raw) {
    PermissionHarness.await(ws.writeTextMessage(raw));
    return this;
  }

  /** The next frame matching {@code which}, skipping (but keeping in {@link #seen}) the others. */
  public JsonObject next(Predicate<JsonObject> which, String what) {
    return next(which, what, 20);
  }

  /** The same, waiting at most {@code seconds}. */
  public JsonObject next(Predicate<JsonObject> which, String what, long seconds) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    try {
      while (System.nanoTime() < deadline) {
        JsonObject f = inbox.poll(100, TimeUnit.MILLISECONDS);
        if (f != null) {
          seen.add(f);
          if (which.test(f)) {
            return f;
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    throw new AssertionError("no " + what + " frame came; saw " + seen);
  }

  public JsonObject next(String type) {
    return next(f -> type.equals(f.getString("type")), type);
  }

  /** Frames received so far without waiting. */
  public List<JsonObject> drain() {
    List<JsonObject> out = new ArrayList<>();
    inbox.drainTo(out);
    seen.addAll(out);
    return out;
  }

  @Override
  public void close() {
    if (!ws.isClosed()) {
      ws.close();
    }
    client.close();
  }
}
