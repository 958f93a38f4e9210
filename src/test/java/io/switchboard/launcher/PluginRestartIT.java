package io.switchboard.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.PluginControl;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGKILL the real gateway while outputs wait for a plugin's acknowledgement, start it again, and
 * check that nothing durable was lost: unacknowledged outputs come again with the same ids, and a
 * card whose request died with the gateway comes back as its end state, not as a question.
 */
class PluginRestartIT {

  @TempDir
  Path dir;
  Process gateway;

  @AfterEach
  void kill() {
    if (gateway != null) {
      gateway.destroyForcibly();
    }
  }

  private Process start(Path config) throws Exception {
    return JarGateway.start(dir, config).process();
  }

  @Test
  void nothingDurableIsLostAcrossAGatewaySigkill() throws Exception {
    PluginControl plugin = new PluginControl(dir.resolve("fake"));
    JsonObject config = plugin.gatewayConfig(dir.resolve("data"), "no-ack");
    Path file = dir.resolve("switchboard.json");
    Files.writeString(file, config.encodePrettily());

    gateway = start(file);
    plugin.awaitType("initialized", 1);
    plugin.prompt("42", "42", "/help");
    JsonObject help = plugin.await(r -> "_switchboard/text".equals(r.getString("method")), 1, "the help text");
    plugin.prompt("42", "42", "edit something");
    JsonObject card = plugin.awaitType("card", 1);
    String requestId = card.getJsonObject("params").getJsonObject("_meta").getJsonObject("switchboard")
        .getString("requestId");

    gateway.destroyForcibly(); // SIGKILL: no shutdown, nothing flushed on the way out
    assertTrue(gateway.waitFor(20, TimeUnit.SECONDS));
    gateway = start(file);
    plugin.awaitType("initialized", 2);

    // The help text was never acknowledged: it comes again, with the same output id.
    JsonObject again = plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").equals(help.getJsonObject("params").getString("text")),
        2, "the help text again");
    assertEquals(help.getJsonObject("params").getString("outputId"), again.getJsonObject("params").getString("outputId"));
    // The card's request died with the old process: the chat learns that, and is not asked again.
    JsonObject end = plugin.await(r -> "_switchboard/permission_resolved".equals(r.getString("method")), 1,
        "the card's end state");
    assertEquals(requestId, end.getJsonObject("params").getString("requestId"));
    assertEquals("voided-by-restart", end.getJsonObject("params").getJsonObject("outcome").getString("reason"));
    Thread.sleep(500);
    List<JsonObject> cards = plugin.received(r -> "card".equals(r.getString("type")));
    assertEquals(1, cards.size(), "the stale card was superseded, not replayed");
  }
}
