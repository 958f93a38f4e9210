package io.switchboard.cluster;

import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an edge heard of one kind of an agent node's facts (its permission facts, or its thread
 * facts: each kind numbered on its own, from 1 at each incarnation), so a fact lost on the way is
 * noticed: as a skip in the numbers at the next fact, or as a count the node reports above what was
 * heard. {@code onGap} hears the node's name, to ask it again. Used on the router's event loop.
 */
final class FactSequence {
  private static final Logger log = LoggerFactory.getLogger(FactSequence.class);

  /** The last fact heard of a node: its incarnation and sequence number. */
  private record Heard(String incarnation, long seq) {}

  private final String kind;
  private final Map<String, Heard> heard = new HashMap<>();
  private Consumer<String> onGap = node -> { };

  FactSequence(String kind) {
    this.kind = kind;
  }

  void onGap(Consumer<String> onGap) {
    this.onGap = onGap;
  }

  /** A fact of this kind arrived (one without a node or number is not counted). */
  void heard(JsonObject fact) {
    String node = fact.getString("node");
    Long seq = fact.getLong("seq");
    if (node == null || seq == null) {
      return;
    }
    Heard last = heard.get(node);
    String incarnation = fact.getString("incarnation");
    if (last == null || !last.incarnation().equals(incarnation) || seq > last.seq()) {
      heard.put(node, new Heard(incarnation, seq));
    }
    // Numbers start at 1 with each incarnation: a first one heard above 1 may follow lost ones too
    // (an asking costs one list; a lost card would stay open).
    long expected = last != null && last.incarnation().equals(incarnation) ? last.seq() + 1 : 1;
    if (seq > expected) {
      log.warn("missed {} {} facts of agent node {} (heard {} after {}): asking it again", seq - expected, kind,
          node, seq, expected - 1);
      onGap.accept(node);
    }
  }

  /** What a list read from a node (its {@code node}, {@code incarnation} and {@code seq}) has heard up to. */
  void heardUpTo(JsonObject reply) {
    String node = reply.getString("node");
    Long seq = reply.getLong("seq");
    Heard last = node == null ? null : heard.get(node);
    if (seq != null && (last == null || !last.incarnation().equals(reply.getString("incarnation"))
        || seq > last.seq())) {
      heard.put(node, new Heard(reply.getString("incarnation"), seq));
    }
  }

  /** A node's status reply (its count of this kind): a count above what was heard is a gap. */
  void compare(String node, JsonObject status) {
    Long seq = status.getLong("seq");
    Heard last = heard.get(node);
    boolean missed = seq != null && (last == null || !last.incarnation().equals(status.getString("incarnation"))
        ? seq > 0 : seq > last.seq());
    if (missed) {
      log.warn("agent node {} published {} {} facts, this edge heard {}: asking it again", node, seq, kind,
          last == null ? "none" : last.seq());
      onGap.accept(node);
    }
  }
}
