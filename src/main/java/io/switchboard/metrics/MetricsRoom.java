package io.switchboard.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.switchboard.bus.Addresses;
import io.switchboard.bus.Bus;
import io.switchboard.cluster.RouterClient;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The metrics room: Prometheus metrics through Micrometer. Counts permission outcomes and answer
 * latency from the permission room's facts; at each scrape it asks the other rooms for their state
 * (pending permissions, the outbox, agents, plugins) over the bus, so no room shares an object
 * with it. The registry is this room's own.
 */
public final class MetricsRoom extends VerticleBase {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private Timer answerLatency;
  /** What the last scrape read from the rooms; the gauges read these. */
  private final Map<String, Double> now = new HashMap<>();
  private final Map<String, JsonObject> plugins = new HashMap<>();
  /** Listens to GC notifications: closed with the room. */
  private final JvmGcMetrics gc = new JvmGcMetrics();
  private final boolean clustered;
  /** How this room reads the agent side's status (every agent node's, summed, in a cluster). */
  private RouterClient nodes;

  public MetricsRoom() {
    this(false);
  }

  public MetricsRoom(boolean clustered) {
    this.clustered = clustered;
  }

  @Override
  public Future<?> start() {
    answerLatency = Timer.builder("switchboard_permission_answer").description("Time from a card shown to its answer")
        .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(10))
        .maximumExpectedValue(Duration.ofHours(1)).register(registry);
    gauge("switchboard_permissions_pending", "Permission requests waiting for an answer", "pending");
    gauge("switchboard_permissions_oldest_pending_seconds", "Age of the oldest pending permission request", "oldest");
    gauge("switchboard_outbox_pending", "Durable outputs not yet acknowledged by their plugin", "outbox");
    gauge("switchboard_outbox_oldest_pending_seconds", "Age of the oldest unacknowledged output", "outboxOldest");
    gauge("switchboard_agent_processes", "Agent processes running", "agents");
    gauge("switchboard_agent_processes_max", "Agent processes allowed at once (agentProcesses.max)", "agentsMax");
    gauge("switchboard_agent_rss_bytes", "Resident memory of the agent processes and their children", "agentRss");
    gauge("switchboard_agent_prompts_queued", "Prompts waiting for a free agent slot", "agentQueued");
    FunctionCounter.builder("switchboard_agent_idle_stops", now, m -> m.getOrDefault("idleStops", 0.0))
        .description("Agents stopped after being idle").register(registry);
    FunctionCounter.builder("switchboard_agent_evictions", now, m -> m.getOrDefault("evictions", 0.0))
        .description("Idle agents stopped to make room for another thread's prompt").register(registry);
    gauge("switchboard_websocket_connections", "Open /ws/chat sockets", "websockets");
    FunctionCounter.builder("switchboard_turns_started", now, m -> m.getOrDefault("turnsStarted", 0.0))
        .description("Agent turns started").register(registry);
    FunctionCounter.builder("switchboard_turns_ended", now, m -> m.getOrDefault("turnsEnded", 0.0))
        .description("Agent turns ended").register(registry);
    FunctionCounter.builder("switchboard_outbox_redeliveries", now, m -> m.getOrDefault("redeliveries", 0.0))
        .description("Durable outputs sent again to a new plugin process").register(registry);

