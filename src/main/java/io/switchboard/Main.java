package io.switchboard;

import io.switchboard.cli.CommandLine;
import io.switchboard.cli.Doctor;
import io.switchboard.cli.UsageException;
import io.switchboard.config.AccessToken;
import io.switchboard.config.ConfigException;
import io.switchboard.config.Settings;
import io.switchboard.config.SettingsLoader;
import io.switchboard.logging.LogSetup;
import io.switchboard.store.LedgerReader;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/** The launcher: parses the command line, loads the settings, and runs a subcommand. */
public final class Main {
  static final int OK = 0;
  static final int FAILED = 1;
  static final int BAD_USAGE = 2;

  private final Map<String, String> env;
  private final PrintStream out;
  private final PrintStream err;

  Main(Map<String, String> env, PrintStream out, PrintStream err) {
    this.env = env;
    this.out = out;
    this.err = err;
  }

  public static void main(String[] args) {
    // Netty 4.2 registers JFR events for its buffers at the first allocation: about 60 ms of the
    // first HTTP answer, for events nobody records (docs/performance.md). -Dio.netty.jfr.enabled=true restores them.
    if (System.getProperty("io.netty.jfr.enabled") == null) {
      System.setProperty("io.netty.jfr.enabled", "false");
    }
    int code = new Main(System.getenv(), System.out, System.err).run(args);
    if (code != OK) {
      System.exit(code);
    }
  }

  /** Runs a subcommand; for {@code serve} it returns once the gateway is up and leaves it running. */
  int run(String[] args) {
    CommandLine cli;
    try {
      cli = CommandLine.parse(Arrays.asList(args));
    } catch (UsageException e) {
      err.println("switchboard: " + e.getMessage());
      err.println("Run with --help for usage.");
      return BAD_USAGE;
    }
    switch (cli.command()) {
      case HELP -> {
        out.print(CommandLine.USAGE);
        return OK;
      }
      case VERSION -> {
        out.println("switchboard " + version());
        return OK;
      }
      case CLUSTER -> {
        return cluster(cli);
      }
      default -> { }
    }
    SettingsLoader.Loaded loaded;
    try {
      loaded = SettingsLoader.load(env, cli.flags());
    } catch (ConfigException e) {
      err.println("switchboard: configuration error: " + e.getMessage());
      return BAD_USAGE;
    }
    Settings settings = loaded.settings();
    LogSetup.configure(settings.logFormat());
    if ((cli.command() == CommandLine.Command.DOCTOR || cli.command() == CommandLine.Command.LEDGER)
        && Files.isDirectory(settings.dataDir())) {
      try {
        io.switchboard.config.DataDirectory.prepareTemp(settings.tempDir(), false);
        useOwnTemp(settings.tempDir());
      } catch (IOException e) {
        err.println("switchboard: cannot prepare " + settings.tempDir() + ": " + e.getMessage());
        return FAILED;
      }
    }
    return switch (cli.command()) {
      case TOKEN -> token(settings, cli.rotate());
      case DOCTOR -> new Doctor(settings, out).run() == 0 ? OK : FAILED;
      case LEDGER -> ledger(settings, cli);
      case POLICY -> policy(settings, cli.options());
      default -> serve(settings, loaded.source());
    };
  }

