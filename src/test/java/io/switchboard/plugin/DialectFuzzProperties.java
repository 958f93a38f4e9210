package io.switchboard.plugin;

import io.switchboard.fuzz.Inputs;
import io.vertx.core.json.JsonObject;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** A plugin's session/prompt params, however malformed, give a routed message or a named refusal. */
class DialectFuzzProperties {
  @Property(tries = 3_000)
  void promptsParseOrAreRefusedByName(@ForAll("params") JsonObject params, @ForAll boolean vibearound) {
    Dialect dialect = Dialect.of(vibearound ? "vibearound" : "acp");
    try {
      Dialect.Inbound in = dialect.prompt(params);
      if (in.chatId() == null || in.chatId().isEmpty() || in.text() == null) {
        throw new AssertionError("accepted a prompt without a chat: " + params);
      }
    } catch (IllegalArgumentException refused) {
      if (refused.getMessage() == null || !refused.getMessage().contains("chatId")) {
        throw new AssertionError("a refusal that does not name the field: " + refused.getMessage());
      }
    }
    dialect.cancelledChat(params); // never throws either
  }

  @Provide
  Arbitrary<JsonObject> params() {
    Arbitrary<Object> routing = Combinators.combine(Inputs.field(List.of("42")), Inputs.field(List.of("7")),
        Inputs.field(List.of("dm", "group")))
        .as((chat, sender, scope) -> (Object) new JsonObject().put("chatId", chat).put("senderId", sender)
            .put("scope", scope));
    Arbitrary<Object> meta = Arbitraries.oneOf(routing.map(r -> (Object) new JsonObject().put("switchboard", r)),
        routing.map(r -> (Object) new JsonObject().put("va.channel", r)), Inputs.json(2));
    return Combinators.combine(Inputs.field(List.of("42")), Inputs.json(2), meta)
        .as((session, prompt, m) -> new JsonObject().put("sessionId", session).put("prompt", prompt).put("_meta", m));
  }
}
