package io.switchboard.jsonrpc;

import io.switchboard.config.Limits;
import io.switchboard.process.ProcessTree;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A child process that speaks newline-delimited JSON-RPC on stdio (an agent or a plugin): spawned
 * from an argv (never a shell string), its stdout and stdin a {@link LineChannel}, its stderr
 * forwarded to the log with a tag naming it (the last lines kept, to explain a failed start).
 * Stopping it closes its stdin, waits, then sends SIGTERM, waits, then SIGKILL. However it ends,
 * planned or not, what it started is killed too: its descendants and every process carrying its
 * tree mark ({@link ProcessTree}), children that left its session included.
 */
public final class StdioProcess {
  private static final Logger log = LoggerFactory.getLogger(StdioProcess.class);
  public static final long GRACE_MS = 2_000;
  private static final long OUTPUT_END_WAIT_MS = 500;
  /** stderr lines of one process logged per minute (the rest counted), and the characters logged of each. */
  static final int STDERR_LOG_LINES_PER_MINUTE = 200;
  static final int STDERR_LOG_CHARS = 2_000;
  private static final int STDERR_LINES_KEPT = 12;
  private static final int STDERR_LINE_CHARS = 300;

  private final Context context;
  private final Process process;
  private final String tree;
  private final LineChannel channel;
  private final Promise<Integer> exited = Promise.promise();
  private final Promise<Void> reaped = Promise.promise();
  /** Its stdout read to the end: every line it wrote before exiting was handed over. */
  private final Promise<Void> outputEnd = Promise.promise();
  private final ArrayDeque<String> stderrTail = new ArrayDeque<>();
  private final String tag;
  private final java.util.concurrent.CompletableFuture<Void> stderrEnd;
  private boolean stopping;
  private Future<Integer> stopped;
  private List<ProcessHandle> knownTree = List.of();

  private StdioProcess(Context context, Process process, String tree, String tag, Limits limits,
                       LineChannel.Listener listener) {
    this.context = context;
    this.process = process;
    this.tree = tree;
    this.tag = tag;
    this.channel = new LineChannel(context, tag, process.getInputStream(), process.getOutputStream(),
        limits.lineBytes(), limits.processQueueBytes(), new LineChannel.Listener() {
          @Override
          public void line(String line) {
            listener.line(line);
          }

          @Override
          public void oversize(long bytes) {
            listener.oversize(bytes);
          }

          @Override
          public void closed() {
            outputEnd.tryComplete();
            listener.closed();
          }
        });
    io.switchboard.logging.LogBudget stderrLog = new io.switchboard.logging.LogBudget(STDERR_LOG_LINES_PER_MINUTE);
    this.stderrEnd = LineChannel.drain(process.getErrorStream(), tag + "-stderr", line -> {
      if (stderrLog.take(log, tag, "stderr lines")) {
        log.info("[{}] {}", tag, line.length() > STDERR_LOG_CHARS ? line.substring(0, STDERR_LOG_CHARS) + "…" : line);
      }
      synchronized (stderrTail) {
        stderrTail.addLast(line.length() > STDERR_LINE_CHARS ? line.substring(0, STDERR_LINE_CHARS) + "…" : line);
        if (stderrTail.size() > STDERR_LINES_KEPT) {
          stderrTail.removeFirst();
        }
      }
    });
    process.onExit().thenAccept(p -> {
      channel.resume(); // a paused reader reads what is left and the end of the stream
      // The exit is told only after the last lines it wrote (a request sent in the same breath as
      // exiting must be registered, then ended by the exit, not lost behind it); a child that still
      // holds its stdout open delays it by half a second at most.
      context.runOnContext(v -> outputEnd.future().timeout(OUTPUT_END_WAIT_MS, java.util.concurrent.TimeUnit.MILLISECONDS)
          .onComplete(x -> {
            exited.tryComplete(p.exitValue());
            reap();
          }));
    });
    channel.start();
  }

  /**
   * Spawns the process (blocking: call on a worker thread), marked as {@code owner}'s with a tree
   * mark of its own, so that whatever it starts can be found and killed when it ends. Its lines and
   * its write queue are bounded by {@code limits}.
   */
  public static StdioProcess spawn(Context context, List<String> argv, Map<String, String> env, Path cwd, String tag,
                                   String owner, Limits limits, LineChannel.Listener listener) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(argv).directory(cwd.toFile());
    pb.environment().putAll(env);
    String tree = ProcessTree.newMark();
    ProcessTree.mark(pb.environment(), owner, tree);
    Process process = pb.start();
    log.info("[{}] started pid {}: {}", tag, process.pid(), argv);
    return new StdioProcess(context, process, tree, tag, limits, listener);
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

  /** The last lines it wrote to stderr, oldest first (a few, each cut short). */
  public List<String> stderrTail() {
    synchronized (stderrTail) {
      return List.copyOf(stderrTail);
    }
  }

  /**
   * The last stderr lines once the process exited and its stderr reached its end (or half a
   * second later, if a child still holds it): what to show when it dies at start.
   */
  public Future<List<String>> lastWords() {
    Promise<List<String>> words = Promise.promise();
    exited.future().onComplete(x -> stderrEnd.completeOnTimeout(null, 500, java.util.concurrent.TimeUnit.MILLISECONDS)
        .whenComplete((v, err) -> context.runOnContext(y -> words.complete(stderrTail()))));
    return words.future();
  }

  /** Completes with the exit code when the process has exited, whoever ended it. */
  public Future<Integer> exited() {
    return exited.future();
  }

  /** Completes once the process and everything it started are gone. */
  public Future<Void> reaped() {
    return reaped.future();
  }

  /** Kills what the exited process left running (TERM, then KILL), off the event loop. */
  private void reap() {
    List<ProcessHandle> known = knownTree;
    context.owner().<Integer>executeBlocking(() -> ProcessTree.kill(null, known, tree, GRACE_MS), false)
        .onComplete(done -> {
          if (done.succeeded() && done.result() > 0) {
            log.info("[{}] killed {} processes it left running", tag, done.result());
          } else if (done.failed()) {
            log.warn("[{}] could not kill what it left running: {}", tag, done.cause().getMessage());
          }
          reaped.tryComplete();
        });
  }

  /** Close stdin, wait, SIGTERM the tree, wait, SIGKILL the tree; completes once all of it has exited. */
  public Future<Integer> stop() {
    if (stopped != null) {
      return stopped;
    }
    stopping = true;
    // Remember the tree now: once the parent dies its children are re-parented and lost to us.
    knownTree = process.descendants().toList();
    channel.closeOutput();
    var vertx = context.owner();
    long term = vertx.setTimer(GRACE_MS, t -> {
      if (process.isAlive()) {
        process.descendants().forEach(ProcessHandle::destroy);
        knownTree.forEach(ProcessHandle::destroy);
        process.destroy();
      }
    });
    long kill = vertx.setTimer(2 * GRACE_MS, t -> {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      knownTree.forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
    });
    stopped = exited.future().compose(code -> {
      vertx.cancelTimer(term);
      vertx.cancelTimer(kill);
      return reaped.future().map(code);
    });
    return stopped;
  }
}