  /**
   * {@code cluster ca} and {@code cluster cert}: the cluster's authority and its nodes' certificates
   * (docs/operations.md, "Cluster"). Needs the cluster libraries, like cluster mode itself.
   */
  private int cluster(CommandLine cli) {
    java.util.Map<String, String> o = cli.options();
    java.time.Instant now = java.time.Instant.now();
    try {
      if (cli.action().equals("ca")) {
        Path dir = Path.of(o.getOrDefault("dir", "cluster-ca")).toAbsolutePath().normalize();
        java.security.cert.X509Certificate ca = io.switchboard.cluster.ClusterAuthority.create(dir, now);
        out.println("The cluster's authority is in " + dir + ": " + io.switchboard.cluster.NodeCertificate.AUTHORITY
            + " (" + ca.getSubjectX500Principal().getName() + ", until " + ca.getNotAfter().toInstant() + ") and "
            + io.switchboard.cluster.ClusterAuthority.AUTHORITY_KEY + " (0600: keep it on this machine, never on a node)."
            + "\nIssue each node its certificate: cluster cert --name NODE --address HOST --ca " + dir);
        return OK;
      }
      String name = o.get("name");
      Path ca = Path.of(o.getOrDefault("ca", "cluster-ca")).toAbsolutePath().normalize();
      Path dir = Path.of(o.getOrDefault("out", Path.of("cluster-certs", name).toString())).toAbsolutePath().normalize();
      int days = Integer.parseInt(o.getOrDefault("days",
          Integer.toString(io.switchboard.cluster.ClusterAuthority.DEFAULT_NODE_DAYS)));
      java.security.cert.X509Certificate cert = io.switchboard.cluster.ClusterAuthority.issue(ca, name,
          o.get("address"), dir, days, now);
      out.println("Node " + name + " at " + o.get("address") + ": " + dir + " holds node.crt (until "
          + cert.getNotAfter().toInstant() + "), node.key (0600) and ca.crt.\nCopy the folder to the node as "
          + "DATA_DIR/" + io.switchboard.config.Settings.Cluster.DEFAULT_TLS_DIR + " (or set cluster.tlsDir), "
          + "e.g. scp -rp " + dir + " NODE:/var/lib/switchboard/" + io.switchboard.config.Settings.Cluster.DEFAULT_TLS_DIR);
      return OK;
    } catch (NoClassDefFoundError e) {
      err.println("switchboard: the cluster's certificates are made with the cluster libraries, which the jar leaves "
          + "out: run java -cp 'switchboard.jar:cluster/*' io.switchboard.Main cluster ... (docs/operations.md, "
          + "\"Cluster\"); missing: " + e.getMessage());
      return FAILED;
    } catch (IOException | java.security.GeneralSecurityException | IllegalStateException e) {
      String why = e instanceof java.nio.file.FileSystemException f && f.getReason() != null
          ? f.getFile() + ": " + f.getReason() : e.getMessage();
      err.println("switchboard: cluster " + cli.action() + ": " + why);
      return FAILED;
    }
  }

  /**
   * {@code policy check}: the config's rules and the grants in the database (read-only, safe beside
   * a running gateway), tried on one tool call; prints the deciding rule, or that a person is asked.
   */
  private int policy(Settings settings, java.util.Map<String, String> o) {
    io.switchboard.rules.RuleBook book = new io.switchboard.rules.RuleBook();
    settings.rules().forEach(book::put);
    Path db = settings.databaseFile();
    if (Files.exists(db)) {
      try {
        for (Object r : io.switchboard.store.LedgerReader.rules(db)) {
          io.switchboard.rules.Rule rule = io.switchboard.rules.Rule.fromJson((JsonObject) r);
          if ("grant".equals(rule.source())) {
            book.put(rule);
          }
        }
      } catch (Exception e) {
        err.println("switchboard: cannot read the grants in " + db + ": " + e.getMessage());
        return FAILED;
      }
    }
    JsonObject raw = new JsonObject();
    if (o.containsKey("command")) {
      raw.put("command", o.get("command"));
    }
    if (o.containsKey("path")) {
      raw.put("path", o.get("path"));
    }
    if (o.containsKey("url")) {
      raw.put("url", o.get("url"));
    }
    Path cwd = o.containsKey("cwd") ? Path.of(o.get("cwd")).toAbsolutePath()
        : o.containsKey("project") && settings.project(o.get("project")).isPresent()
            ? settings.project(o.get("project")).get().path() : Path.of("").toAbsolutePath();
    io.switchboard.rules.ToolFacts facts = io.switchboard.rules.ToolFacts.of(o.get("agent"), o.get("project"),
        o.get("thread"), new JsonObject().put("kind", o.get("kind")).put("title", o.get("title")).put("rawInput", raw),
        cwd);
    io.switchboard.rules.RuleBook.Decision d = book.decide(facts, System.currentTimeMillis());
    if (facts.command() == null && o.containsKey("command")) {
      out.println("note: the command is not one plain command (a shell metacharacter, a glob or a quote left open): "
          + "no allow rule applies to it; deny and ask rules look for their words in every part of it");
    }
    if (d == null) {
      out.println("ask: no rule matches; a person is asked");
    } else {
      out.println(d.effect().key() + ": rule " + d.rule().ref() + " (" + d.rule().source() + ") — "
          + d.rule().toJson().getString("words"));
      out.println("matched: " + String.join("; ", d.matched()));
    }
    return OK;
  }

