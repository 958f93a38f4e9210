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
}
