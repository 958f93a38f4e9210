package io.switchboard.metrics;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.Gateway;
import io.switchboard.bus.Addresses;
import io.switchboard.plugin.PluginRoom;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.GatewayHarness;
import io.switchboard.testkit.PluginControl;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** /metrics and /readyz move with what happens, on the whole gateway. */
@ExtendWith(VertxExtension.class)
class MetricsTest {
  @TempDir
  Path dir;
  GatewayHarness gateway;
  PluginControl plugin;
  Vertx vertx;
  final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start(Vertx vertx) throws Exception {
    this.vertx = vertx;
    plugin = new PluginControl(dir.resolve("fake"));
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(),
        List.of(plugin.spec("fake", "acp", List.of(), "no-ack")),
        new Gateway.Tuning(new PluginRoom.Timings(200, 1_000, 10, 60_000, 90_000), 800), AgentHarness.demo());
    plugin.awaitType("initialized", 1);
  }

  @AfterEach
  void stop() {
    gateway.close();
  }

  private HttpResponse<String> get(String path, boolean authenticated) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(gateway.url(path)));
    if (authenticated) {
      request.header("Authorization", "Bearer " + gateway.token);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The sum of the metric lines whose name and labels start with {@code series}. */
  private double metric(String series) throws Exception {
    String text = get("/metrics", true).body();
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + ".* ([0-9.eE+-]+)$").matcher(text);
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
    }
    return sum;
  }

  private void awaitMetric(String series, double atLeast) {
    waitFor(() -> {
      try {
        return metric(series) >= atLeast;
      } catch (Exception e) {
        return false;
      }
    }, series + " >= " + atLeast);
  }

  @Test
  void eachMetricMovesWhenItsEventHappens() throws Exception {
    assertEquals(401, get("/metrics", false).statusCode());
    assertEquals(0, metric("switchboard_permissions_pending"));
    assertTrue(metric("jvm_memory_used_bytes{area=\"heap\"") > 0, "the JVM's heap is reported");
    assertTrue(metric("jvm_threads_live_threads") > 0, "the JVM's threads are reported");
    ChatClient web = ChatClient.open(vertx, gateway.port, gateway.token);
    try {
      web.next("welcome");
      awaitMetric("switchboard_websocket_connections", 1);
      String t = web.send(new JsonObject().put("type", "new_thread")).next("thread").getString("threadId");
      web.send(new JsonObject().put("type", "attach").put("threadId", t));
      web.send(new JsonObject().put("type", "prompt").put("threadId", t).put("text", "measure me"));
      String requestId = web.next("permission_request").getString("requestId");
      awaitMetric("switchboard_permissions_pending", 1);
      awaitMetric("switchboard_agent_processes", 1);
      awaitMetric("switchboard_turns_started_total", 1);
      web.send(new JsonObject().put("type", "permission_answer").put("requestId", requestId)
          .put("optionId", "allow-once"));
      awaitMetric("switchboard_permission_outcomes_total{detail=\"allow_once\",outcome=\"selected\"", 1);
      awaitMetric("switchboard_permission_answer_seconds_count", 1);
      awaitMetric("switchboard_turns_ended_total", 1);
      assertEquals(0, metric("switchboard_permissions_pending"));
    } finally {
      web.close();
    }
    // An output the plugin never acknowledges: the outbox depth grows, and a new process gets it again.
    plugin.prompt("42", "42", "/help");
    awaitMetric("switchboard_outbox_pending", 1);
    plugin.act(new JsonObject().put("exit", 1));
    awaitMetric("switchboard_plugin_restarts_total{plugin=\"fake\"", 1);
    awaitMetric("switchboard_outbox_redeliveries_total", 1);
    awaitMetric("switchboard_plugin_up{plugin=\"fake\"", 1);
    // What agents say they cost (the agent room's facts of what each report added): summed per agent and currency.
    for (double added : new double[] {0.5, 0.25}) {
      vertx.eventBus().publish(Addresses.USAGE_COST, new JsonObject().put("threadId", "t").put("agentId", "demo")
          .put("currency", "USD").put("added", added));
    }
    awaitMetric("switchboard_agent_cost_total{agent=\"demo\",currency=\"USD\"", 0.75);
    assertEquals(0.75, metric("switchboard_agent_cost_total{agent=\"demo\",currency=\"USD\""), 1e-9);
  }

  @Test
  void requestsVoidedAtStartAreCountedOnceTheMetricsRoomIsUp() throws Exception {
    // A gateway that died with a request pending (its rooms on a bus of their own, then dropped).
    Path data = dir.resolve("crashed");
    Vertx before = Vertx.vertx();
    io.switchboard.testkit.PermissionHarness crashed =
        new io.switchboard.testkit.PermissionHarness(before, data.resolve("switchboard.db")).start();
    crashed.register(io.switchboard.testkit.PermissionHarness.request("t1", "s1", "tc1", "web"));
    waitFor(() -> crashed.shown.size() == 1, "the pending card");
    crashed.crashPermissionRoom();
    crashed.close();
    await(before.close());
    // The next gateway voids it at start, before the metrics room exists; the count must still see it.
    Vertx after = Vertx.vertx();
    try (GatewayHarness next = new GatewayHarness(after, data, List.of(), AgentHarness.demo())) {
      HttpResponse<String> text = http.send(HttpRequest.newBuilder(URI.create(next.url("/metrics")))
          .header("Authorization", "Bearer " + next.token).build(), HttpResponse.BodyHandlers.ofString());
      assertTrue(text.body().contains("switchboard_permission_outcomes_total{detail=\"voided-by-restart\","
          + "outcome=\"cancelled\"} 1.0"), text.body());
    } finally {
      await(after.close());
    }
  }

  @Test
  void readyzGoesDegradedWhileTheOutboxIsStuckAndBack() throws Exception {
    assertEquals(200, get("/readyz", false).statusCode());
    plugin.prompt("42", "42", "/help");
    JsonObject help = plugin.await(r -> "_switchboard/text".equals(r.getString("method")), 1, "the help text");
    waitFor(() -> {
      try {
        HttpResponse<String> ready = get("/readyz", false);
        return ready.statusCode() == 503 && ready.body().contains("unacknowledged outputs");
      } catch (Exception e) {
        return false;
      }
    }, "/readyz to say the outbox is stuck");
    await(vertx.eventBus().request(Addresses.STORE_OUTBOX_ACK, new JsonObject().put("pluginId", "fake")
        .put("outputIds", new JsonArray().add(help.getJsonObject("params").getString("outputId")))));
    waitFor(() -> {
      try {
        return get("/readyz", false).statusCode() == 200;
      } catch (Exception e) {
        return false;
      }
    }, "/readyz to be ready again");
    assertTrue(get("/readyz", false).body().contains("\"outbox\":\"ok\""));
  }
}