  private int ledger(Settings settings, CommandLine cli) {
    Path db = settings.databaseFile();
    if (!Files.exists(db)) {
      err.println("switchboard: no database at " + db + " (has the gateway run with this data directory?)");
      return FAILED;
    }
    if (cli.verify()) {
      return verifyLedger(db);
    }
    JsonArray requests;
    try {
      requests = LedgerReader.requests(db, cli.state().equals("pending"), cli.limit());
    } catch (Exception e) {
      err.println("switchboard: cannot read the ledger in " + db + ": " + e.getMessage());
      return FAILED;
    }
    if (cli.json()) {
      out.println(requests.encodePrettily());
      return OK;
    }
    if (requests.isEmpty()) {
      out.println("No permission requests" + (cli.state().equals("pending") ? " pending." : " yet."));
      return OK;
    }
    out.printf("%-24s %-26s %-18s %-28s %-24s %s%n", "ASKED", "REQUEST", "THREAD", "TOOL CALL", "OUTCOME", "BY");
    for (Object o : requests) {
      JsonObject r = (JsonObject) o;
      JsonObject outcome = r.getJsonObject("outcome");
      String verdict = outcome == null ? "pending" : "selected".equals(outcome.getString("outcome"))
          ? outcome.getString("optionId") + " (" + outcome.getString("kind") + ")"
          : "expired".equals(outcome.getString("outcome")) ? "expired: " + outcome.getString("rule")
          : "cancelled: " + outcome.getString("reason");
      JsonObject by = outcome == null ? null : outcome.getJsonObject("answeredBy");
      String who = by == null ? "" : (by.getString("user") == null ? "" : by.getString("user") + " on ")
          + by.getString("surface");
      out.printf("%-24s %-26s %-18s %-28s %-24s %s%n",
          java.time.Instant.ofEpochMilli(r.getLong("createdAt")).toString(), r.getString("requestId"),
          r.getString("threadId"), shorten(r.getJsonObject("toolCall").getString("title",
              r.getJsonObject("toolCall").getString("toolCallId")), 28), shorten(verdict, 24), who);
      String steps = attentionSteps(r.getJsonArray("events", new JsonArray()), r.getLong("createdAt"));
      if (!steps.isEmpty()) {
        out.println("  " + steps);
      }
    }
    return OK;
  }

  /** The ledger's events that say what reached people while a request waited, and its expiry. */
  private static final java.util.Set<String> ATTENTION_EVENTS = java.util.Set.of("pushed", "reminded", "escalated",
      "expired");
  private static final java.time.format.DateTimeFormatter HOUR_MINUTE =
      java.time.format.DateTimeFormatter.ofPattern("HH:mm");

  /**
   * A request's attention steps in order, "pushed 12:01, reminded 12:06, escalated 12:10 (to
   * chat:boss)", in UTC like the ASKED column (the date too when not the day it was asked); "" when none.
   */
  static String attentionSteps(JsonArray events, long askedAt) {
    java.time.LocalDate askedOn = java.time.Instant.ofEpochMilli(askedAt).atZone(java.time.ZoneOffset.UTC)
        .toLocalDate();
    java.util.List<String> steps = new java.util.ArrayList<>();
    for (Object o : events) {
      JsonObject e = (JsonObject) o;
      String event = e.getString("event");
      if (!ATTENTION_EVENTS.contains(event)) {
        continue;
      }
      java.time.ZonedDateTime at = java.time.Instant.ofEpochMilli(e.getLong("at")).atZone(java.time.ZoneOffset.UTC);
      String detail = e.getString("detail");
      steps.add(event + " " + (at.toLocalDate().equals(askedOn) ? "" : at.toLocalDate() + " ") + HOUR_MINUTE.format(at)
          + (event.equals("escalated") && detail != null ? " (" + detail + ")" : ""));
    }
    return String.join(", ", steps);
  }

