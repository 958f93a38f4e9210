package io.switchboard.permission;

import io.switchboard.fuzz.Inputs;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** A permission request from an agent, however malformed, is parsed or refused naming the field. */
class RegistrationFuzzProperties {
  @Property(tries = 3_000)
  void bodiesParseOrAreRefusedByName(@ForAll("bodies") JsonObject body) {
    try {
      Registration r = Registration.parse(body);
      if (r.options().isEmpty() || r.toolCallId() == null) {
        throw new AssertionError("accepted an incomplete request: " + body);
      }
    } catch (IllegalArgumentException refused) {
      if (refused.getMessage() == null || refused.getMessage().isBlank()) {
        throw new AssertionError("a refusal without a reason for " + body);
      }
    }
  }

  @Provide
  Arbitrary<JsonObject> bodies() {
    Arbitrary<Object> option = Combinators.combine(Inputs.field(List.of("allow", "reject")),
        Inputs.field(List.of("Allow")), Inputs.field(List.of("allow_once", "reject_once", "maybe")))
        .as((id, name, kind) -> (Object) new JsonObject().put("optionId", id).put("name", name).put("kind", kind));
    Arbitrary<Object> options = Arbitraries.oneOf(option.list().ofMaxSize(3).map(l -> (Object) new JsonArray(l)),
        Inputs.json(1));
    Arbitrary<Object> toolCall = Arbitraries.oneOf(Inputs.field(List.of("call_1")).map(id -> (Object)
        new JsonObject().put("toolCallId", id)), Inputs.json(2));
    return Combinators.combine(Inputs.field(List.of("t1")), Inputs.field(List.of("s1")), toolCall, options,
        Arbitraries.oneOf(Inputs.field(List.of("web")).map(s -> (Object) new JsonArray().add(s)), Inputs.json(1)))
        .as((thread, session, tc, opts, eligible) -> new JsonObject().put("threadId", thread).put("sessionId", session)
            .put("toolCall", tc).put("options", opts).put("eligible", eligible));
  }
}
