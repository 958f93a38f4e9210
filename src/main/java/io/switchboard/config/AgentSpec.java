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
                        Map<String, String> env, String cwd, String authMethod, Sandbox.Mode sandbox,
                        Integer maxProcesses, boolean shareProcess) {
  public AgentSpec {
    command = command == null ? List.of() : List.copyOf(command);
    env = env == null ? Map.of() : Map.copyOf(env);
    sandbox = sandbox == null ? Sandbox.Mode.AUTO : sandbox;
  }

  /** With no cap of its own and a process per thread, unless it is the built-in agent (one shared process). */
  public AgentSpec(String id, String name, String builtin, List<String> command, Map<String, String> env, String cwd,
                   String authMethod, Sandbox.Mode sandbox) {
    this(id, name, builtin, command, env, cwd, authMethod, sandbox, null, builtin != null);
  }

  /** With the default sandbox ({@code auto}). */
  public AgentSpec(String id, String name, String builtin, List<String> command, Map<String, String> env, String cwd,
                   String authMethod) {
    this(id, name, builtin, command, env, cwd, authMethod, Sandbox.Mode.AUTO);
  }

  public AgentSpec withSandbox(Sandbox.Mode mode) {
    return new AgentSpec(id, name, builtin, command, env, cwd, authMethod, mode, maxProcesses, shareProcess);
  }

  /** The same agent with its own cap on running processes (null: only the overall cap) and its sharing choice. */
  public AgentSpec withProcesses(Integer max, boolean share) {
    return new AgentSpec(id, name, builtin, command, env, cwd, authMethod, sandbox, max, share);
  }

  public boolean isBuiltin() {
    return builtin != null;
  }
}
