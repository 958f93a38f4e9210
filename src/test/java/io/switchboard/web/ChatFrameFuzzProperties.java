package io.switchboard.web;

import static io.switchboard.testkit.PermissionHarness.await;

import io.switchboard.bus.Addresses;
import io.switchboard.fuzz.Inputs;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;

/**
 * Hostile /ws/chat frames against the real gateway: each gets an answer, never a hang-up, and a
 * refused frame creates nothing (the thread count only grows by frames answered with a thread).
 */
class ChatFrameFuzzProperties {
  private Vertx vertx;
  private GatewayHarness gateway;
  private ChatClient socket;
  private String thread;

  @BeforeProperty
  void start() throws Exception {
    vertx = Vertx.vertx();
    gateway = new GatewayHarness(vertx, Files.createTempDirectory("sb-fuzz"), List.of(), AgentHarness.demo());
    socket = ChatClient.open(vertx, gateway.port, gateway.token);
    socket.next("welcome");
    thread = socket.send(new JsonObject().put("type", "new_thread")).next("thread").getString("threadId");
  }

  @AfterProperty
  void stop() {
    socket.close();
    gateway.close();
    await(vertx.close());
  }

  private int threads() {
    return await(vertx.eventBus().<JsonObject>request(Addresses.THREAD_LIST, new JsonObject())).body()
        .getJsonArray("threads").size();
  }

  @Property(tries = 400)
  void everyFrameIsAnsweredAndRefusedOnesChangeNothing(@ForAll("frames") String frame) {
    socket.send(frame);
    socket.send(new JsonObject().put("type", "ping"));
    socket.next("pong");
    if (socket.ws.isClosed()) {
      throw new AssertionError("the socket closed after " + frame);
    }
    // Answers may come after the pong (they wait on other rooms): every thread that exists must have
    // been announced by a "thread" answer, and every announced one must exist.
    // The bound is the harness's 20 s, not a speed claim: a new thread's answer waits on two fsynced writes.
    long deadline = System.currentTimeMillis() + 20_000;
    while (true) {
      socket.drain();
      // A page hears of each thread twice (its own answer, and the broadcast every page gets): count threads.
      long announced = socket.seen.stream().filter(f -> "thread".equals(f.getString("type")))
          .map(f -> f.getString("threadId")).distinct().count();
      if (threads() == announced) {
        return;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError(threads() + " threads but " + announced + " announced, after " + frame);
      }
      try {
        Thread.sleep(1); // frames take a moment: asking again at once only burns a core
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  @Provide
  Arbitrary<String> frames() {
    Arbitrary<String> nearMiss = Combinators.combine(
        Arbitraries.of("new_thread", "attach", "prompt", "cancel", "permission_answer", "ping", "nope", "",
            "changes", "commit", "merge", "discard", "keep", "sessions"),
        Inputs.field(List.of("t_unknown")), Inputs.field(List.of("hello")), Inputs.field(List.of("pr_x")),
        Inputs.json(1))
        .as((type, threadId, text, requestId, after) -> new JsonObject().put("type", type).put("threadId", threadId)
            .put("text", text).put("requestId", requestId).put("optionId", text).put("afterSeq", after)
            .put("agent", text).put("message", text).put("project", text).put("squash", after).encode());
    return Arbitraries.oneOf(Inputs.line(), nearMiss);
  }

}
