package io.switchboard.agent;

import io.switchboard.jsonrpc.JsonRpcError;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.switchboard.process.ProcessTree;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The {@code terminal/*} client methods for one agent session: commands run as argv (no shell)
 * inside the workspace, their output kept up to a byte limit (cut from the front, on a character
 * boundary). {@code wait_for_exit} answers when the command exits, not when its output closes (a
 * child it put in the background may hold the pipe for ever). Each terminal carries a tree mark
 * ({@link ProcessTree}): killing it, releasing it or ending the session kills what it started,
 * backgrounded and {@code setsid} children included. Used on the agent room's event loop;
 * spawning and killing run on worker threads, and each terminal's output is read by a thread of its own.
 */
final class Terminals {
  static final int DEFAULT_OUTPUT_LIMIT = 1024 * 1024;
  /** Below this, a terminal is refused rather than kept almost blind. */
  static final int MIN_OUTPUT_LIMIT = 4 * 1024;
  static final int MAX_TERMINALS = 32;

  private final Context context;
  private final int maxOutputBytes;
  private final Workspace workspace;
  private final String name;
  private final String owner;
  /** The room's budget for kept terminal output (all terminals of all agents share it). */
  private final Backlog backlog;
  /** The argv a command runs as, in a working directory: in the agent's sandbox when it has one. */
  private final java.util.function.BiFunction<List<String>, Path, List<String>> confine;
  private final Map<String, Terminal> terminals = new HashMap<>();
  /** Spawns under way: they count against the cap as much as running terminals. */
  private int spawning;
  private boolean closed;
  private int nextId;

  /** How long an exited command's output may take to reach its end before the exit is reported. */
  static final long OUTPUT_SETTLE_MS = 200;

  /** The characters of a finished terminal's output shown in its thread (the end of it). */
  static final int SHOWN_OUTPUT_CHARS = 16 * 1024;
  /** Told when a terminal's command has exited: {terminalId, output, truncated, exitStatus}. */
  private java.util.function.Consumer<JsonObject> exits = x -> { };

  /** Where finished terminals are reported (the thread shows their output in the tool call). */
  Terminals onExit(java.util.function.Consumer<JsonObject> listener) {
    this.exits = listener;
    return this;
  }

  /** {@code maxOutputBytes}: what one terminal may keep, whatever the agent asks ({@code Limits#terminalBytes}). */
  Terminals(Context context, Workspace workspace, String name, String owner, Backlog backlog, int maxOutputBytes,
            java.util.function.BiFunction<List<String>, Path, List<String>> confine) {
    this.maxOutputBytes = maxOutputBytes;
    this.backlog = backlog;
    this.confine = confine;
    this.context = context;
    this.workspace = workspace;
    this.name = name;
    this.owner = owner;
  }

  /** One running (or finished) command and its retained output. */
  private static final class Terminal {
    final Process process;
    final String tree;
    /** Filled by the terminal's reader thread; read on the event loop. */
    final OutputRing output;
    /** Completes when the output reached its end (every child closed it). */
    final CompletableFuture<Void> eof = new CompletableFuture<>();
    boolean killed;
    JsonObject exitStatus;
    final List<Promise<Object>> waiters = new ArrayList<>();

    final int reserved;

    Terminal(Process process, String tree, int limit) {
      this.process = process;
      this.tree = tree;
      this.reserved = limit;
      this.output = new OutputRing(limit);
    }

    void exited(int code) {
      exitStatus = killed && code > 128
          ? new JsonObject().putNull("exitCode").put("signal", code == 137 ? "SIGKILL" : "SIGTERM")
          : new JsonObject().put("exitCode", code).putNull("signal");
      waiters.forEach(w -> w.tryComplete(exitStatus.copy()));
      waiters.clear();
    }

    /** Reports the exit once the output ended, or a moment after the exit if a child holds it open. */
    void exitedAfterOutput(Context context, Runnable then) {
      process.onExit().thenCompose(p -> eof.completeOnTimeout(null, OUTPUT_SETTLE_MS, TimeUnit.MILLISECONDS))
          .thenRun(() -> context.runOnContext(v -> {
            exited(process.exitValue());
            then.run();
          }));
    }
  }

  /** Kills a terminal's whole tree (SIGKILL: a terminal/kill is not a request to wind down), off the loop. */
  private void kill(Terminal t) {
    if (t.process.isAlive()) {
      t.killed = true;
    }
    context.owner().executeBlocking(() -> ProcessTree.kill(t.process.toHandle(), List.of(), t.tree, 0), false);
  }

  Future<Object> create(Object raw) {
    JsonObject p = JsonRpcPeer.object(raw);
    if (!(p.getValue("command") instanceof String command) || command.isBlank()) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS, "command must be a non-empty string"));
    }
    if (closed) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the session is ending"));
    }
    if (terminals.size() + spawning >= MAX_TERMINALS) {
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
    int wanted = limitValue instanceof Number n ? (int) Math.min(Math.max(0, n.longValue()), maxOutputBytes)
        : Math.min(DEFAULT_OUTPUT_LIMIT, maxOutputBytes);
    int limit = wanted == 0 ? 0 : backlog.reserveTerminalOutput(wanted, MIN_OUTPUT_LIMIT);
    if (wanted > 0 && limit == 0) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the gateway already keeps as much "
          + "terminal output as its memory allows; release some terminals first"));
    }
    Object cwd = p.getValue("cwd");
    String tree = ProcessTree.newMark();
    spawning++;
    // The process and its reader thread start on a worker: starting a thread can take seconds on a busy
    // machine, and this room's event loop carries every agent's output.
    return context.owner().<Terminal>executeBlocking(() -> {
      Path dir = cwd == null ? workspace.create() : workspace.resolve(cwd);
      ProcessBuilder pb = new ProcessBuilder(confine.apply(argv, dir)).directory(dir.toFile())
          .redirectErrorStream(true);
      pb.environment().putAll(env);
      ProcessTree.mark(pb.environment(), owner, tree);
      Process process;
      try {
        process = pb.start();
      } catch (IOException e) {
        throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "cannot run " + command + ": " + e.getMessage());
      }
      closeQuietly(process);
      Terminal started = new Terminal(process, tree, limit);
      Thread reader = new Thread(() -> pump(process.getInputStream(), started), name + "-terminal-" + tree);
      reader.setDaemon(true);
      reader.start();
      return started;
    }, false).onComplete(x -> spawning--).onFailure(err -> backlog.releaseTerminalOutput(limit)).<Object>map(t -> {
      if (closed) {
        kill(t); // the session ended while it was being spawned
        backlog.releaseTerminalOutput(t.reserved);
        throw new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the session is ending");
      }
      String id = "term-" + (nextId++);
      terminals.put(id, t);
      t.exitedAfterOutput(context, () -> {
        // What a person sees of it: the end of its output, with how it exited.
        String text = t.output.text();
        boolean cut = t.output.truncated() || text.length() > SHOWN_OUTPUT_CHARS;
        exits.accept(new JsonObject().put("terminalId", id)
            .put("output", text.length() > SHOWN_OUTPUT_CHARS ? text.substring(text.length() - SHOWN_OUTPUT_CHARS) : text)
            .put("truncated", cut).put("exitStatus", t.exitStatus.copy()));
      });
      return new JsonObject().put("terminalId", id);
    }).recover(err -> Future.failedFuture(err instanceof JsonRpcError ? err
        : new JsonRpcError(JsonRpcError.INTERNAL_ERROR, String.valueOf(err.getMessage()))));
  }

  /**
   * Reads a terminal's output into its ring until it closes, on this thread: however fast the
   * command writes, nothing but its end reaches the event loop.
   */
  private static void pump(InputStream in, Terminal t) {
    byte[] chunk = new byte[16 * 1024];
    try {
      int n;
      while ((n = in.read(chunk)) > 0) {
        t.output.write(chunk, 0, n);
      }
    } catch (IOException ignored) {
      // killed: the stream closed
    }
    t.eof.complete(null);
  }

  Future<Object> output(Object raw) {
    Terminal t = find(raw);
    JsonObject result = new JsonObject().put("output", t.output.text()).put("truncated", t.output.truncated());
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
    kill(find(raw));
    return Future.succeededFuture(new JsonObject());
  }

  Future<Object> release(Object raw) {
    Terminal t = find(raw);
    kill(t);
    if (terminals.values().remove(t)) {
      backlog.releaseTerminalOutput(t.reserved);
    }
    t.waiters.forEach(w -> w.tryFail(new JsonRpcError(JsonRpcError.INVALID_PARAMS, "terminal released")));
    return Future.succeededFuture(new JsonObject());
  }

  /** The session ended: kill every terminal it left. */
  void killAll() {
    closed = true;
    terminals.values().forEach(t -> {
      kill(t);
      backlog.releaseTerminalOutput(t.reserved);
    });
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
