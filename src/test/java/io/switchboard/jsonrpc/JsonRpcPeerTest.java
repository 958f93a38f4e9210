package io.switchboard.jsonrpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class JsonRpcPeerTest {
  final List<JsonObject> written = new ArrayList<>();
  final List<String> notifications = new ArrayList<>();
  final JsonRpcPeer peer = new JsonRpcPeer("test", line -> {
    written.add(new JsonObject(line));
    return Future.succeededFuture();
  });

  {
    peer.handler(new JsonRpcPeer.Handler() {
      @Override
      public Future<Object> request(String method, Object params) {
        return switch (method) {
          case "echo" -> Future.succeededFuture(params);
          case "boom" -> throw new IllegalStateException("kaboom");
          default -> Future.failedFuture(new JsonRpcError(JsonRpcError.METHOD_NOT_FOUND, "no " + method));
        };
      }

      @Override
      public void notification(String method, Object params) {
        notifications.add(method);
      }
    });
  }

  @Test
  void idsArePerDirection() {
    Future<Object> ours = peer.request("initialize", new JsonObject());
    assertEquals(0, written.get(0).getInteger("id"));
    // The peer numbers its own requests from 0 too: a request with id 0 is not our answer.
    peer.receive("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"echo\",\"params\":{\"x\":1}}");
    assertTrue(!ours.isComplete());
    assertEquals(new JsonObject().put("x", 1), written.get(1).getJsonObject("result"));
    assertEquals(0, written.get(1).getInteger("id"));
    peer.receive("{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"ok\":true}}");
    assertEquals(new JsonObject().put("ok", true), ours.result());
  }

  /** A request the gateway gives up on is withdrawn from the agent ($/cancel_request), and its late answer ignored. */
  @Test
  void anAbandonedRequestIsWithdrawnFromThePeerOnceAndItsLateAnswerIgnored() {
    io.vertx.core.Promise<Void> giveUp = io.vertx.core.Promise.promise();
    Future<Object> abandoned = peer.request("session/list", new JsonObject(), giveUp.future());
    Future<Object> other = peer.request("session/new", new JsonObject(), io.vertx.core.Promise.<Void>promise().future());
    giveUp.complete();
    assertTrue(abandoned.failed() && abandoned.cause().getMessage().contains("gave up"), String.valueOf(abandoned));
    assertEquals(new JsonObject().put("jsonrpc", "2.0").put("method", "$/cancel_request")
        .put("params", new JsonObject().put("requestId", 0)), written.get(2));
    peer.receive("{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"sessions\":[]}}"); // too late: nothing waits
    assertEquals(1, peer.pendingRequests(), "only the other request still waits");
    peer.receive("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sessionId\":\"s\"}}");
    assertEquals(new JsonObject().put("sessionId", "s"), other.result());
    giveUp.tryComplete();
    assertEquals(3, written.size(), "one withdrawal, not two");
  }

  @Test
  void errorResponsesFailTheRequestWithTheirCode() {
    Future<Object> ours = peer.request("session/prompt", new JsonObject());
    peer.receive("{\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{\"code\":-32000,\"message\":\"Authentication required\"}}");
    assertEquals(-32000, ((JsonRpcError) ours.cause()).code());
    Future<Object> odd = peer.request("x", null);
    peer.receive("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":500,\"message\":\"odd\"}}");
    assertEquals(500, ((JsonRpcError) odd.cause()).code());
  }

  @Test
  void unknownMethodsAndFailingHandlersAreAnswered() {
    peer.receive("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"nope\"}");
    assertEquals(-32601, written.get(0).getJsonObject("error").getInteger("code"));
    assertEquals("a", written.get(0).getString("id"));
    peer.receive("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"boom\"}");
    assertEquals(-32603, written.get(1).getJsonObject("error").getInteger("code"));
  }

  @Test
  void malformedLinesAreSkippedAndAnsweredOnlyWithAnId() {
    peer.receive("not json at all");
    peer.receive("[1,2,3]");
    peer.receive("{\"jsonrpc\":\"2.0\"}");
    assertEquals(0, written.size());
    peer.receive("{\"jsonrpc\":\"2.0\",\"id\":7}");
    peer.receive("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":42}");
    assertEquals(List.of(-32600, -32600), written.stream().map(w -> w.getJsonObject("error").getInteger("code")).toList());
    assertEquals(List.of(7, 8), written.stream().map(w -> w.getInteger("id")).toList());
    peer.receive("{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{}}");
    assertEquals(List.of("session/update"), notifications);
  }

  @Test
  void closingFailsWhatIsStillWaiting() {
    Future<Object> waiting = peer.request("session/prompt", new JsonObject());
    peer.close("the agent exited");
    assertTrue(waiting.failed());
    assertTrue(waiting.cause().getMessage().contains("exited"));
    assertTrue(peer.request("x", null).failed());
  }
}
