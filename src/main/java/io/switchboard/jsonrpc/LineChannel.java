package io.switchboard.jsonrpc;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Newline-delimited text over a pair of blocking streams (a child process's stdout and stdin).
 *
 * <p>Process pipes have no non-blocking API, so one reader thread reads and one writer thread
 * writes; every line read and every outcome is handed back to the owning Vert.x context, so the
 * room that owns the channel sees it on its own event loop. A line longer than the limit is
 * dropped (with a report naming its size) and reading goes on at the next newline. Writes keep
 * their order; more than {@code maxQueuedBytes} waiting for a peer that does not read fails them.
 *
 * <p>Reading is bounded too, so a peer that writes faster than the owner can use it waits in its
 * own pipe instead of filling the heap: the reader stops while more than {@link #MAX_UNDELIVERED}
 * bytes of lines wait for the owner's context, and while the owner has {@link #pause() paused} it.
 */
public final class LineChannel {
  /** What the channel reports back, always on the owner's context. */
  public interface Listener {
    void line(String line);

    void oversize(long bytes);

    void closed();
  }

  private final Context context;
  private final String name;
  private final InputStream in;
  private final OutputStream out;
  private final int maxLineBytes;
  private final long maxQueuedBytes;
  private final Listener listener;
  private final ThreadPoolExecutor writer;
  private final AtomicLong queuedBytes = new AtomicLong();
  private volatile boolean outputClosed;
  /** Bytes of lines handed to the owner's context and not yet delivered to the listener. */
  static final long MAX_UNDELIVERED = 128 * 1024;
  private final AtomicLong undelivered = new AtomicLong();
  /** The reader waits on this while paused or while too much is undelivered. */
  private final Object gate = new Object();
  private volatile boolean paused;
  /** Lines read and not yet handed to the listener (kept while paused), then {@link #END}; owner's context only. */
  private final java.util.ArrayDeque<String> held = new java.util.ArrayDeque<>();
  /** Marks the end of the stream in {@link #held}, compared by identity. */
  @SuppressWarnings("StringOperationCanBeSimplified")
  private static final String END = new String("end of stream");
  private volatile boolean readerWaiting;

  public LineChannel(Context context, String name, InputStream in, OutputStream out, int maxLineBytes,
                     long maxQueuedBytes, Listener listener) {
    this.context = context;
    this.name = name;
    this.in = in;
    this.out = out;
    this.maxLineBytes = maxLineBytes;
    this.maxQueuedBytes = maxQueuedBytes;
    this.listener = listener;
    this.writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
        new LinkedBlockingQueue<>(), r -> daemon(r, name + "-writer"));
  }

  /** Bytes written by the owner and not yet taken by the peer. */
  public long queuedBytes() {
    return queuedBytes.get();
  }

  /**
   * Starts the reader and the writer thread. Call it where a thread may wait (a worker: processes are
   * spawned there): starting a thread took seconds on a machine busy with 50 agents starting at once,
   * and the writer used to start at the first write, on the owner's event loop, which then held
   * every other agent's output (the load benchmark's BlockedThreadChecker, 6 s).
   */
  public void start() {
    writer.prestartCoreThread();
    daemon(this::readLoop, name + "-reader").start();
  }

  /** Writes one line (a newline is appended); completes on the owner's context once flushed. */
  public Future<Void> write(String line) {
    byte[] bytes = (line + "\n").getBytes(StandardCharsets.UTF_8);
    Promise<Void> done = Promise.promise();
    if (outputClosed) {
      done.fail(new IOException(name + ": the output is closed"));
      return done.future();
    }
    if (queuedBytes.addAndGet(bytes.length) > maxQueuedBytes) {
      queuedBytes.addAndGet(-bytes.length);
      done.fail(new IOException(name + ": the peer is not reading; over " + maxQueuedBytes + " bytes wait"));
      return done.future();
    }
    try {
      writer.execute(() -> {
        try {
          out.write(bytes);
          out.flush();
          context.runOnContext(v -> done.tryComplete());
        } catch (IOException e) {
          context.runOnContext(v -> done.tryFail(e));
        } finally {
          queuedBytes.addAndGet(-bytes.length);
        }
      });
    } catch (RejectedExecutionException e) {
      queuedBytes.addAndGet(-bytes.length);
      done.fail(new IOException(name + ": the output is closed"));
    }
    return done.future();
  }

  /**
   * Stops handing lines to the listener at once (those already read are kept, in order) and reading
   * after the current chunk, until {@link #resume()}: the peer waits in its pipe. Call on the owner's
   * context.
   */
  public void pause() {
    paused = true;
  }

  public void resume() {
    paused = false;
    context.runOnContext(v -> release());
    wake();
  }

  private void wake() {
    if (readerWaiting) {
      synchronized (gate) {
        gate.notifyAll();
      }
    }
  }

  /** On the reader thread: waits while paused or while the owner has not caught up. */
  private void awaitTurn() throws InterruptedException {
    if (!paused && undelivered.get() <= MAX_UNDELIVERED) {
      return;
    }
    synchronized (gate) {
      readerWaiting = true;
      try {
        while (paused || undelivered.get() > MAX_UNDELIVERED / 2) {
          gate.wait(1_000);
        }
      } finally {
        readerWaiting = false;
      }
    }
  }

  /** On the reader thread: a line for the owner, who gets it on its context unless paused. */
  private void deliver(String text) {
    undelivered.addAndGet(text.length());
    context.runOnContext(v -> {
      held.add(text);
      release();
    });
  }

  /** On the owner's context: hands over the lines read, in order, until the owner pauses. */
  private void release() {
    while (!paused && !held.isEmpty()) {
      String text = held.poll();
      if (text == END) {
        listener.closed();
        continue;
      }
      try {
        listener.line(text);
      } finally {
        if (undelivered.addAndGet(-text.length()) <= MAX_UNDELIVERED / 2) {
          wake();
        }
      }
    }
  }

  /** Closes the peer's input after what is queued was written (an agent's signal to exit). */
  public void closeOutput() {
    if (outputClosed) {
      return;
    }
    outputClosed = true;
    try {
      writer.execute(this::closeQuietly);
    } catch (RejectedExecutionException ignored) {
      // already shut down
    }
    writer.shutdown();
  }

  private void closeQuietly() {
    try {
      out.close();
    } catch (IOException ignored) {
      // the peer is gone already
    }
  }

  private void readLoop() {
    byte[] chunk = new byte[64 * 1024];
    byte[] line = new byte[8 * 1024];
    int length = 0;
    long dropping = -1; // bytes of an oversized line seen so far, or -1
    try {
      int n;
      while (true) {
        awaitTurn();
        if ((n = in.read(chunk)) <= 0) {
          break;
        }
        int start = 0;
        for (int i = 0; i < n; i++) {
          if (chunk[i] != '\n') {
            continue;
          }
          int part = i - start;
          if (dropping >= 0) {
            long size = dropping + part;
            context.runOnContext(v -> listener.oversize(size));
            dropping = -1;
          } else if (length + part > maxLineBytes) {
            long size = (long) length + part;
            context.runOnContext(v -> listener.oversize(size));
          } else {
            line = append(line, length, chunk, start, part);
            length += part;
            deliver(new String(line, 0, length, StandardCharsets.UTF_8));
            if (line.length > 64 * 1024) {
              line = new byte[8 * 1024]; // keep no multi-megabyte buffer for one long line
            }
          }
          length = 0;
          start = i + 1;
        }
        int rest = n - start;
        if (dropping >= 0) {
          dropping += rest;
        } else if (length + rest > maxLineBytes) {
          dropping = (long) length + rest;
          length = 0;
          line = new byte[8 * 1024];
        } else {
          line = append(line, length, chunk, start, rest);
          length += rest;
        }
      }
      if (length > 0 && dropping < 0) {
        deliver(new String(line, 0, length, StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      // the pipe closed under us: the same as end of stream
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      outputClosed = true;
      writer.shutdown();
      context.runOnContext(v -> {
        held.add(END); // after the last line, also if that waits for a resume
        release();
      });
    }
  }

  private static byte[] append(byte[] buffer, int length, byte[] src, int from, int count) {
    if (length + count > buffer.length) {
      buffer = Arrays.copyOf(buffer, Math.max(buffer.length * 2, length + count));
    }
    System.arraycopy(src, from, buffer, length, count);
    return buffer;
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /**
   * Forwards each line of a stream (an agent's stderr) to a handler on this thread, e.g. a logger;
   * the returned future completes at the stream's end.
   */
  public static java.util.concurrent.CompletableFuture<Void> drain(InputStream stream, String threadName,
                                                                   Handler<String> handler) {
    java.util.concurrent.CompletableFuture<Void> end = new java.util.concurrent.CompletableFuture<>();
    daemon(() -> {
      try (var reader = new java.io.InputStreamReader(stream, StandardCharsets.UTF_8)) {
        // Not readLine(): a line that never ends would grow without bound. Past the limit the rest of
        // the line is skipped, so a process can fill its stderr for ever and cost 4,000 characters.
        StringBuilder line = new StringBuilder();
        boolean cut = false;
        char[] chunk = new char[8192];
        int n;
        while ((n = reader.read(chunk)) >= 0) {
          for (int i = 0; i < n; i++) {
            char c = chunk[i];
            if (c == '\n' || c == '\r') {
              if (line.length() > 0 || cut) {
                handler.handle(cut ? line + "…" : line.toString());
              }
              line.setLength(0);
              cut = false;
            } else if (line.length() < STDERR_LINE_CHARS) {
              line.append(c);
            } else {
              cut = true;
            }
          }
        }
        if (line.length() > 0 || cut) {
          handler.handle(cut ? line + "…" : line.toString());
        }
      } catch (IOException ignored) {
        // the process is gone
      }
      end.complete(null);
    }, threadName).start();
    return end;
  }

  /** The most of one stderr line that is kept (and logged). */
  static final int STDERR_LINE_CHARS = 4000;
}
