package io.switchboard.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.LoopbackPushService;
import io.switchboard.testkit.PluginControl;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jar with a reminder configured and a device subscribed to pushes: a card is pushed and
 * reminded of once in the chat; the gateway is SIGKILLed mid-plan and started again. Its agent
 * died with it, so the request ends once (voided by the restart): the chat and the device learn
 * it, no step is repeated, and none runs late for a request that is over.
 */
class AttentionRestartIT {
  @TempDir
  Path dir;
  Process gateway;
  Vertx vertx = Vertx.vertx();
  LoopbackPushService service;

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
  void aSigkillMidPlanRepeatsNoStepAndEndsTheRequestOnce() throws Exception {
    PluginControl plugin = new PluginControl(dir.resolve("fake"));
    JsonObject config = plugin.gatewayConfig(dir.resolve("data"), "no-ack")
        .put("attention", new JsonObject().put("remindAfter", "2s").put("deadline", "10m"));
    Path file = dir.resolve("switchboard.json");
    Files.writeString(file, config.encodePrettily());
    JarGateway first = JarGateway.start(dir, file);
    gateway = first.process();
    plugin.awaitType("initialized", 1);

    ChatClient page = ChatClient.open(vertx, first.port(), first.token());
    String key = page.next("welcome").getJsonObject("push").getString("publicKey");
    service = LoopbackPushService.start(Base64.getUrlDecoder().decode(key));
    LoopbackPushService.Subscriber phone = service.newSubscriber();
    page.send(new JsonObject().put("type", "push_subscribe").put("subscription", phone.subscription()));
    page.next("push_subscribed");
    page.close(); // the only page is closed: the device and the chat are what is left

    plugin.prompt("42", "42", "edit something");
    JsonObject card = plugin.awaitType("card", 1);
    String requestId = card.getJsonObject("params").getJsonObject("_meta").getJsonObject("switchboard")
        .getString("requestId");
    assertTrue(card.getJsonObject("params").getJsonObject("toolCall").getString("title").contains("expires at"),
        "the chat's card shows its deadline");
    JsonObject pushed = new JsonObject(service.awaitReceived(1, Duration.ofSeconds(30)).get(0).text());
    assertEquals(requestId, pushed.getString("requestId"), "the device got the card as a push");
    assertTrue(pushed.getString("body").contains("Expires at"), "the push shows the deadline: " + pushed);
    plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && "reminder".equals(r.getJsonObject("params").getString("kind")), 1, "the reminder in the chat");
    assertEquals("remind", new JsonObject(service.awaitReceived(2, Duration.ofSeconds(30)).get(1).text())
        .getString("type"), "and pushed");

    gateway.destroyForcibly(); // SIGKILL mid-plan: the reminder shown but never acknowledged
    assertTrue(gateway.waitFor(20, TimeUnit.SECONDS));
    gateway = JarGateway.start(dir, file).process();
    plugin.awaitType("initialized", 2);

    JsonObject end = plugin.await(PluginControl.method("_switchboard/permission_resolved"), 1, "the card's end");
    assertEquals("voided-by-restart", end.getJsonObject("params").getJsonObject("outcome").getString("reason"));
    JsonObject closed = new JsonObject(service.awaitReceived(3, Duration.ofSeconds(30)).get(2).text());
    assertEquals(new JsonObject().put("type", "end").put("requestId", requestId), closed,
        "the device's notification is closed");
    Thread.sleep(2_500); // past the next reminder's time (2 s), had the plan run on
    assertEquals(1, plugin.received(r -> "_switchboard/text".equals(r.getString("method"))
        && "reminder".equals(r.getJsonObject("params").getString("kind"))).size(),
        "one reminder: not sent again after the restart, and no later step for an ended request");
    assertEquals(1, plugin.received(PluginControl.method("_switchboard/permission_resolved")).size());
    assertEquals(List.of("card", "remind", "end"), service.received().stream()
        .map(r -> new JsonObject(r.text()).getString("type")).toList(), "each push once");

    Process ledger = new ProcessBuilder("java", "-jar", JarGateway.JAR.toString(), "ledger", "--json",
        "--data-dir", dir.resolve("data").toString()).redirectErrorStream(true).start();
    JsonArray rows = new JsonArray(new String(ledger.getInputStream().readAllBytes()));
    assertTrue(ledger.waitFor(30, TimeUnit.SECONDS));
    List<String> events = rows.getJsonObject(0).getJsonArray("events").stream()
        .map(e -> ((JsonObject) e).getString("event")).toList();
    assertEquals(List.of("registered", "pushed", "reminded", "cancelled"), events, "each step once, one end");
  }
}
