package io.switchboard.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.Peers;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The real example agent of the ACP TypeScript SDK (npm, 1.9.0), driven through the rooms. */
@ExtendWith(VertxExtension.class)
class SdkExampleAgentTest {
  @TempDir
  Path dir;
  AgentHarness gateway;
  String t;

  @BeforeEach
  void start(Vertx vertx) {
    gateway = new AgentHarness(vertx, dir, new AgentRoom.Timings(30_000, 5_000),
        // In the sandbox, always: a real agent must run its whole turns confined.
        AgentHarness.command("example", Peers.sdkExampleAgent()).withSandbox(io.switchboard.process.Sandbox.Mode.BWRAP))
        .start();
    t = gateway.thread("example", "web");
  }

  @AfterEach
  void stop() {
    gateway.close();
  }

  @Test
  void allow() {
    gateway.prompt(t, "please change the config");
    JsonObject card = gateway.awaitCard(t, 1);
    JsonObject toolCall = card.getJsonObject("toolCall");
    assertEquals("call_2", toolCall.getString("toolCallId"));
    assertEquals("edit", toolCall.getString("kind"));
    gateway.answer(card.getString("requestId"), "allow");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    assertTrue(gateway.text(t).contains("successfully updated the configuration"), gateway.text(t));
  }

  @Test
  void reject() {
    gateway.prompt(t, "please change the config");
    gateway.answer(gateway.awaitCard(t, 1).getString("requestId"), "reject");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 1));
    assertTrue(gateway.text(t).contains("skip the configuration update"), gateway.text(t));
  }

  @Test
  void cancelAtThePermissionPrompt() {
    gateway.prompt(t, "please change the config");
    String requestId = gateway.awaitCard(t, 1).getString("requestId");
    gateway.cancel(t);
    // This agent answers end_turn when cancelled at the prompt: any result after a cancel ends the turn.
    gateway.awaitTurnEnd(t, 1);
    PermissionHarnessBridge.waitForEnd(gateway, requestId, "session-cancelled");
    assertTrue(!gateway.text(t).contains("successfully updated"), gateway.text(t));
  }

  @Test
  void cancelMidTurn() {
    gateway.prompt(t, "please change the config");
    gateway.awaitEvent(t, e -> "acp".equals(e.getString("kind")), "the first chunk");
    gateway.cancel(t);
    assertEquals("cancelled", gateway.awaitTurnEnd(t, 1));
    assertTrue(gateway.cards.isEmpty(), "no permission was asked");
    // The thread goes on: the next prompt runs a whole turn.
    gateway.prompt(t, "again");
    gateway.answer(gateway.awaitCard(t, 1).getString("requestId"), "allow");
    assertEquals("end_turn", gateway.awaitTurnEnd(t, 2));
  }
}
