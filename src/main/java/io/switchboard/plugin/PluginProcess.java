package io.switchboard.plugin;

import io.switchboard.bus.Addresses;
import io.switchboard.config.Limits;
import io.switchboard.config.PluginSpec;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.switchboard.jsonrpc.StdioProcess;
import io.switchboard.process.ProcessTree;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;

/**
 * A plugin's process generations: spawns them, restarts one that died after a backoff (doubling,
 * capped, with jitter), gives the plugin up when it fails too often, restarts one whose heartbeats
 * stop, and ends its chats' part in pending requests when no generation comes back in time.
 */
final class PluginProcess {
  private static final Logger log = PluginSupervisor.log;

  enum State { STARTING, RUNNING, BACKING_OFF, GIVEN_UP, STOPPED }

  private final PluginSupervisor plugin;
  private final Context context;
  private final PluginSpec spec;
  private final String tag;
  private final Limits limits;
  private final PluginRoom.Timings timings;
  private final Path stateDir;
  private final ArrayDeque<Long> failures = new ArrayDeque<>();
  private State state = State.STARTING;
  private Generation gen;
  private int generations;
  private int restarts;
  private long restartTimer = -1;
  /** When the next generation is due (epoch ms) while backing off; null when none is. */
  private Long restartAt;
  /** Runs while no generation answers: when it fires, the plugin's chats leave the pending requests. */
  private long surfaceGrace = -1;

  PluginProcess(PluginSupervisor plugin, Limits limits, PluginRoom.Timings timings, Path stateDir) {
    this.plugin = plugin;
    this.context = plugin.context;
    this.spec = plugin.spec;
    this.tag = plugin.tag;
    this.limits = limits;
    this.timings = timings;
    this.stateDir = stateDir;
  }

  /** The generation running now, or null while none is. */
  Generation current() {
    return gen;
  }

  State state() {
    return state;
  }

  int restarts() {
    return restarts;
  }

  Long restartAt() {
    return restartAt;
  }

  void start() {
    spawn();
  }

  Future<?> stop() {
    state = State.STOPPED;
    context.owner().cancelTimer(restartTimer);
    restartAt = null;
    context.owner().cancelTimer(surfaceGrace);
    return gen == null ? Future.succeededFuture() : gen.process.stop();
  }

  private void spawn() {
    restartAt = null;
    if (state == State.STOPPED || state == State.GIVEN_UP) {
      return;
    }
    state = State.STARTING;
    Generation g = new Generation(++generations, limits.processQueueBytes());
    g.peer = new JsonRpcPeer(tag, line -> g.process == null ? Future.failedFuture("not started") : g.process.write(line));
    g.peer.handler(plugin.speaking(g));
    context.owner().<StdioProcess>executeBlocking(() -> {
      PluginRoom.ensureStateDir(stateDir);
      Map<String, String> env = new HashMap<>(spec.env());
      env.put(plugin.dialect.envStateDir(), stateDir.toString());
      Path cwd = spec.cwd() == null ? stateDir : Path.of(spec.cwd());
      return StdioProcess.spawn(context, spec.command(), env, cwd, tag, ProcessTree.ownerOf(plugin.settings.dataDir()),
          limits, g.peer.listener(bytes ->
          log.warn("[{}] dropped a line of {} bytes (limit {})", tag, bytes, limits.lineBytes())));
    }, false).onSuccess(process -> {
      g.process = process;
      gen = g;
      state = State.RUNNING;
      process.exited().onComplete(code -> exited(g, code.result()));
    }).onFailure(err -> {
      log.error("[{}] cannot start: {}", tag, err.getMessage());
      failed();
    });
  }

  private void exited(Generation g, Integer code) {
    g.peer.close("the plugin exited");
    context.owner().cancelTimer(g.watchdog);
    log.warn("[{}] generation {} exited with code {}", tag, g.number, code);
    plugin.died(g);
    if (gen != g) {
      return;
    }
    gen = null;
    if (state == State.STOPPED) {
      return;
    }
    // A restart is not the chats leaving: their cards stay answerable for a grace period.
    if (surfaceGrace < 0) {
      surfaceGrace = context.owner().setTimer(timings.surfaceGraceMs(), t -> {
        surfaceGrace = -1;
        if (gen == null || !gen.ready) {
          log.warn("[{}] not back within {} s: its chats leave the pending permission requests", tag,
              timings.surfaceGraceMs() / 1000);
          plugin.bus.publish(Addresses.SURFACE_CLOSED, new JsonObject().put("plugin", spec.id()));
        }
      });
    }
    failed();
  }

  /** A generation died or could not start: back off and try again, or give the plugin up. */
  private void failed() {
    long now = System.currentTimeMillis();
    failures.addLast(now);
    while (!failures.isEmpty() && failures.peekFirst() < now - timings.breakerWindowMs()) {
      failures.pollFirst();
    }
    if (failures.size() >= timings.breakerFailures()) {
      state = State.GIVEN_UP;
      context.owner().cancelTimer(surfaceGrace);
      surfaceGrace = -1;
      log.error("[{}] given up: it failed {} times within {} s; fix it and restart the gateway", tag,
          failures.size(), timings.breakerWindowMs() / 1000);
      // What only this plugin could answer ends now (cards raised while it was down included).
      plugin.bus.publish(Addresses.SURFACE_CLOSED, new JsonObject().put("plugin", spec.id()).put("givenUp", true));
      return;
    }
    long delay = Math.min(timings.backoffCapMs(), timings.backoffBaseMs() << Math.min(20, failures.size() - 1));
    delay = (long) (delay * (0.75 + ThreadLocalRandom.current().nextDouble() / 2));
    state = State.BACKING_OFF;
    restarts++;
    log.info("[{}] restarting in {} ms", tag, delay);
    restartAt = System.currentTimeMillis() + Math.max(1, delay);
    restartTimer = context.owner().setTimer(Math.max(1, delay), t -> spawn());
  }

  /** The generation answered initialize: an acp plugin can show outputs now, and its chats keep their cards. */
  void initialized(Generation g) {
    g.ready = true;
    g.rendering = plugin.dialect.acknowledges();
    if (gen == g && surfaceGrace >= 0) {
      context.owner().cancelTimer(surfaceGrace); // back in time: its chats keep their cards
      surfaceGrace = -1;
    }
  }

  /**
   * A heartbeat or a prompt proves a vibearound plugin can show what it is sent (its renderer
   * exists). Whether the generation can show outputs from now on (it could not before).
   */
  boolean heardFrom(Generation g, String method) {
    if (!g.rendering && g.ready && (method.endsWith("heartbeat") || method.equals("session/prompt"))) {
      g.rendering = true;
      log.info("[{}] generation {} can show outputs now", tag, g.number);
      return true;
    }
    return false;
  }

  /** A heartbeat (re)arms the watchdog: a generation silent for its period is restarted. */
  void heartbeat(Generation g) {
    context.owner().cancelTimer(g.watchdog);
    g.watchdog = context.owner().setTimer(timings.watchdogMs(), t -> {
      if (gen == g) {
        log.warn("[{}] no heartbeat for {} s: restarting it", tag, timings.watchdogMs() / 1000);
        g.process.stop();
      }
    });
  }
}
