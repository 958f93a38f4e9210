package io.switchboard.web;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * How long a connection may take to send a whole request: from its opening, or from its previous
 * response's end. A client that trickles its headers or body (one byte a minute stays under the
 * idle timeout) holds a descriptor for that long at most, as a keep-alive connection left idle does.
 * Written here because vertx-web's {@code TimeoutHandler} times the answer, not the request's arrival.
 */
final class RequestDeadlines {
  private final Vertx vertx;
  private final long requestReadMs;
  /** Connections whose next request has not arrived in full, and the timer that closes them. */
  private final Map<HttpConnection, Long> awaitingRequest = new HashMap<>();
  /** Connections that became chat sockets: never held to the request deadline again. */
  private final Set<HttpConnection> upgraded = new HashSet<>();

  RequestDeadlines(Vertx vertx, long requestReadMs) {
    this.vertx = vertx;
    this.requestReadMs = requestReadMs;
  }

  /** Starts the deadline for a connection's next request to arrive in full. */
  void awaitRequest(HttpConnection connection) {
    if (upgraded.contains(connection)) {
      return;
    }
    long timer = vertx.setTimer(requestReadMs, t -> {
      if (awaitingRequest.remove(connection) != null) {
        connection.close();
      }
    });
    Long earlier = awaitingRequest.put(connection, timer);
    if (earlier == null) {
      connection.closeHandler(v -> {
        requestRead(connection);
        upgraded.remove(connection);
      });
    } else {
      vertx.cancelTimer(earlier);
    }
  }

  /** A request is in: its connection's deadline is lifted (read in full, the headers and the body if any). */
  void requestIn(HttpServerRequest request) {
    HttpConnection connection = request.connection();
    arrived(request).onComplete(x -> requestRead(connection));
  }

  /** The connection became a chat socket: no request deadline from now on. */
  void upgraded(HttpConnection connection) {
    upgraded.add(connection);
    requestRead(connection);
  }

  private void requestRead(HttpConnection connection) {
    Long timer = awaitingRequest.remove(connection);
    if (timer != null) {
      vertx.cancelTimer(timer);
    }
  }

  /**
   * When a request has arrived whole: a GET or HEAD (the chat socket's upgrade among them) once its
   * headers are in; another once its body is. (A paused, then upgraded, request may never "end".)
   */
  private static Future<Void> arrived(HttpServerRequest request) {
    // A body a handler already read (the login's) has arrived: asking for its end again is refused.
    return request.method() == HttpMethod.GET || request.method() == HttpMethod.HEAD || request.isEnded()
        ? Future.succeededFuture() : request.end();
  }

  /**
   * Once answered, a kept-alive connection has the same time for its next request. Only a connection
   * that became a web socket (101) never does: an Upgrade header alone (a refused upgrade, or one
   * sent to any route) changes nothing.
   */
  void awaitNextRequest(RoutingContext ctx) {
    HttpConnection connection = ctx.request().connection();
    // After this request's end too (it may come after the answer): that lifts its own deadline.
    ctx.addEndHandler(x -> {
      if (ctx.response().getStatusCode() != 101) {
        arrived(ctx.request()).onComplete(y -> awaitRequest(connection));
      }
    });
    ctx.next();
  }
}
