package io.switchboard.config;

import io.switchboard.process.Sandbox;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * One configured agent: either a {@code builtin} one shipped in the jar, or a {@code command}
 * (an argv array, never a shell string) with its environment, optional working directory, and
 * the ACP auth method to use when the agent demands {@code authenticate}; {@code writable}: absolute
 * paths its sandbox lets it write besides its workspace, temporary folder and own state folders.
 */
public record AgentSpec(String id, String name, String builtin, List<String> command,
                        Map<String, String> env, String cwd, String authMethod, Sandbox.Mode sandbox,
                        Integer maxProcesses, boolean shareProcess, List<Path> writable) {
  public AgentSpec {
    command = command == null ? List.of() : List.copyOf(command);
    env = env == null ? Map.of() : Map.copyOf(env);
    sandbox = sandbox == null ? Sandbox.Mode.AUTO : sandbox;
    writable = writable == null ? List.of() : List.copyOf(writable);
  }

  /** With nothing writable beyond what every sandboxed agent may write. */
  public AgentSpec(String id, String name, String builtin, List<String> command, Map<String, String> env, String cwd,
                   String authMethod, Sandbox.Mode sandbox, Integer maxProcesses, boolean shareProcess) {
    this(id, name, builtin, command, env, cwd, authMethod, sandbox, maxProcesses, shareProcess, List.of());
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
    return new AgentSpec(id, name, builtin, command, env, cwd, authMethod, mode, maxProcesses, shareProcess, writable);
  }

  /** The same agent with its own cap on running processes (null: only the overall cap) and its sharing choice. */
  public AgentSpec withProcesses(Integer max, boolean share) {
    return new AgentSpec(id, name, builtin, command, env, cwd, authMethod, sandbox, max, share, writable);
  }

  /** The same agent allowed to write {@code paths} too (absolute; {@code agents[].writable}). */
  public AgentSpec withWritable(List<Path> paths) {
    return new AgentSpec(id, name, builtin, command, env, cwd, authMethod, sandbox, maxProcesses, shareProcess, paths);
  }

  public boolean isBuiltin() {
    return builtin != null;
  }
}
