package io.switchboard.config;

import java.util.List;
import java.util.Map;

/**
 * One configured agent: either a {@code builtin} one shipped in the jar, or a {@code command}
 * (an argv array, never a shell string) with its environment, optional working directory, and
 * the ACP auth method to use when the agent demands {@code authenticate}.
 */
public record AgentSpec(String id, String name, String builtin, List<String> command,
                        Map<String, String> env, String cwd, String authMethod) {
  public AgentSpec {
    command = command == null ? List.of() : List.copyOf(command);
    env = env == null ? Map.of() : Map.copyOf(env);
  }

  public boolean isBuiltin() {
    return builtin != null;
  }
}
