package io.switchboard.agent;

import io.switchboard.jsonrpc.JsonRpcError;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code terminal/*} client methods for one agent session: commands run as argv (no shell)
 * inside the workspace, their output kept up to a byte limit (cut from the front, on a character
 * boundary). Every terminal is killed when the session ends. Used on the agent room's event loop;
 * spawning runs on a worker thread, and each terminal's output is read by a thread of its own.
 */
final class Terminals {
  static final int DEFAULT_OUTPUT_LIMIT = 1024 * 1024;
  static final int MAX_OUTPUT_LIMIT = 16 * 1024 * 1024;
  static final int MAX_TERMINALS = 32;

  private final Context context;
  private final Workspace workspace;
  private final String name;
  private final Map<String, Terminal> terminals = new HashMap<>();
  private int nextId;

  Terminals(Context context, Workspace workspace, String name) {
    this.context = context;
    this.workspace = workspace;
    this.name = name;
  }

  /** One running (or finished) command and its retained output. */
  private static final class Terminal {
    final Process process;
    final int limit;
    byte[] output = new byte[0];
    boolean truncated;
    boolean killed;
    JsonObject exitStatus;
    final List<Promise<Object>> waiters = new ArrayList<>();

    Terminal(Process process, int limit) {
      this.process = process;
      this.limit = limit;
    }

    void append(byte[] bytes, int n) {
      int keep = output.length + n;
      byte[] merged = Arrays.copyOf(output, keep);
      System.arraycopy(bytes, 0, merged, output.length, n);
      if (keep > limit) {
        int from = keep - limit;
        // Never start in the middle of a UTF-8 sequence: skip continuation bytes.
        while (from < keep && (merged[from] & 0xC0) == 0x80) {
          from++;
        }
        merged = Arrays.copyOfRange(merged, from, keep);
        truncated = true;
      }
      output = merged;
    }

    void exited(int code) {
      exitStatus = killed && code > 128
          ? new JsonObject().putNull("exitCode").put("signal", code == 137 ? "SIGKILL" : "SIGTERM")
          : new JsonObject().put("exitCode", code).putNull("signal");
      waiters.forEach(w -> w.tryComplete(exitStatus.copy()));
      waiters.clear();
    }

    void kill() {
      if (process.isAlive()) {
        killed = true;
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
      }
    }
  }

  Future<Object> create(Object raw) {
    JsonObject p = JsonRpcPeer.object(raw);
    if (!(p.getValue("command") instanceof String command) || command.isBlank()) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS, "command must be a non-empty string"));
    }
    if (terminals.size() >= MAX_TERMINALS) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS, "at most " + MAX_TERMINALS
          + " terminals at once; release some first"));
    }
    List<String> argv = new ArrayList<>(List.of(command));
    for (Object arg : JsonRpcPeer.array(p.getValue("args"))) {
      if (!(arg instanceof String s)) {
        return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS, "args must be strings"));
      }
      argv.add(s);
    }
    Map<String, String> env = new HashMap<>();
    for (Object e : JsonRpcPeer.array(p.getValue("env"))) {
      if (!(e instanceof JsonObject var) || !(var.getValue("name") instanceof String key)
          || !(var.getValue("value") instanceof String value)) {
        return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS, "env must be [{name, value}]"));
      }
      env.put(key, value);
    }
    Object limitValue = p.getValue("outputByteLimit");
    int limit = limitValue instanceof Number n ? (int) Math.min(Math.max(0, n.longValue()), MAX_OUTPUT_LIMIT)
        : DEFAULT_OUTPUT_LIMIT;
    Object cwd = p.getValue("cwd");
    return context.owner().<Process>executeBlocking(() -> {
      Path dir = cwd == null ? workspace.create() : workspace.resolve(cwd);
      ProcessBuilder pb = new ProcessBuilder(argv).directory(dir.toFile()).redirectErrorStream(true);
      pb.environment().putAll(env);
      try {
        return pb.start();
      } catch (IOException e) {
        throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "cannot run " + command + ": " + e.getMessage());
      }
    }).<Object>map(process -> {
      closeQuietly(process);
      String id = "term-" + (nextId++);
      Terminal t = new Terminal(process, limit);
      terminals.put(id, t);
      Thread reader = new Thread(() -> pump(process.getInputStream(), t), name + "-" + id);
      reader.setDaemon(true);
      reader.start();
      return new JsonObject().put("terminalId", id);
    }).recover(err -> Future.failedFuture(err instanceof JsonRpcError ? err
        : new JsonRpcError(JsonRpcError.INTERNAL_ERROR, String.valueOf(err.getMessage()))));
  }

  /** Reads a terminal's output until it closes, then waits for the exit; both land on the context. */
  private void pump(InputStream in, Terminal t) {
    byte[] chunk = new byte[16 * 1024];
    try {
      int n;
      while ((n = in.read(chunk)) > 0) {
        byte[] copy = Arrays.copyOf(chunk, n);
        int count = n;
        context.runOnContext(v -> t.append(copy, count));
      }
    } catch (IOException ignored) {
      // killed: the stream closed
    }
    t.process.onExit().thenAccept(p -> context.runOnContext(v -> t.exited(p.exitValue())));
  }

  Future<Object> output(Object raw) {
    Terminal t = find(raw);
    JsonObject result = new JsonObject().put("output", new String(t.output, StandardCharsets.UTF_8))
        .put("truncated", t.truncated);
    if (t.exitStatus != null) {
      result.put("exitStatus", t.exitStatus.copy());
    }
    return Future.succeededFuture(result);
  }

  Future<Object> waitForExit(Object raw) {
    Terminal t = find(raw);
    if (t.exitStatus != null) {
      return Future.succeededFuture(t.exitStatus.copy());
    }
    Promise<Object> promise = Promise.promise();
    t.waiters.add(promise);
    return promise.future();
  }

  Future<Object> kill(Object raw) {
    find(raw).kill();
    return Future.succeededFuture(new JsonObject());
  }

  Future<Object> release(Object raw) {
    Terminal t = find(raw);
    t.kill();
    terminals.values().remove(t);
    t.waiters.forEach(w -> w.tryFail(new JsonRpcError(JsonRpcError.INVALID_PARAMS, "terminal released")));
    return Future.succeededFuture(new JsonObject());
  }

  /** The session ended: kill every terminal it left. */
  void killAll() {
    terminals.values().forEach(Terminal::kill);
    terminals.clear();
  }

  int count() {
    return terminals.size();
  }

  private Terminal find(Object raw) {
    Object id = JsonRpcPeer.object(raw).getValue("terminalId");
    Terminal t = id instanceof String s ? terminals.get(s) : null;
    if (t == null) {
      throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "no terminal " + id);
    }
    return t;
  }

  private static void closeQuietly(Process process) {
    try {
      process.getOutputStream().close();
    } catch (IOException ignored) {
      // the command needs no input
    }
  }
}
