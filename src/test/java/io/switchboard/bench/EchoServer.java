package io.switchboard.bench;

import io.vertx.core.Vertx;
import java.util.concurrent.TimeUnit;

/**
 * The baseline for the load benchmark: a bare Vert.x WebSocket server that echoes every text frame,
 * run as a process of its own with the gateway's JVM flags. Prints {@code port N}; stops when its
 * stdin closes.
 */
public final class EchoServer {
  public static void main(String[] args) throws Exception {
    Vertx vertx = Vertx.vertx();
    var server = vertx.createHttpServer().webSocketHandler(ws -> ws.textMessageHandler(ws::writeTextMessage))
        .listen(0, "127.0.0.1").await(10, TimeUnit.SECONDS);
    System.out.println("port " + server.actualPort());
    System.out.flush();
    while (System.in.read() >= 0) {
      // runs until the benchmark closes our stdin
    }
    vertx.close().await(10, TimeUnit.SECONDS);
  }
}
