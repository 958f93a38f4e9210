package io.switchboard.web;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.cluster.RouterClient;
import io.switchboard.config.Limits;
import io.switchboard.config.Settings;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The web room: the HTTP listener, the chat page, login, {@code /api/*} and the {@code /ws/chat}
 * sockets. It is the {@code web} surface of the permission room: a card goes to every socket
 * attached to its thread, and a browser tab that closes does not close the surface. The verticle
 * owns its parts, which all run on its context: {@link HttpEdge} (router, headers, Host check,
 * request deadlines), {@link Logins}, {@link RestApi}, {@link Readiness}, {@link SocketHub} (the
 * sockets and what goes to them), {@link PendingCounts} and, in a cluster, {@link ClusterResync}.
 */
public final class WebRoom extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(WebRoom.class);
  static final String SURFACE = "web";
  /** How long a connection may take to send a whole request: from its opening, or its previous response's end. */
  public static final long REQUEST_READ_MS = 10_000;

  private final Settings settings;
  private final Limits limits;
  private final String version;
  private final long outboxStuckMs;
  private final long requestReadMs;
  private HttpServer server;
  /** How this room reaches the agent side (the agent nodes, in a cluster). */
  private RouterClient nodes;
  private Logins logins;

  /** Who a login ({@code {personId, identity, strength}}) names now, or null: gone or disabled. */
  io.switchboard.people.Principal principal(JsonObject login) {
    return logins.principal(login);
  }
  private SocketHub hub;
  private PendingCounts pending;

  public WebRoom(Settings settings, Limits limits, String version, long outboxStuckMs, long requestReadMs) {
    this.settings = settings;
    this.limits = limits;
    this.version = version;
    this.outboxStuckMs = outboxStuckMs;
    this.requestReadMs = requestReadMs;
  }

  @Override
  public Future<?> start() {
    nodes = new RouterClient(vertx, settings.cluster() != null);
    hub = new SocketHub(vertx, limits);
    pending = new PendingCounts(vertx, hub);
    logins = new Logins(vertx, settings, hub);
    HttpEdge edge = new HttpEdge(vertx, settings, this, hub, logins, requestReadMs);
    ClusterResync cluster = new ClusterResync(vertx, nodes, hub, pending, this);

    var bus = vertx.eventBus();
    bus.<JsonObject>consumer(Addresses.PERMISSION_SHOWN, m -> shown(m.body()));
    bus.<JsonObject>consumer(Addresses.PERMISSION_RESOLVED, m -> ended(m.body()));
    bus.<JsonObject>consumer(Addresses.PERMISSION_CANCELLED, m -> ended(m.body()));
    bus.<JsonObject>consumer(Addresses.PERMISSION_ATTENTION, m -> attention(m.body()));
    // The key a page subscribes to pushes with, when this gateway runs the push room (not in a cluster).
    bus.<JsonObject>request(Addresses.PUSH_KEY, new JsonObject())
        .onSuccess(m -> pushKey = m.body().getString("publicKey"));
    // Every open page hears of new threads and of each thread's waiting questions, attached or not.
    bus.<JsonObject>consumer(Addresses.THREAD_CHANGED, m -> hub.threadChanged(m.body()));
    // Cluster mode: every page hears at once that a node left, not only at its next request's timeout.
    Future<Void> nodesKnown = nodes.start(cluster::memberChanged, node -> cluster.resync(node, "agent node " + node, 1),
        cluster::relistThreads);
    nodesKnown.compose(v -> nodes.ask(Addresses.PERMISSION_PENDING, new JsonObject()))
        .onSuccess(reply -> pending.restore(reply.getJsonArray("requests")));

    Future<java.util.Set<String>> hosts = vertx.executeBlocking(() -> HostCheck.allowed(settings.http()), false);
    Future<java.nio.file.Path> pageFolder = vertx.executeBlocking(() -> PageFolder.locate(settings.tempDir()), false);
    return hosts
        .compose(names -> pageFolder)
        .compose(folder -> nodesKnown)
        .compose(v -> logins.start(nodes))
        .compose(v -> vertx.fileSystem().readFile(pageFolder.result().resolve("index.html").toString()))
        .compose(page -> edge.listen(hosts.result(), pageFolder.result(), PagePolicy.forPage(page.toString()),
            new RestApi(vertx, nodes, hub), new Readiness(vertx, nodes, outboxStuckMs)))
        .onSuccess(s -> {
          server = s;
          log.info("HTTP listening on {}:{}", settings.http().host(), s.actualPort());
        })
        .recover(err -> Future.failedFuture(new IllegalStateException(
            "cannot listen on " + settings.http().host() + ":" + settings.http().port() + ": " + err.getMessage(), err)));
  }

  /** The port actually bound (the configured one, or the free one picked for port 0). */
  public int boundPort() {
    return server.actualPort();
  }

  String version() {
    return version;
  }

  Settings settings() {
    return settings;
  }

  /** A card shown: to its thread's sockets, and counted. */
  void shown(JsonObject card) {
    hub.toThread(card.getString("threadId"), s -> s.card(card));
    pending.changed(card.getString("threadId"), card.getString("requestId"), true);
  }

  /** A reminder or escalation of a waiting card: its thread's pages highlight it again. */
  void attention(JsonObject fact) {
    String step = fact.getString("step");
    if ("remind".equals(step) || "escalate".equals(step)) {
      hub.toThread(fact.getString("threadId"), s -> s.attention(fact));
    }
  }

  /** The VAPID public key pages subscribe with; null when this gateway sends no pushes. */
  private String pushKey;

  String pushKey() {
    return pushKey;
  }

  /** A card answered or cancelled: to its thread's sockets, and no longer counted. */
  void ended(JsonObject fact) {
    hub.toThread(fact.getString("threadId"), s -> s.resolved(fact));
    pending.changed(fact.getString("threadId"), fact.getString("requestId"), false);
  }

  /** The count the pages were last told for a thread (a new page's welcome gives the same, so all agree). */
  int pendingCount(String threadId) {
    return pending.count(threadId);
  }

  /**
   * What the pages ask the rooms: in a cluster, of the agent node that owns the thread or request
   * (this node's {@code EdgeRouter}); what waits on a node that leaves fails at once as unavailable.
   */
  Future<JsonObject> ask(String address, JsonObject body) {
    return nodes.ask(address, body);
  }

  /**
   * For git work on a project (a worktree made with its setup command, a merge): waits up to the
   * project room's own bounds, not the bus's 30 s, so a slow repository is not reported as down.
   */
  Future<JsonObject> askSlow(String address, JsonObject body) {
    return nodes.ask(address, body, new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(GIT_WORK_MS));
  }

  static final long GIT_WORK_MS = 12 * 60_000;

  /** What a page shows of a thread beside its title: its node, and its project, branch and worktree state. */
  static JsonObject threadFacts(JsonObject thread) {
    JsonObject out = nodeOf(thread);
    if (thread.getString("project") != null) {
      out.put("project", thread.getString("project")).put("branch", thread.getString("branch"))
          .put("baseRef", thread.getString("baseRef")).put("worktree", thread.getString("worktree"));
    }
    return out;
  }

  /** {@code {node, incarnation}} of a thread or card in a cluster (where it runs), else nothing. */
  static JsonObject nodeOf(JsonObject thread) {
    JsonObject out = new JsonObject();
    if (thread.getString("node") != null) {
      out.put("node", thread.getString("node"));
      if (thread.getString("incarnation") != null) {
        out.put("incarnation", thread.getString("incarnation"));
      }
    }
    return out;
  }

  /** The agent nodes that are members now, by name (cluster mode). */
  java.util.List<String> agentNodes() {
    return nodes.liveNodes();
  }

  static ErrorCode code(Throwable err) {
    ErrorCode code = ErrorCode.of(err);
    if (code == null && err instanceof io.vertx.core.eventbus.ReplyException re
        && re.failureType() != io.vertx.core.eventbus.ReplyFailure.RECIPIENT_FAILURE) {
      return ErrorCode.UNAVAILABLE; // timed out, or no consumer: nothing answered
    }
    return code == null ? ErrorCode.STORE_FAILED : code;
  }

  /** What a page is told when nothing answered its request (see {@link ErrorCode#UNAVAILABLE}). */
  static final String UNAVAILABLE_TEXT = "the gateway's agent side did not answer (in a cluster: is the agent node "
      + "up?); what you asked may not have been done";
}
