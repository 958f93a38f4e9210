package io.switchboard.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.LoopbackPushService;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jar stopped with SIGTERM while {@code end} pushes are at a push service that takes its time
 * to answer (issue 43, point 7): first an end the person's answer made; then the ends the stop itself
 * makes, cancelling three waiting cards, queued at that one service. The stop waits for the send
 * under way and records the service's 201, starts no other (they go after the start), so the
 * device has each end exactly once. Each check is the next card: the device's pushes go out in
 * order, so an end still due, or due again, would come before it.
 */
class PushStopIT {
  /** Long enough that the SIGTERM surely lands while the service holds the answer; short of the 10 s send timeout. */
  static final long SLOW_ANSWER_MS = 3_000;
  /**
   * The stop's three ends answered this slowly would take longer than the stop's bounded wait (12 s)
   * if it sent them all: a send cut then reached the service, was logged as failed and went again.
   */
  static final long SLOWER_ANSWER_MS = 4_500;

  @TempDir
  Path dir;
  Process gateway;
  Vertx vertx = Vertx.vertx();
  LoopbackPushService service;
  LoopbackPushService.Subscriber phone;

  @AfterEach
  void stop() throws Exception {
    if (gateway != null) {
      gateway.destroyForcibly();
    }
    if (service != null) {
      service.close();
    }
    vertx.close().await();
  }

  @Test
  void aSigtermWhileEndPushesAreInFlightSendsEachOnce() throws Exception {
    Path file = dir.resolve("switchboard.json");
    Files.writeString(file, new JsonObject()
        .put("http", new JsonObject().put("port", 0))
        .put("dataDir", dir.resolve("data").toString())
        .put("agents", new JsonArray().add(new JsonObject().put("id", "demo").put("builtin", "demo")
            .put("env", new JsonObject().put("DEMO_AGENT_DELAY_MS", "3"))))
        .put("attention", new JsonObject().put("remindAfter", "30m")) // no reminder among the pushes counted
        .encodePrettily());
    JarGateway first = JarGateway.start(dir, file);
    gateway = first.process();
    String token = first.token();
    ChatClient page = ChatClient.open(vertx, first.port(), token);
    String key = page.next("welcome").getJsonObject("push").getString("publicKey");
    service = LoopbackPushService.start(Base64.getUrlDecoder().decode(key));
    phone = service.newSubscriber().answer(201, null).answerAfter(SLOW_ANSWER_MS, 201);
    page.send(new JsonObject().put("type", "push_subscribe").put("subscription", phone.subscription()));
    page.next("push_subscribed");

    // An end the person's answer made, at the service when the SIGTERM comes.
    String one = card(page, 1);
    page.send(new JsonObject().put("type", "permission_answer").put("requestId", one).put("optionId", "allow-once"));
    service.awaitReceived(2, Duration.ofSeconds(30)); // taken; its 201 comes SLOW_ANSWER_MS later
    page = restart(page, file, token);
    String two = card(page, 3);
    assertEquals(List.of("card " + one, "end " + one, "card " + two), pushes(), "the end once, before the next card");

    // Three ends the stop makes (it cancels the waiting cards), each answered slowly while it stops.
    String three = card(page, 4);
    String four = card(page, 5);
    phone.answerAfter(SLOWER_ANSWER_MS, 201).answerAfter(SLOWER_ANSWER_MS, 201).answerAfter(SLOWER_ANSWER_MS, 201);
    page = restart(page, file, token);
    card(page, 9); // ends two, three and four before it, each once
    assertEquals(List.of("card " + one, "end " + one, "card " + two, "card " + three, "card " + four),
        pushes().subList(0, 5));
    assertEquals(Set.of("end " + two, "end " + three, "end " + four), Set.copyOf(pushes().subList(5, 8)),
        "each end the stop made once (in any order): " + pushes());
    assertEquals(9, service.requests(), "nothing else reached the service: " + pushes());
    assertTrue(service.rejected().isEmpty(), service.rejected().toString());
  }

  /**
   * SIGTERM (a clean stop, exit 0), then the same data directory started again; a page on it. The
   * answers still scripted are dropped once it stopped: whatever is sent after the start gets 201 at once.
   */
  private ChatClient restart(ChatClient page, Path file, String token) throws Exception {
    page.close();
    gateway.destroy(); // SIGTERM
    assertTrue(gateway.waitFor(60, TimeUnit.SECONDS), "the gateway stopped");
    assertEquals(0, gateway.exitValue(), "a clean stop");
    phone.unscripted();
    JarGateway next = JarGateway.start(dir, file);
    gateway = next.process();
    ChatClient again = ChatClient.open(vertx, next.port(), token);
    again.next("welcome");
    return again;
  }

  /** Prompts the demo agent in a new thread; returns the card's request id once the device has its push, the n-th. */
  private String card(ChatClient page, int n) throws Exception {
    page.send(new JsonObject().put("type", "new_thread").put("clientRef", "n" + n));
    String t = page.next("thread").getString("threadId");
    page.send(new JsonObject().put("type", "attach").put("threadId", t));
    page.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "note this"));
    String requestId = page.next("permission_request").getString("requestId");
    JsonObject pushed = new JsonObject(service.awaitReceived(n, Duration.ofSeconds(30)).get(n - 1).text());
    assertEquals("card " + requestId, pushed.getString("type") + " " + pushed.getString("requestId"),
        "the device's push number " + n + ": " + pushes());
    return requestId;
  }

  private List<String> pushes() {
    return service.received().stream().map(r -> new JsonObject(r.text()))
        .map(p -> p.getString("type") + " " + p.getString("requestId")).toList();
  }
}