    // The JVM's own: heap and direct memory, GC pauses, threads, CPU (what a small host runs out of first).
    new JvmMemoryMetrics().bindTo(registry);
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);

    nodes = new RouterClient(vertx, clustered);
    var bus = vertx.eventBus();
    bus.<JsonObject>consumer(Addresses.PERMISSION_RESOLVED, m -> ended(m.body()));
    bus.<JsonObject>consumer(Addresses.PERMISSION_CANCELLED, m -> ended(m.body()));
    bus.<JsonObject>consumer(Addresses.PERMISSION_ATTENTION, m -> attended(m.body()));
    bus.<JsonObject>consumer(Addresses.PUSH_SENT, m -> Counter.builder("switchboard_push_deliveries")
        .description("Web Push messages sent, by the push service's verdict")
        .tag("status", String.valueOf(m.body().getString("status"))).register(registry).increment());
    // An agent's id is the config's (a few, named by the operator), a currency three letters: bounded tags.
    bus.<JsonObject>consumer(Addresses.USAGE_COST, m -> {
      if (m.body().getValue("added") instanceof Number added && added.doubleValue() > 0) {
        Counter.builder("switchboard_agent_cost").description("What agents reported they cost, by agent and currency")
            .tag("agent", String.valueOf(m.body().getString("agentId")))
            .tag("currency", String.valueOf(m.body().getString("currency"))).register(registry)
            .increment(added.doubleValue());
      }
    });
    // Local: in a cluster, /metrics is the node its web room runs on (its JVM, its sockets).
    bus.<JsonObject>localConsumer(Addresses.METRICS_SCRAPE, this::scrape);
    return nodes.start(member -> { });
  }

  @Override
  public Future<?> stop() {
    gc.close();
    return Future.succeededFuture();
  }

  private void gauge(String name, String help, String key) {
    Gauge.builder(name, now, m -> m.getOrDefault(key, 0.0)).description(help).register(registry);
  }

  /**
   * A step of a waiting request's attention plan. {@code push} counts every time the subscribed
   * devices were sent the request: with its card, and with a reminder or an escalation (a push step
   * that found no device sent nothing).
   */
  private void attended(JsonObject fact) {
    String step = String.valueOf(fact.getString("step"));
    if (!step.equals("push")) {
      attention(step);
    }
    if (fact.getInteger("pushed", 0) > 0) {
      attention("push");
    }
  }

  private void attention(String step) {
    Counter.builder("switchboard_permission_attention")
        .description("Attention given to waiting permission requests: push (the subscribed devices told), remind, "
            + "escalate")
        .tag("step", step).register(registry).increment();
  }

  private void ended(JsonObject fact) {
    JsonObject outcome = fact.getJsonObject("outcome", new JsonObject());
    String how = String.valueOf(outcome.getString("outcome"));
    boolean selected = how.equals("selected");
    Counter.builder("switchboard_permission_outcomes").description("Permission requests ended, by outcome")
        .tag("outcome", how)
        .tag("detail", String.valueOf(selected ? outcome.getString("kind")
            : how.equals("expired") ? outcome.getString("onExpiry") : outcome.getString("reason")))
        .register(registry).increment();
    Long created = fact.getLong("createdAt");
    Long ended = fact.getLong("endedAt");
    if (selected && created != null && ended != null) {
      answerLatency.record(Duration.ofMillis(Math.max(0, ended - created)));
    }
  }

  /** Refreshes the gauges from the rooms, then answers the Prometheus text. {@code {websockets}} comes from the web room. */
  private void scrape(Message<JsonObject> m) {
    long t = System.currentTimeMillis();
    now.put("websockets", m.body() == null ? 0.0 : m.body().getInteger("websockets", 0).doubleValue());
    Future<?> permissions = nodes.ask(Addresses.PERMISSION_STATUS, new JsonObject(), Bus.quick())
        .onSuccess(r -> {
          now.put("pending", r.getInteger("pending").doubleValue());
          Long oldest = r.getLong("oldestCreatedAt");
          now.put("oldest", oldest == null ? 0.0 : (t - oldest) / 1000.0);
        });
    Future<?> outbox = nodes.ask(Addresses.STORE_OUTBOX_STATS, new JsonObject(), Bus.quick())
        .onSuccess(r -> {
          double pending = 0;
          long oldest = Long.MAX_VALUE;
          for (Object o : r.getJsonArray("plugins")) {
            JsonObject p = (JsonObject) o;
            pending += p.getLong("pending");
            oldest = Math.min(oldest, p.getLong("oldestCreatedAt"));
          }
          now.put("outbox", pending);
          now.put("outboxOldest", oldest == Long.MAX_VALUE ? 0.0 : (t - oldest) / 1000.0);
        });
    Future<?> agents = nodes.ask(Addresses.AGENT_STATUS, new JsonObject(), Bus.quick())
        .onSuccess(r -> {
          now.put("agents", r.getLong("processes").doubleValue());
          now.put("agentsMax", r.getInteger("maxProcesses").doubleValue());
          now.put("agentRss", r.getLong("rssBytes").doubleValue());
          now.put("agentQueued", r.getInteger("queuedPrompts").doubleValue());
          now.put("idleStops", r.getLong("idleStops").doubleValue());
          now.put("evictions", r.getLong("evictions").doubleValue());
          now.put("turnsStarted", r.getLong("turnsStarted").doubleValue());
          now.put("turnsEnded", r.getLong("turnsEnded").doubleValue());
        });
    Future<?> pluginStates = nodes.ask(Addresses.PLUGIN_STATUS, new JsonObject(), Bus.quick())
        .onSuccess(r -> {
          double redeliveries = 0;
          for (Object o : r.getJsonArray("plugins")) {
            JsonObject p = (JsonObject) o;
            String id = p.getString("id");
            if (plugins.put(id, p) == null) {
              registerPlugin(id);
            }
            redeliveries += p.getLong("redeliveries", 0L);
          }
          now.put("redeliveries", redeliveries);
        });
    Future.join(permissions, outbox, agents, pluginStates).onComplete(x -> m.reply(registry.scrape()));
  }

  private void registerPlugin(String id) {
    FunctionCounter.builder("switchboard_plugin_restarts", plugins, p -> p.get(id).getLong("restarts", 0L))
        .description("Plugin restarts").tag("plugin", id).register(registry);
    Gauge.builder("switchboard_plugin_up", plugins, p -> "RUNNING".equals(p.get(id).getString("state")) ? 1 : 0)
        .description("1 while the plugin runs").tag("plugin", id).register(registry);
    Gauge.builder("switchboard_plugin_given_up", plugins, p -> "GIVEN_UP".equals(p.get(id).getString("state")) ? 1 : 0)
        .description("1 once the circuit breaker gave the plugin up").tag("plugin", id).register(registry);
  }
}
