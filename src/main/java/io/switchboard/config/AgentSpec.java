package io.switchboard.config;

import java.util.List;
import java.util.Map;

/**
 * One configured agent: either a {@code builtin} one shipped in the jar, or a {@code command}
 * (an argv array, never a shell string) with its environment and optional working directory.
 */
public record AgentSpec(String id, String name, String builtin, List<String> command,
                        Map<String, String> env, String cwd) {
  public AgentSpec {
    command = command == null ? List.of() : List.copyOf(command);
    env = env == null ? Map.of() : Map.copyOf(env);
  }

  public boolean isBuiltin() {
    return builtin != null;
  }
}
