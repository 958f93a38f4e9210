package io.switchboard.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.jsonrpc.JsonRpcError;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkspaceTest {
  @TempDir
  Path dir;

  private int refused(Workspace ws, String path) {
    return assertThrows(JsonRpcError.class, () -> ws.resolve(path)).code();
  }

  @Test
  void pathsInsideResolveAndEscapesAreRefused() throws Exception {
    Workspace ws = new Workspace(dir.resolve("ws"), 1 << 20);
    Path real = ws.create();
    assertEquals(real.resolve("a/b.txt"), ws.resolve(real + "/a/b.txt"));
    assertEquals(real.resolve("rel.txt"), ws.resolve("rel.txt"));
    assertEquals(-32602, refused(ws, real + "/a/../../x"));
    assertEquals(-32602, refused(ws, "../x"));
    assertEquals(-32602, refused(ws, "/etc/passwd"));
    assertEquals(-32602, refused(ws, real + "/a\u0000b.txt"), "a NUL is the agent's mistake, not an internal error");
    Files.createSymbolicLink(real.resolve("out"), dir);
    assertEquals(-32602, refused(ws, real + "/out/secret"));
    Files.createSymbolicLink(real.resolve("dangling"), dir.resolve("nowhere"));
    assertEquals(-32602, refused(ws, real + "/dangling"));
    Files.createDirectories(real.resolve("inner"));
    Files.createSymbolicLink(real.resolve("in"), real.resolve("inner"));
    assertEquals(real.resolve("inner/f"), ws.resolve(real + "/in/f"), "a link that stays inside is fine");
  }

  @Test
  void readsByLineAndLimitWritesCreateFolders() throws Exception {
    Workspace ws = new Workspace(dir.resolve("ws"), 1 << 20);
    Path real = ws.create();
    ws.write(real + "/deep/er/f.txt", "one\ntwo\nthree\nfour");
    assertEquals("one\ntwo\nthree\nfour", ws.read(real + "/deep/er/f.txt", null, null));
    assertEquals("two\nthree", ws.read(real + "/deep/er/f.txt", 2, 2));
    assertEquals("four", ws.read(real + "/deep/er/f.txt", 4, null));
    assertEquals("", ws.read(real + "/deep/er/f.txt", 9, 1));
    JsonRpcError missing = assertThrows(JsonRpcError.class, () -> ws.read(real + "/nope.txt", null, null));
    assertEquals(-32002, missing.code());
    assertTrue(missing.getMessage().contains("nope.txt"));
  }

  @Test
  void aNamedPipeOrADeviceIsRefusedAtOnceNotReadForEver() throws Exception {
    Workspace ws = new Workspace(dir.resolve("ws"), 1 << 20);
    Path real = ws.create();
    assertEquals(0, new ProcessBuilder("mkfifo", real.resolve("pipe").toString()).start().waitFor());
    // Nobody writes to the pipe: opening it to read would block until someone did.
    JsonRpcError refused = assertThrows(JsonRpcError.class, () -> ws.read(real + "/pipe", null, null));
    assertEquals(-32602, refused.code());
    assertTrue(refused.getMessage().contains("not a regular file"), refused.getMessage());
    assertEquals(-32602, assertThrows(JsonRpcError.class, () -> ws.write(real + "/pipe", "x")).code());
  }

  @Test
  void aFolderSwappedForALinkWhileWritingNeverTakesAWriteOutside() throws Exception {
    Workspace ws = new Workspace(dir.resolve("ws"), 1 << 20);
    Path real = ws.create();
    Path outside = Files.createDirectories(dir.resolve("outside"));
    Path sub = real.resolve("sub");
    Path parked = real.resolve("parked");
    Files.createDirectories(sub);
    // The agent's side of the race: swap the folder for a link to outside the workspace and back.
    java.util.concurrent.atomic.AtomicBoolean racing = new java.util.concurrent.atomic.AtomicBoolean(true);
    Thread swapper = new Thread(() -> {
      while (racing.get()) {
        try {
          Files.move(sub, parked);
          Files.createSymbolicLink(sub, outside);
          Files.delete(sub);
          Files.move(parked, sub);
        } catch (Exception ignored) {
          // lost a step of the race; go on
        }
      }
    });
    swapper.start();
    int written = 0;
    try {
      for (int i = 0; i < 3_000; i++) {
        try {
          ws.write(real + "/sub/f.txt", "attempt " + i);
          written++;
        } catch (JsonRpcError refused) {
          // the check or the open saw the link: refused
        }
      }
    } finally {
      racing.set(false);
      swapper.join();
    }
    assertTrue(written > 0, "some writes landed while the folder was in place");
    try (var left = Files.list(outside)) {
      assertEquals(List.of(), left.toList(), "a write landed outside the workspace");
    }
  }
}
