package io.switchboard.jsonrpc;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(VertxExtension.class)
class LineChannelTest {
  @Test
  void anOversizedLineIsDroppedAndReadingGoesOn(Vertx vertx) {
    String input = "first\n" + "x".repeat(10 * 1024 * 1024) + "\nsecond \u00e9\nlast-without-newline";
    List<String> lines = new CopyOnWriteArrayList<>();
    List<Long> oversize = new CopyOnWriteArrayList<>();
    AtomicBoolean closed = new AtomicBoolean();
    Context context = vertx.getOrCreateContext();
    LineChannel channel = new LineChannel(context, "test", new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
        new ByteArrayOutputStream(), 8 * 1024 * 1024, 1024, new LineChannel.Listener() {
          public void line(String line) {
            lines.add(line);
          }

          public void oversize(long bytes) {
            oversize.add(bytes);
          }

          public void closed() {
            closed.set(true);
          }
        });
    channel.start();
    waitFor(closed::get, "end of stream");
    assertEquals(List.of("first", "second \u00e9", "last-without-newline"), lines);
    assertEquals(List.of(10L * 1024 * 1024), oversize);
  }

  @Test
  void writesKeepTheirOrderAndFailOnceClosed(Vertx vertx) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    // An input that stays open: the peer is alive and silent.
    var silent = new java.io.PipedInputStream(new java.io.PipedOutputStream());
    LineChannel channel = new LineChannel(vertx.getOrCreateContext(), "test", silent,
        out, 1024, 1024 * 1024, new LineChannel.Listener() {
          public void line(String line) {}

          public void oversize(long bytes) {}

          public void closed() {}
        });
    Future<Void> last = null;
    for (int i = 0; i < 100; i++) {
      last = channel.write("line " + i);
    }
    await(last);
    String[] written = out.toString(StandardCharsets.UTF_8).split("\n");
    assertEquals(100, written.length);
    assertEquals("line 99", written[99]);
    channel.closeOutput();
    Future<Void> afterClose = channel.write("too late");
    waitFor(afterClose::isComplete, "the refused write");
    assertTrue(afterClose.failed());
  }

  @Test
  void bothThreadsAreStartedByStartNotByTheFirstWrite(Vertx vertx) throws Exception {
    var silent = new java.io.PipedInputStream(new java.io.PipedOutputStream());
    LineChannel channel = new LineChannel(vertx.getOrCreateContext(), "prestart-probe", silent,
        new ByteArrayOutputStream(), 1024, 1024 * 1024, new LineChannel.Listener() {
          public void line(String line) {}

          public void oversize(long bytes) {}

          public void closed() {}
        });
    channel.start();
    // The owner's event loop writes; it must never be the one that starts a thread (that can block it).
    java.util.Set<String> names = Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
        .collect(java.util.stream.Collectors.toSet());
    assertTrue(names.contains("prestart-probe-writer"), "the writer thread runs before any write: " + names);
    assertTrue(names.contains("prestart-probe-reader"), "the reader thread runs: " + names);
    channel.closeOutput();
  }

  /** A listener that keeps the lines and notes the end of the stream. */
  private static LineChannel.Listener collect(List<String> lines, AtomicBoolean closed) {
    return new LineChannel.Listener() {
      public void line(String line) {
        lines.add(line);
      }

      public void oversize(long bytes) {}

      public void closed() {
        closed.set(true);
      }
    };
  }

  /** Writes {@code count} numbered lines of {@code width} bytes into {@code out}, counting the bytes taken. */
  private static Thread peer(java.io.OutputStream out, int count, int width, AtomicLong written) {
    Thread t = new Thread(() -> {
      try (out) {
        for (int i = 0; i < count; i++) {
          String number = Integer.toString(i);
          byte[] line = (number + "x".repeat(Math.max(0, width - 1 - number.length())) + "\n")
              .getBytes(StandardCharsets.UTF_8);
          out.write(line);
          written.addAndGet(line.length);
        }
      } catch (java.io.IOException ignored) {
        // the channel went away
      }
    });
    t.setDaemon(true);
    t.start();
    return t;
  }

  /** Waits until {@code written} has not moved for a while: the peer is blocked in its pipe. */
  private static long settled(AtomicLong written) throws InterruptedException {
    long before;
    do {
      before = written.get();
      Thread.sleep(300);
    } while (written.get() != before);
    return before;
  }

  @Test
  void aPausedChannelLeavesThePeerWaitingInItsPipeAndResumesInOrder(Vertx vertx) throws Exception {
    var peerOut = new java.io.PipedOutputStream();
    var in = new java.io.PipedInputStream(peerOut, 4096);
    List<String> lines = new CopyOnWriteArrayList<>();
    AtomicBoolean closed = new AtomicBoolean();
    LineChannel channel = new LineChannel(vertx.getOrCreateContext(), "test", in, new ByteArrayOutputStream(),
        1024, 1024, collect(lines, closed));
    channel.pause();
    channel.start();
    AtomicLong written = new AtomicLong();
    peer(peerOut, 10_000, 100, written);
    long blockedAt = settled(written);
    assertTrue(lines.isEmpty(), "nothing is read while paused");
    assertTrue(blockedAt <= 4096, "the peer waits once the pipe is full, wrote " + blockedAt);
    channel.resume();
    waitFor(closed::get, "the end of the stream");
    assertEquals(10_000, lines.size());
    for (int i = 0; i < lines.size(); i++) {
      assertTrue(lines.get(i).startsWith(i + "x"), "line " + i + " in order");
    }
  }

  @Test
  void anOwnerThatFallsBehindStopsTheReader(Vertx vertx) throws Exception {
    var peerOut = new java.io.PipedOutputStream();
    var in = new java.io.PipedInputStream(peerOut, 4096);
    List<String> lines = new CopyOnWriteArrayList<>();
    AtomicBoolean closed = new AtomicBoolean();
    Context context = vertx.getOrCreateContext();
    var busy = new java.util.concurrent.CountDownLatch(1);
    context.runOnContext(v -> { // the owner's event loop is held up (a test may; rooms never do)
      try {
        busy.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    LineChannel channel = new LineChannel(context, "test", in, new ByteArrayOutputStream(), 8192, 1024,
        collect(lines, closed));
    channel.start();
    AtomicLong written = new AtomicLong();
    peer(peerOut, 16 * 1024, 1024, written); // 16 MiB
    long blockedAt = settled(written);
    assertTrue(blockedAt < LineChannel.MAX_UNDELIVERED + 3 * 64 * 1024,
        "the reader stopped near the bound, the peer wrote " + blockedAt);
    busy.countDown();
    waitFor(closed::get, "the end of the stream", 60_000);
    assertEquals(16 * 1024, lines.size());
  }

  @Test
  void stderrLinesAreCutShortHoweverLongTheyGrow() throws Exception {
    // 10 MiB with no line end (a progress bar that never ends its line), then two short lines.
    byte[] endless = ("x".repeat(10 * 1024 * 1024) + "\rnext\r\nlast").getBytes(java.nio.charset.StandardCharsets.UTF_8);
    java.util.List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
    LineChannel.drain(new java.io.ByteArrayInputStream(endless), "test-stderr", lines::add)
        .get(30, java.util.concurrent.TimeUnit.SECONDS);
    assertEquals(3, lines.size(), "lines: " + lines.size());
    assertEquals("x".repeat(LineChannel.STDERR_LINE_CHARS) + "\u2026", lines.get(0));
    assertEquals("next", lines.get(1));
    assertEquals("last", lines.get(2));
  }
}
