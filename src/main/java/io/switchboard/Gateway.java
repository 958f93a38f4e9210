package io.switchboard;

import io.switchboard.agent.AgentRoom;
import io.switchboard.bus.Addresses;
import io.switchboard.bus.NodeScope;
import io.switchboard.config.Limits;
import io.switchboard.config.Settings;
import io.switchboard.metrics.MetricsRoom;
import io.switchboard.permission.PermissionRoom;
import io.switchboard.plugin.PluginRoom;
import io.switchboard.process.ProcessTree;
import io.switchboard.store.StoreRoom;
import io.switchboard.project.ProjectRoom;
import io.switchboard.push.PushRoom;
import io.switchboard.thread.ThreadRoom;
import io.switchboard.web.WebRoom;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.Deque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deploys the rooms in dependency order (store, permission, thread, agent, plugin, metrics, web; in a
 * cluster, the ones of this node's role) and stops them in
 * the order the permission promise needs: the pending table is cancelled first, while the store
 * can still record it, then the surfaces and agents go, and the database closes last.
 */
public final class Gateway {
  private static final Logger log = LoggerFactory.getLogger(Gateway.class);

  private final Vertx vertx;
  private final Settings settings;
  private final Deque<String> deployed = new ArrayDeque<>();
  private WebRoom web;

  private final String version;

  private final Tuning tuning;

  /**
   * Timings that are not configuration: tests shorten them. {@code requestReadMs}: how long the web
   * waits for a request to arrive in full (see {@link WebRoom}); {@code push}: a push's send timeout
   * and pauses (see {@link PushRoom}).
   */
  public record Tuning(PluginRoom.Timings plugins, long outboxStuckMs, long requestReadMs, PushRoom.Timings push) {
    public static final Tuning DEFAULT = new Tuning(PluginRoom.Timings.DEFAULT, 10 * 60_000);

    public Tuning(PluginRoom.Timings plugins, long outboxStuckMs) {
      this(plugins, outboxStuckMs, WebRoom.REQUEST_READ_MS, PushRoom.Timings.DEFAULT);
    }

    public Tuning(PluginRoom.Timings plugins, long outboxStuckMs, long requestReadMs) {
      this(plugins, outboxStuckMs, requestReadMs, PushRoom.Timings.DEFAULT);
    }

    public Tuning withRequestReadMs(long ms) {
      return new Tuning(plugins, outboxStuckMs, ms, push);
    }

    public Tuning withPush(PushRoom.Timings timings) {
      return new Tuning(plugins, outboxStuckMs, requestReadMs, timings);
    }
  }

  public Gateway(Vertx vertx, Settings settings, String version) {
    this(vertx, settings, version, Tuning.DEFAULT);
  }

  public Gateway(Vertx vertx, Settings settings, String version, Tuning tuning) {
    this(vertx, settings, version, tuning, null);
  }

  /** {@code incarnation}: this start of a cluster node (stamped on its facts); null when not clustered. */
  public Gateway(Vertx vertx, Settings settings, String version, Tuning tuning, String incarnation) {
    this.vertx = vertx;
    this.settings = settings;
    this.version = version;
    this.tuning = tuning;
    Settings.Cluster cluster = settings.cluster();
    this.agentScope = cluster == null ? NodeScope.SINGLE : new NodeScope(true, cluster.node(), incarnation);
    this.edgeScope = cluster == null ? NodeScope.SINGLE : new NodeScope(true, null, incarnation);
  }

  /** How the agent side's rooms serve their commands, and how an edge's own store does (this node only). */
  private final NodeScope agentScope;
  private final NodeScope edgeScope;

  /**
   * One event loop per room (and one for the launcher's own context): rooms are given loops in turn,
   * and with Vert.x's default of two per core (four here) the thread room shared the web room's
   * loop, so under load every event waited behind thousands of socket writes (the load benchmark's
   * profile, docs/performance.md). A loop is a thread and little memory; a room never waits for
   * another's work.
   */
  public static final int EVENT_LOOPS = 8;

  /**
   * {@code tempDir}: where Vert.x caches the webjars' files it serves, beside the page's unpacked from the jar
   * ({@code PageFolder}): the data directory's, never the shared /tmp.
   */
  public static io.vertx.core.VertxOptions vertxOptions(java.nio.file.Path tempDir) {
    return new io.vertx.core.VertxOptions().setEventLoopPoolSize(
        Math.max(EVENT_LOOPS, io.vertx.core.VertxOptions.DEFAULT_EVENT_LOOP_POOL_SIZE))
        .setFileSystemOptions(new io.vertx.core.file.FileSystemOptions()
            .setFileCacheDir(tempDir.resolve("vertx-cache").toString()));
  }

  /**
   * Deploys every room this JVM runs; fails (having undone what was deployed) if any room fails to
   * start. Not clustered: all of them. An agent node (cluster mode): store, permission, thread and
   * agent rooms. An edge node: a store of its own (browser sessions, the plugins' chats and their
   * own outputs), its router to the agent nodes, the plugin, metrics and web rooms; they reach the
   * agent nodes as they come.
   */
  public Future<Gateway> start() {
    Limits limits = Limits.ofThisJvm();
    Future<Void> started = settings.runsAgents() ? startAgentSide(limits)
        : deploy(new StoreRoom(settings.databaseFile()), edgeScope);
    if (settings.runsSurfaces()) {
      web = new WebRoom(settings, limits, version, tuning.outboxStuckMs(), tuning.requestReadMs());
      if (settings.cluster() == null) {
        // Pushes go out from the outbox beside the ledger: one JVM (docs/operations.md, "Notifications").
        started = started.compose(v -> deploy(new PushRoom(settings.dataDir().resolve("vapid.json"),
            PushRoom.SUBJECT, tuning.push())));
      }
      if (settings.cluster() != null) {
        // The surface rooms' one way to the agent nodes: deployed first, it knows the members when they start.
        started = started.compose(v -> deploy(new io.switchboard.cluster.EdgeRouter()));
      }
      started = started
          .compose(v -> deploy(new PluginRoom(settings, limits, version, tuning.plugins())))
          .compose(v -> deploy(new MetricsRoom(settings.cluster() != null)))
          .compose(v -> deploy(web));
    }
    if (settings.runsAgents()) {
      started = started.compose(v -> vertx.eventBus().request(Addresses.PERMISSION_ANNOUNCE_VOIDED, new JsonObject()))
          .mapEmpty();
    }
    return started.map(v -> this).recover(err -> stopRooms().transform(x -> Future.failedFuture(err)));
  }

  private Future<Void> startAgentSide(Limits limits) {
    // A gateway killed with SIGKILL could not stop what it started: its leftovers die before anything starts.
    String owner = ProcessTree.ownerOf(settings.dataDir());
    return vertx.<Integer>executeBlocking(() -> ProcessTree.killOwned(owner), false)
        .onSuccess(n -> {
          if (n > 0) {
            log.warn("killed {} processes that an earlier gateway on this data directory left running", n);
          }
        })
        .transform(x -> deploy(new StoreRoom(settings.databaseFile()), agentScope))
        .compose(v -> deploy(new PermissionRoom(limits).attention(settings.attention()).rules(settings.rules())
            .people(settings.people())
            .edgeGrace(settings.cluster() == null ? 0 : settings.cluster().edgeGraceSeconds() * 1000L), agentScope))
        .compose(v -> deploy(new ProjectRoom(settings), agentScope))
        .compose(v -> deploy(new ThreadRoom(settings), agentScope))
        .compose(v -> deploy(new AgentRoom(settings, AgentRoom.Timings.DEFAULT, limits,
            limits.agentQuestions(), io.switchboard.process.Sandbox::probe), agentScope));
  }

  public int port() {
    return web.boundPort();
  }

  /** Cancels pending permissions (ledger first), then undeploys the rooms in reverse order. */
  public Future<Void> stop() {
    Future<?> cancelled = deployed.isEmpty() || !settings.runsAgents() ? Future.succeededFuture()
        : vertx.eventBus().request(Addresses.PERMISSION_SHUTDOWN, new JsonObject(),
                new DeliveryOptions().setSendTimeout(10_000))
            .onSuccess(m -> log.info("stopping: {} pending permission requests cancelled",
                ((JsonObject) m.body()).getInteger("cancelled")))
            .onFailure(err -> log.error("stopping: could not cancel the pending permission requests", err));
    return cancelled.transform(x -> stopRooms());
  }

  private Future<Void> deploy(io.vertx.core.Deployable room) {
    return deploy(room, edgeScope);
  }

  private Future<Void> deploy(io.vertx.core.Deployable room, NodeScope scope) {
    return vertx.deployVerticle(room, new DeploymentOptions().setThreadingModel(ThreadingModel.EVENT_LOOP)
            .setConfig(scope.toConfig()))
        .map(id -> {
          deployed.push(id);
          return null;
        });
  }

  private Future<Void> stopRooms() {
    if (deployed.isEmpty()) {
      return Future.succeededFuture();
    }
    String id = deployed.pop();
    return vertx.undeploy(id)
        .onFailure(err -> log.error("a room failed to stop cleanly", err))
        .transform(x -> stopRooms());
  }
}
