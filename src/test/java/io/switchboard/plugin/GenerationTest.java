package io.switchboard.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.jsonrpc.JsonRpcPeer;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A chat's live output held behind its session info: in order, and bounded in bytes. */
class GenerationTest {
  final List<String> written = new ArrayList<>();

  private Generation generation(long maxHeldBytes) {
    Generation g = new Generation(1, maxHeldBytes);
    g.peer = new JsonRpcPeer("test", line -> {
      written.add(line);
      return Future.succeededFuture();
    });
    return g;
  }

  private static Dialect.Out chunk(String text) {
    return new Dialect.Out("_va/thread_reply", new JsonObject().put("text", text));
  }

  @Test
  void heldOutputFollowsTheInfoInOrder() {
    Generation g = generation(1_000_000);
    g.hold("7");
    g.stream("7", chunk("a"));
    g.stream("7", chunk("b"));
    assertEquals(List.of(), written, "held while the info is looked up");
    assertTrue(!g.flushed("7").isComplete());
    g.release("7", new Dialect.Out("_va/session_info", new JsonObject()));
    assertEquals(3, written.size());
    assertTrue(written.get(0).contains("session_info") && written.get(1).contains("\"a\"")
        && written.get(2).contains("\"b\""), written.toString());
    assertTrue(g.flushed("7").isComplete());
  }

  @Test
  void anAgentThatTalksOnWhileTheInfoIsLateCannotGrowWhatIsHeldPastItsBytes() {
    Generation g = generation(200);
    g.hold("7");
    for (int i = 0; i < 100; i++) {
      g.stream("7", chunk("x".repeat(50) + i));
    }
    assertEquals(100, written.size(), "past the bound the held output goes, in order, and the rest streams");
    assertTrue(written.get(0).contains("x0\""), "the first chunk first: " + written.get(0));
    assertTrue(g.flushed("7").isComplete(), "nothing is held any more");
    g.release("7", new Dialect.Out("_va/session_info", new JsonObject())); // the late info still goes
    assertEquals(101, written.size());
  }
}
