package io.switchboard.config;

import io.switchboard.process.Sandbox;
import java.util.List;
import java.util.Map;

/**
 * One configured agent: either a {@code builtin} one shipped in the jar, or a {@code command}
 * (an argv array, never a shell string) with its environment, optional working directory, and
 * the ACP auth method to use when the agent demands {@code authenticate}.
 */
public record AgentSpec(String id, String name, String builtin, List<String> command,
                        Map<String, String> env, String cwd, String authMethod, Sandbox.Mode sandbox) {
  public AgentSpec {
    command = command == null ? List.of() : List.copyOf(command);
    env = env == null ? Map.of() : Map.copyOf(env);
    sandbox = sandbox == null ? Sandbox.Mode.AUTO : sandbox;
  }

  /** With the default sandbox ({@code auto}). */
  public AgentSpec(String id, String name, String builtin, List<String> command, Map<String, String> env, String cwd,
                   String authMethod) {
    this(id, name, builtin, command, env, cwd, authMethod, Sandbox.Mode.AUTO);
  }

  public AgentSpec withSandbox(Sandbox.Mode mode) {
    return new AgentSpec(id, name, builtin, command, env, cwd, authMethod, mode);
  }

  public boolean isBuiltin() {
    return builtin != null;
  }
}
