package io.switchboard.jsonrpc;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A child process that speaks newline-delimited JSON-RPC on stdio (an agent or a plugin): spawned
 * from an argv (never a shell string), its stdout and stdin a {@link LineChannel}, its stderr
 * forwarded to the log with a tag naming it. Stopping it closes its stdin, waits, then sends
 * SIGTERM, waits, then SIGKILL, to the whole process tree (several agents ignore a closed stdin).
 */
public final class StdioProcess {
  private static final Logger log = LoggerFactory.getLogger(StdioProcess.class);
  public static final long GRACE_MS = 2_000;
  public static final int MAX_LINE_BYTES = 8 * 1024 * 1024;
  public static final long MAX_QUEUED_BYTES = 64L * 1024 * 1024;

  private final Context context;
  private final Process process;
  private final LineChannel channel;
  private final Promise<Integer> exited = Promise.promise();
  private boolean stopping;
  private Future<Integer> stopped;

  private StdioProcess(Context context, Process process, String tag, LineChannel.Listener listener) {
    this.context = context;
    this.process = process;
    this.channel = new LineChannel(context, tag, process.getInputStream(), process.getOutputStream(),
        MAX_LINE_BYTES, MAX_QUEUED_BYTES, listener);
    LineChannel.drain(process.getErrorStream(), tag + "-stderr", line -> log.info("[{}] {}", tag, line));
    process.onExit().thenAccept(p -> {
      channel.resume(); // a paused reader reads what is left and the end of the stream
      context.runOnContext(v -> exited.tryComplete(p.exitValue()));
    });
    channel.start();
  }

  /** Spawns the process (blocking: call on a worker thread). */
  public static StdioProcess spawn(Context context, List<String> argv, Map<String, String> env, Path cwd, String tag,
                            LineChannel.Listener listener) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(argv).directory(cwd.toFile());
    pb.environment().putAll(env);
    Process process = pb.start();
    log.info("[{}] started pid {}: {}", tag, process.pid(), argv);
    return new StdioProcess(context, process, tag, listener);
  }

  public Future<Void> write(String line) {
    return channel.write(line);
  }

  public long queuedBytes() {
    return channel.queuedBytes();
  }

  /** Stops reading its output (it waits in its pipe) until {@link #resume()}. */
  public void pause() {
    channel.pause();
  }

  public void resume() {
    channel.resume();
  }

  public long pid() {
    return process.pid();
  }

  public boolean stopping() {
    return stopping;
  }

  /** Completes with the exit code when the process has exited, whoever ended it. */
  public Future<Integer> exited() {
    return exited.future();
  }

  /** Close stdin, wait, SIGTERM the tree, wait, SIGKILL the tree; completes once all of it has exited. */
  public Future<Integer> stop() {
    if (stopped != null) {
      return stopped;
    }
    {
      stopping = true;
      // Remember the tree now: once the parent dies its children are re-parented and lost to us.
      List<ProcessHandle> tree = process.descendants().toList();
      channel.closeOutput();
      var vertx = context.owner();
      long term = vertx.setTimer(GRACE_MS, t -> {
        if (process.isAlive()) {
          process.descendants().forEach(ProcessHandle::destroy);
          tree.forEach(ProcessHandle::destroy);
          process.destroy();
        }
      });
      long kill = vertx.setTimer(2 * GRACE_MS, t -> {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        tree.forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
      });
      stopped = exited.future().compose(code -> {
        vertx.cancelTimer(term);
        vertx.cancelTimer(kill);
        // Children that outlived their parent are orphans now: kill them and wait for them to go.
        List<ProcessHandle> left = tree.stream().filter(ProcessHandle::isAlive).toList();
        left.forEach(ProcessHandle::destroyForcibly);
        Promise<Integer> gone = Promise.promise();
        CompletableFuture.allOf(left.stream().map(ProcessHandle::onExit).toArray(CompletableFuture[]::new))
            .orTimeout(GRACE_MS, TimeUnit.MILLISECONDS)
            .whenComplete((x, err) -> context.runOnContext(v -> gone.complete(code)));
        return gone.future();
      });
    }
    return stopped;
  }
}
