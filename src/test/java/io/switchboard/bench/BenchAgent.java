package io.switchboard.bench;

import io.switchboard.testkit.StdioPeer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Arrays;

/**
 * An ACP agent for benchmarks. {@code stream N}: each prompt streams N text chunks as fast as it
 * can. {@code permission N}: each prompt asks N permissions one after another and reports the
 * round-trip times it measured itself, as a chunk {@code RTT:{p50,p99,mean}} in microseconds.
 */
public final class BenchAgent extends StdioPeer {
  private final String mode;
  private final int n;

  private BenchAgent(String mode, int n) {
    this.mode = mode;
    this.n = n;
  }

  public static void main(String[] args) throws Exception {
    new BenchAgent(args[0], Integer.parseInt(args[1])).run();
  }

  @Override
  protected Object handle(String method, JsonObject params) throws Exception {
    return switch (method) {
      case "initialize" -> new JsonObject().put("protocolVersion", 1).put("agentCapabilities", new JsonObject());
      case "session/new" -> new JsonObject().put("sessionId", "bench");
      case "session/prompt" -> prompt();
      default -> new JsonObject();
    };
  }

  private JsonObject prompt() throws Exception {
    if (mode.equals("stream")) {
      for (int i = 0; i < n; i++) {
        send(chunk("bench", "chunk " + i + " "));
      }
    } else {
      long[] rtt = new long[n];
      for (int i = 0; i < n; i++) {
        long t0 = System.nanoTime();
        request("session/request_permission", new JsonObject().put("sessionId", "bench")
            .put("toolCall", new JsonObject().put("toolCallId", "call-" + i).put("title", "Edit").put("kind", "edit")
                // Wall-clock microseconds (one clock for both processes): the benchmark splits the round trip.
                .put("rawInput", new JsonObject().put("sentAtMicros", BenchClock.micros())))
            .put("options", new JsonArray()
                .add(new JsonObject().put("optionId", "allow").put("name", "Allow").put("kind", "allow_once"))
                .add(new JsonObject().put("optionId", "reject").put("name", "Reject").put("kind", "reject_once"))));
        rtt[i] = System.nanoTime() - t0;
      }
      Arrays.sort(rtt);
      send(chunk("bench", "RTT:" + new JsonObject().put("p50", rtt[n / 2] / 1000).put("p99", rtt[(int) (n * 0.99)] / 1000)
          .put("mean", Arrays.stream(rtt).sum() / n / 1000).encode()));
    }
    return new JsonObject().put("stopReason", "end_turn");
  }
}
