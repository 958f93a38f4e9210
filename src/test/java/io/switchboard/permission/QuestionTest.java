package io.switchboard.permission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What an agent may ask ({@code elicitation/create}) and what an answer may say, each refusal naming why. */
class QuestionTest {
  private static JsonObject form(JsonObject properties, String... required) {
    return new JsonObject().put("mode", "form").put("message", "Tell me")
        .put("requestedSchema", new JsonObject().put("type", "object").put("properties", properties)
            .put("required", new JsonArray(List.of((Object[]) required))));
  }

  private static String refusal(Runnable r) {
    return assertThrows(IllegalArgumentException.class, r::run).getMessage();
  }

  @Test
  void aQuestionNoClientCanDrawIsRefusedNamingWhy() {
    assertTrue(refusal(() -> Question.fromAgent(new JsonObject().put("mode", "form").put("message", "x")))
        .contains("requestedSchema"));
    assertTrue(refusal(() -> Question.fromAgent(form(new JsonObject().put("a", new JsonObject().put("type", "object")))))
        .contains("field a: type must be"));
    assertTrue(refusal(() -> Question.fromAgent(form(new JsonObject().put("a", new JsonObject().put("type", "string")
        .put("pattern", "("))))).contains("field a: pattern"));
    assertTrue(refusal(() -> Question.fromAgent(form(new JsonObject(), "missing"))).contains("required"));
    assertTrue(refusal(() -> Question.fromAgent(new JsonObject().put("mode", "url").put("message", "x")
        .put("elicitationId", "e").put("url", "javascript:alert(1)"))).contains("http(s) URL"));
    assertTrue(refusal(() -> Question.fromAgent(new JsonObject().put("mode", "url").put("message", "x")
        .put("url", "https://a.example"))).contains("elicitationId"));
    assertTrue(refusal(() -> Question.fromAgent(new JsonObject().put("mode", "chat").put("message", "x")))
        .contains("mode"));
    assertTrue(refusal(() -> Question.fromAgent(form(new JsonObject()).put("message", " "))).contains("message"));
  }

  @Test
  void aUrlQuestionNamesItsHostAndItsConsentCarriesNoContent() {
    JsonObject q = Question.fromAgent(new JsonObject().put("mode", "url").put("message", "Sign in")
        .put("elicitationId", "e1").put("url", "https://login.example.org:8443/a?b=c"));
    assertEquals("login.example.org:8443", q.getString("domain"));
    assertEquals("Open login.example.org:8443", Question.options(q).getJsonObject(0).getString("name"));
    assertNull(Question.content(q, "accept", null));
    assertEquals("xn--bcher-kva.example", Question.fromAgent(new JsonObject().put("mode", "url").put("message", "x")
        .put("elicitationId", "e").put("url", "https://b\u00fccher.example/login")).getString("domain"),
        "an international name as it is reached");
    assertTrue(refusal(() -> Question.content(q, "accept", new JsonObject())).contains("no content"));
  }

  @Test
  void everyValueIsCheckedAgainstItsFieldAndTheRefusalNamesTheField() {
    JsonObject q = Question.fromAgent(form(new JsonObject()
        .put("name", new JsonObject().put("type", "string").put("title", "Name").put("minLength", 2).put("maxLength", 4))
        .put("n", new JsonObject().put("type", "integer").put("minimum", 1).put("maximum", 3))
        .put("when", new JsonObject().put("type", "string").put("format", "date"))
        .put("mail", new JsonObject().put("type", "string").put("format", "email"))
        .put("code", new JsonObject().put("type", "string").put("pattern", "^[A-Z]+$"))
        .put("tags", new JsonObject().put("type", "array").put("maxItems", 2)
            .put("items", new JsonObject().put("type", "string").put("enum", new JsonArray().add("a").add("b").add("c")))),
        "name"));
    JsonObject ok = new JsonObject().put("name", "abc").put("n", 2).put("when", "2026-12-02").put("mail", "a@b.io")
        .put("code", "XY").put("tags", new JsonArray().add("a").add("c"));
    assertEquals(ok, Question.content(q, "accept", ok));
    assertTrue(refusal(() -> Question.content(q, "accept", ok.copy().put("name", "a"))).contains("\"Name\" (name)"));
    assertTrue(refusal(() -> Question.content(q, "accept", ok.copy().put("name", "abcde"))).contains("at most 4"));
    assertTrue(refusal(() -> Question.content(q, "accept", ok.copy().put("n", 2.5))).contains("whole number"));
    assertTrue(refusal(() -> Question.content(q, "accept", ok.copy().put("n", 4))).contains("at most 3"));
    assertTrue(refusal(() -> Question.content(q, "accept", ok.copy().put("when", "tomorrow"))).contains("date"));
    assertTrue(refusal(() -> Question.content(q, "accept", ok.copy().put("mail", "nobody"))).contains("email"));
    assertTrue(refusal(() -> Question.content(q, "accept", ok.copy().put("code", "xy"))).contains("pattern"));
    assertTrue(refusal(() -> Question.content(q, "accept", ok.copy().put("tags", new JsonArray().add("a").add("a"))))
        .contains("twice"));
    assertTrue(refusal(() -> Question.content(q, "accept", ok.copy().put("tags", new JsonArray().add("a").add("b")
        .add("c")))).contains("at most 2"));
    assertTrue(refusal(() -> Question.content(q, "accept", new JsonObject())).contains("required"));
    assertTrue(refusal(() -> Question.content(q, "decline", ok)).contains("no content"));
    assertNull(Question.content(q, "decline", null));
  }

  @Test
  void anAgentsSlowPatternIsCutShortNotLeftToHoldTheEventLoop() {
    JsonObject q = Question.fromAgent(form(new JsonObject().put("s", new JsonObject().put("type", "string")
        .put("pattern", "^((a+)+)+$"))));
    String evil = "a".repeat(30) + "!"; // 95 s to refuse without the budget (JDK 17)
    String refused = refusal(() -> Question.content(q, "accept", new JsonObject().put("s", evil)));
    assertTrue(refused.contains("too slow"), refused);
    assertTrue(refused.startsWith("s cannot be checked"), "the refusal names its field, as every other does: " + refused);
  }

  @Test
  void aOneChoiceFormIsAnsweredByItsOptionsAndASecretIsNotKept() {
    JsonObject q = Question.fromAgent(form(new JsonObject().put("ok", new JsonObject().put("type", "boolean")), "ok"));
    assertEquals(List.of("accept", "accept:true", "accept:false", "decline", "cancel"), Question.options(q).stream()
        .map(o -> ((JsonObject) o).getString("optionId")).toList());
    assertEquals(new JsonObject().put("ok", false), Question.content(q, "accept:false", null));

    JsonObject secret = Question.fromAgent(form(new JsonObject().put("user", new JsonObject().put("type", "string"))
        .put("pass", new JsonObject().put("type", "string").put("writeOnly", true))));
    JsonObject kept = Question.kept(secret, new JsonObject().put("user", "ann").put("pass", "hunter2"));
    assertEquals(new JsonObject().put("content", new JsonObject().put("user", "ann"))
        .put("hidden", new JsonArray().add("pass")), kept);
  }
}