  private int verifyLedger(Path db) {
    LedgerReader.Verification v;
    try {
      v = LedgerReader.verify(db);
    } catch (Exception e) {
      err.println("switchboard: cannot read the ledger in " + db + ": " + e.getMessage());
      return FAILED;
    }
    if (!v.intact()) {
      out.println("The ledger is broken at audit event " + v.brokenEventId() + " (request " + v.brokenRequestId()
          + "): " + v.why() + ". " + v.chained() + " events before it check out.");
      return FAILED;
    }
    out.println("The ledger is intact: " + v.chained() + " audit events chained"
        + (v.unchained() == 0 ? "." : ", after " + v.unchained() + " written before the chain existed."));
    return OK;
  }

  private static String shorten(String s, int max) {
    if (s == null) {
      return "";
    }
    return s.length() <= max ? s : s.substring(0, max - 1) + "…";
  }

  private int token(Settings settings, boolean rotate) {
    AccessToken token = new AccessToken(settings.tokenFile());
    try {
      if (rotate) {
        out.println(token.rotate());
        err.println("switchboard: a new access token was made (shown this once; the file " + token.file()
            + " keeps only its hash); the old one no longer works once the gateway reads it (restart a running gateway)");
        return OK;
      }
      AccessToken.Ensured ensured = token.ensure();
      if (ensured.token() == null) {
        err.println("switchboard: the access token is kept only as a hash in " + token.file() + " and was shown "
            + "when it was made; run `token --rotate` to make a new one (shown once)");
        return FAILED;
      }
      out.println(ensured.token());
      if (!ensured.created()) {
        err.println("switchboard: that token was kept in clear by an earlier release; the file now keeps only its "
            + "hash, and this is the last time it is shown");
      }
      return OK;
    } catch (IOException e) {
      err.println("switchboard: cannot use the token file " + token.file() + ": " + e.getMessage());
      return FAILED;
    }
  }

