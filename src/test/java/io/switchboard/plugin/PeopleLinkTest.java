package io.switchboard.plugin;

import static io.switchboard.testkit.PermissionHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.config.PluginSpec;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.switchboard.testkit.PluginControl;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Linking a chat account to a person (issue 44), through the real plugin room, a fake plugin over
 * real pipes and a real page socket: on a plugin that requires linked accounts, an unlinked
 * account's tap is refused (the chat told how to link, the ledger noting the refusal); /link in a
 * group shows no code; /link in a direct message shows one, a wrong or reused code on the page is
 * refused naming why, the right one links the account to the page's person (the chat hears it), and
 * the same tap then ends the request, its ledger row naming the person and "chat".
 */
@ExtendWith(VertxExtension.class)
class PeopleLinkTest {
  @TempDir
  Path dir;
  GatewayHarness gateway;

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
  }

  private static JsonObject text(PluginControl plugin, String starting, int n) {
    return plugin.await(r -> "_switchboard/text".equals(r.getString("method"))
        && r.getJsonObject("params").getString("text").startsWith(starting), n, "a text starting \"" + starting + "\"");
  }

  @Test
  void anUnlinkedTapIsRefusedAndAfterLinkTheSameTapEndsTheRequestNamingThePerson(Vertx vertx) throws Exception {
    PluginControl plugin = new PluginControl(dir.resolve("fake"));
    PluginSpec open = plugin.spec("fake", "acp", List.of());
    PluginSpec linkedOnly = new PluginSpec(open.id(), open.dialect(), open.command(), open.cwd(), open.env(),
        open.config(), open.approvers(), open.agent(), open.cardsInGroups(), open.users(), true);
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(), List.of(linkedOnly),
        PluginRoom.Timings.DEFAULT, AgentHarness.demo());
    plugin.awaitType("initialized", 1);

    plugin.prompt("42", "42", "edit something");
    JsonObject card = plugin.awaitType("card", 1);
    String requestId = card.getJsonObject("params").getJsonObject("_meta").getJsonObject("switchboard")
        .getString("requestId");
    plugin.tap(card.getString("key"), "allow-once", "42");
    JsonObject refused = text(plugin, "This chat account is not linked to a person", 1);
    assertTrue(refused.getJsonObject("params").getString("text").contains("send /link"), refused.encode());
    JsonObject again = plugin.awaitType("card", 2); // asked again, for someone who may answer

    // In a group, no code: anyone there could type it on their own page.
    plugin.act(new JsonObject().put("prompt", "/link").put("chat", "g1").put("sender", "42").put("scope", "group"));
    text(plugin, "Send /link to me in a direct message", 1);
    plugin.prompt("42", "42", "/link");
    String words = text(plugin, "Your link code is", 1).getJsonObject("params").getString("text");
    Matcher m = Pattern.compile("Your link code is ([A-Z0-9]{4}-[A-Z0-9]{4})").matcher(words);
    assertTrue(m.find(), words);
    String code = m.group(1);

    ChatClient page = ChatClient.open(vertx, gateway.port, gateway.token);
    page.next("welcome");
    for (String wrong : List.of("AAAA-AAAA", code.substring(0, 8) + "Z")) {
      page.send(new JsonObject().put("type", "link_chat").put("code", wrong).put("clientRef", "w"));
      JsonObject error = page.next(f -> "error".equals(f.getString("type")) && "w".equals(f.getString("clientRef")),
          "the wrong code refused");
      assertTrue(error.getString("message").contains("no such link code"), error.encode());
    }
    page.send(new JsonObject().put("type", "link_chat").put("code", code.toLowerCase()).put("clientRef", "ok"));
    JsonObject linked = page.next(f -> "chat_linked".equals(f.getString("type")), "the account linked");
    assertEquals("fake", linked.getString("plugin"));
    assertEquals("42", linked.getString("userId"));
    assertEquals("Owner", linked.getJsonObject("person").getString("name"));
    text(plugin, "Linked: this chat account now answers as Owner", 1);
    page.send(new JsonObject().put("type", "link_chat").put("code", code).put("clientRef", "again"));
    page.next(f -> "error".equals(f.getString("type")) && "again".equals(f.getString("clientRef")),
        "a code is used once");

    // The same account's tap now ends the request, and the ledger row names the person.
    plugin.tap(again.getString("key"), "allow-once", "42");
    plugin.await(r -> "_switchboard/permission_resolved".equals(r.getString("method"))
        && requestId.equals(r.getJsonObject("params").getString("requestId")), 1, "the card's end");
    JsonObject row = await(vertx.eventBus().<JsonObject>request(Addresses.STORE_LEDGER_GET,
        new JsonObject().put("requestId", requestId))).body().getJsonObject("request");
    JsonObject by = row.getJsonObject("outcome").getJsonObject("answeredBy");
    assertEquals("42", by.getString("user"));
    assertEquals("chat", by.getJsonObject("person").getString("identity"));
    assertEquals("linked-chat", by.getJsonObject("person").getString("strength"));
    assertEquals("Owner", by.getJsonObject("person").getString("name"));
    JsonObject audit = await(vertx.eventBus().<JsonObject>request(Addresses.STORE_AUDIT_LIST, new JsonObject()))
        .body();
    assertTrue(audit.getJsonArray("audit").stream().map(a -> (JsonObject) a).anyMatch(a ->
        "identity-linked".equals(a.getString("event")) && "fake:42".equals(a.getJsonObject("detail")
            .getString("label"))), audit.encodePrettily());
  }
}
