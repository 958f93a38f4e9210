package io.switchboard.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.jsonrpc.JsonRpcError;
import java.nio.file.Files;
import java.nio.file.Path;
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
    Workspace ws = new Workspace(dir.resolve("ws"));
    Path real = ws.create();
    assertEquals(real.resolve("a/b.txt"), ws.resolve(real + "/a/b.txt"));
    assertEquals(real.resolve("rel.txt"), ws.resolve("rel.txt"));
    assertEquals(-32602, refused(ws, real + "/a/../../x"));
    assertEquals(-32602, refused(ws, "../x"));
    assertEquals(-32602, refused(ws, "/etc/passwd"));
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
    Workspace ws = new Workspace(dir.resolve("ws"));
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
}