  private int serve(Settings settings, String source) {
    Logger log = LoggerFactory.getLogger(Main.class);
    AccessToken token = new AccessToken(settings.tokenFile());
    AccessToken.Ensured ensured;
    FileLock lock;
    try {
      io.switchboard.config.DataDirectory.prepare(settings.dataDir());
      lock = lockDataDir(settings.dataDir());
      if (lock == null) {
        err.println("switchboard: another Switchboard is already running with the data directory "
            + settings.dataDir());
        return FAILED;
      }
      // Held by this gateway alone from here: what an earlier one left in its temporary folder goes.
      io.switchboard.config.DataDirectory.prepareTemp(settings.tempDir(), true);
      useOwnTemp(settings.tempDir());
      // No agent runs yet: the temporary folders of shared and one-off processes start empty (a
      // thread's own stays with the thread, and goes when it is deleted).
      io.switchboard.config.DataDirectory.emptySandboxTemps(settings.dataDir().resolve("sandbox"));
      // An agent node has no web room: no token to make or print.
      ensured = settings.runsSurfaces() ? token.ensure() : new AccessToken.Ensured(null, false, null);
    } catch (IOException e) {
      err.println("switchboard: cannot prepare the data directory " + settings.dataDir() + ": " + e.getMessage());
      return FAILED;
    }

    log.info("Switchboard {} starting with {} (data in {})", version(), source, settings.dataDir());
    if (isEveryInterface(settings.http().host())) {
      log.warn("listening on every interface ({}) over plain HTTP: the token and your prompts cross the network "
          + "in clear; put a TLS reverse proxy in front (docs/operations.md), or listen on 127.0.0.1",
          settings.http().host());
    }
    Settings.Cluster cluster = settings.cluster();
    String incarnation = null;
    Vertx vertx;
    if (cluster == null) {
      vertx = Vertx.vertx(Gateway.vertxOptions(settings.tempDir()));
    } else {
      try {
        incarnation = io.switchboard.cluster.ClusterNode.newIncarnation();
        log.info("cluster node {} ({} node, incarnation {}) joining {} from {}:{}", cluster.node(),
            cluster.role().name().toLowerCase(java.util.Locale.ROOT), incarnation, cluster.members(), cluster.host(),
            cluster.port());
        vertx = io.switchboard.cluster.ClusterNode.join(Gateway.vertxOptions(settings.tempDir()), cluster, incarnation)
            .await(60, TimeUnit.SECONDS);
      } catch (NoClassDefFoundError e) {
        err.println("switchboard: cluster mode needs the cluster libraries on the class path, which the jar leaves "
            + "out: run java -cp 'switchboard.jar:cluster/*' io.switchboard.Main ... (docs/operations.md, \"Cluster\"); "
            + "missing: " + e.getMessage());
        return FAILED;
      } catch (Exception e) {
        err.println("switchboard: could not join the cluster as node " + cluster.node() + " on " + cluster.host() + ":"
            + cluster.port() + ": " + (e.getMessage() == null ? e.toString() : e.getMessage()));
        log.error("joining the cluster failed", e);
        return FAILED;
      }
    }
    Gateway gateway;
    try {
      gateway = new Gateway(vertx, settings, version(), Gateway.Tuning.DEFAULT, incarnation).start()
          .await(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      String why = e.getMessage() == null ? e.toString() : e.getMessage();
      err.println("switchboard: failed to start: " + why);
      log.error("start-up failed", e);
      vertx.close();
      return FAILED;
    }
    if (!settings.runsSurfaces()) {
      out.println("Switchboard " + version() + " agent node " + cluster.node() + " (incarnation " + incarnation
          + ") ready in the cluster at " + cluster.host() + ":" + cluster.port() + "; its agents answer the edge "
          + "nodes' surfaces");
      out.flush();
      return stopOnSignal(log, gateway, vertx, lock);
    }

    String host = settings.http().host().contains(":") ? "[" + settings.http().host() + "]" : settings.http().host();
    out.println("Switchboard " + version() + " listening on http://" + host + ":" + gateway.port()
        + "/ (the token file " + token.file() + " keeps only the access token's hash)");
    if (ensured.created()) {
      out.println("A new access token was created (shown this once): " + ensured.token());
    } else if (ensured.token() != null) {
      out.println("The token file now keeps only the token's hash; the token is unchanged (shown this once): "
          + ensured.token());
    }
    out.flush();
    return stopOnSignal(log, gateway, vertx, lock);
  }

  private int stopOnSignal(Logger log, Gateway gateway, Vertx vertx, FileLock lock) {
    // Two signals (TERM then INT, or TERM twice) start one stop: the first to flip this runs it.
    java.util.concurrent.atomic.AtomicBoolean stopping = new java.util.concurrent.atomic.AtomicBoolean();
    Runnable stop = () -> {
      if (!stopping.compareAndSet(false, true)) {
        return;
      }
      log.info("stopping");
      int code = OK;
      try {
        gateway.stop().await(30, TimeUnit.SECONDS);
        vertx.close().await(10, TimeUnit.SECONDS);
        lock.release();
        lock.channel().close();
      } catch (Exception e) {
        log.error("did not stop cleanly", e);
        code = FAILED;
      }
      log.info("stopped");
      System.exit(code);
    };
    // A graceful stop on SIGTERM/SIGINT exits 0; a JVM shutdown hook alone would exit 143.
    for (String signal : new String[] {"TERM", "INT"}) {
      Signal.handle(new Signal(signal), s -> new Thread(stop, "switchboard-stop").start());
    }
    return OK;
  }

  /** An exclusive lock on the data directory, or null when another process holds it. */
  /**
   * Points everything that unpacks or caches files the gateway then loads or serves (the JVM's
   * temporary folder, sqlite-jdbc's native library, Vert.x's file cache of the page) at the data
   * directory's own folder, which no agent's sandbox shows, however the JVM was started: in the
   * host's shared temporary folder an agent could patch the library the gateway loads or the page
   * it serves (issue 42). sqlite-jdbc's own library path (the systemd unit sets it) still wins.
   * Process-wide settings, set once by the launcher before anything reads them.
   */
  private static void useOwnTemp(Path temp) {
    System.setProperty("java.io.tmpdir", temp.toString());
    System.setProperty("org.sqlite.tmpdir", temp.toString());
    System.setProperty("vertx.cacheDirBase", temp.resolve("vertx-cache").toString());
  }

  private static FileLock lockDataDir(Path dataDir) throws IOException {
    FileChannel channel = FileChannel.open(dataDir.resolve(".lock"), StandardOpenOption.CREATE,
        StandardOpenOption.WRITE);
    FileLock lock = channel.tryLock();
    if (lock == null) {
      channel.close();
    }
    return lock;
  }

  static String version() {
    String v = Main.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }

  /** Whether a listen address means every interface (reachable from the network). */
  static boolean isEveryInterface(String host) {
    return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]") || host.isBlank();
  }
}
