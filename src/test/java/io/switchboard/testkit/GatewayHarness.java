package io.switchboard.testkit;

import static io.switchboard.testkit.PermissionHarness.await;

import io.switchboard.Gateway;
import io.switchboard.config.AccessToken;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.PluginSpec;
import io.switchboard.config.Settings;
import io.switchboard.plugin.PluginRoom;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.List;

/** The whole gateway in this JVM (every room, a real HTTP port), with a known access token. */
public final class GatewayHarness implements AutoCloseable {
  public final Vertx vertx;
  public final Path dataDir;
  public final Settings settings;
  public final String token;
  private final Gateway gateway;
  public final int port;

  public GatewayHarness(Vertx vertx, Path dataDir, List<String> allowedOrigins, AgentSpec... agents) throws Exception {
    this(vertx, dataDir, allowedOrigins, List.of(), Gateway.Tuning.DEFAULT, agents);
  }

  public GatewayHarness(Vertx vertx, Path dataDir, List<String> allowedOrigins, List<PluginSpec> plugins,
                        PluginRoom.Timings pluginTimings, AgentSpec... agents) throws Exception {
    this(vertx, dataDir, allowedOrigins, plugins, new Gateway.Tuning(pluginTimings, Gateway.Tuning.DEFAULT.outboxStuckMs()),
        agents);
  }

  public GatewayHarness(Vertx vertx, Path dataDir, List<String> allowedOrigins, List<PluginSpec> plugins,
                        Gateway.Tuning tuning, AgentSpec... agents) throws Exception {
    this(vertx, dataDir, 0, allowedOrigins, plugins, tuning, agents);
  }

  /** On a given port (0: a free one): a restarted gateway a page reconnects to. */
  public GatewayHarness(Vertx vertx, Path dataDir, int port, List<String> allowedOrigins, List<PluginSpec> plugins,
                        Gateway.Tuning tuning, AgentSpec... agents) throws Exception {
    this(vertx, new Settings(new Settings.Http("127.0.0.1", port, allowedOrigins, false), dataDir,
        agents[0].id(), List.of(agents), plugins, Settings.LogFormat.TEXT), tuning);
  }

  /** On settings of the test's own (projects, a default project...). */
  public GatewayHarness(Vertx vertx, Settings settings, Gateway.Tuning tuning) throws Exception {
    this.vertx = vertx;
    this.dataDir = settings.dataDir();
    this.settings = settings;
    AccessToken.ensurePrivateDirectory(dataDir);
    this.token = new AccessToken(settings.tokenFile()).ensure().token();
    this.gateway = await(new Gateway(vertx, settings, "test", tuning).start());
    this.port = gateway.port();
  }

  /** The same settings with these projects, the first the default (threads start in it unless told otherwise). */
  public static Settings withProjects(Settings base, List<io.switchboard.config.ProjectSpec> projects) {
    return new Settings(base.http(), base.dataDir(), base.defaultAgent(), base.agents(), base.plugins(),
        base.logFormat(), base.agentProcesses(), base.cluster(), projects, projects.isEmpty() ? null
        : projects.get(0).id());
  }

  public String url(String path) {
    return "http://127.0.0.1:" + port + path;
  }

  public Path workspace(String threadId) {
    return dataDir.resolve("workspaces").resolve(threadId);
  }

  @Override
  public void close() {
    await(gateway.stop());
  }
}
