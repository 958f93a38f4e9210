package io.switchboard.fuzz;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/** Generators of hostile input: JSON of every shape, near-miss protocol messages, and plain junk. */
public final class Inputs {
  private Inputs() {}

  /** Any JSON value, nested a few levels. */
  public static Arbitrary<Object> json(int depth) {
    Arbitrary<Object> leaf = Arbitraries.oneOf(
        Arbitraries.strings().ofMaxLength(12).map(s -> (Object) s),
        Arbitraries.integers().map(i -> (Object) i),
        Arbitraries.longs().map(l -> (Object) l),
        Arbitraries.doubles().map(d -> (Object) d),
        Arbitraries.of(true, false).map(b -> (Object) b),
        Arbitraries.just(null));
    if (depth == 0) {
      return leaf;
    }
    Arbitrary<Object> object = Combinators.combine(
        Arbitraries.of("type", "threadId", "text", "requestId", "optionId", "afterSeq", "agent", "clientRef", "id",
            "method", "params", "result", "error", "jsonrpc", "sessionId", "_meta", "prompt", "x")
            .list().ofMaxSize(6),
        json(depth - 1).list().ofMaxSize(6)).as((keys, values) -> {
          JsonObject o = new JsonObject();
          for (int i = 0; i < Math.min(keys.size(), values.size()); i++) {
            o.put(keys.get(i), values.get(i));
          }
          return (Object) o;
        });
    Arbitrary<Object> array = json(depth - 1).list().ofMaxSize(4).map(l -> (Object) new JsonArray(l));
    return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(3, leaf), net.jqwik.api.Tuple.of(4, object),
        net.jqwik.api.Tuple.of(1, array));
  }

  /** A string field, a wrong type, or nothing: for building near-miss messages. */
  public static Arbitrary<Object> field(List<String> likely) {
    return Arbitraries.oneOf(Arbitraries.of(likely).map(s -> (Object) s), json(1), Arbitraries.just(null));
  }

  /** Raw text lines: junk, truncated JSON, and JSON that is not an object. */
  public static Arbitrary<String> line() {
    return Arbitraries.oneOf(
        Arbitraries.strings().ofMaxLength(40),
        json(3).map(v -> v instanceof JsonObject o ? o.encode() : String.valueOf(v)),
        json(3).map(v -> v instanceof JsonObject o ? o.encode() : String.valueOf(v))
            .map(s -> s.substring(0, s.length() / 2)),
        Arbitraries.of("{", "}", "[]", "null", "\"\"", "{\"jsonrpc\":\"2.0\"}", "{\"id\":{}}",
            "{\"method\":\"initialize\",\"id\":[1]}", "\u0000", "{\"id\":1e400,\"result\":1}"));
  }
}
