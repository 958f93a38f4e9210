package io.switchboard.config;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** The gateway's whole configuration after file, environment and flags were merged and checked. */
public record Settings(Http http, Path dataDir, String defaultAgent, List<AgentSpec> agents,
                       List<PluginSpec> plugins, LogFormat logFormat) {

  /** The HTTP listener. {@code port} 0 picks a free port. */
  public record Http(String host, int port, List<String> allowedOrigins, boolean publicMetrics) {
    public Http {
      allowedOrigins = List.copyOf(allowedOrigins);
    }
  }

  public enum LogFormat { TEXT, JSON }

  public Settings {
    dataDir = dataDir.toAbsolutePath().normalize();
    agents = List.copyOf(agents);
    plugins = List.copyOf(plugins);
  }

  public Optional<AgentSpec> agent(String id) {
    return agents.stream().filter(a -> a.id().equals(id)).findFirst();
  }

  public Path databaseFile() {
    return dataDir.resolve("switchboard.db");
  }

  public Path tokenFile() {
    return dataDir.resolve("token");
  }
}
