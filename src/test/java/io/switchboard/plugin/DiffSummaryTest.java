package io.switchboard.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** A chat's /diff shows a name by its label, so a newline in a name cannot fake a line of the list. */
class DiffSummaryTest {
  @Test
  void namesAreShownByTheirLabelsAndTheTotalCountsWhatWasNotListed() {
    JsonObject changes = new JsonObject().put("branch", "switchboard/x").put("baseRef", "main").put("ahead", 0)
        .put("uncommitted", 3).put("filesTotal", 1_500).put("files", new JsonArray()
            .add(new JsonObject().put("path", "a\nmain.c +1 -0").put("label", "a<U+000A>main.c +1 -0").put("added", 1)
                .put("removed", 0).put("binary", false))
            .add(new JsonObject().put("path", "sub").put("added", 1).put("removed", 0).put("binary", false)
                .put("repository", true)));
    String said = ChatInbound.diffSummary(changes);
    assertTrue(said.startsWith("1500 files changed"), said);
    assertTrue(said.contains("\na<U+000A>main.c +1 -0 +1 -0"), said);
    assertFalse(said.contains("a\nmain.c"), said);
    assertTrue(said.contains("\nsub (a repository)"), said);
    assertEquals(3, said.split("\n").length, said);
  }
}
