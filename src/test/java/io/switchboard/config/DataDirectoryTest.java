package io.switchboard.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A data directory that already existed with loose modes is made private at start; doctor names what is loose. */
class DataDirectoryTest {
  @TempDir
  Path dir;

  @Test
  void anExistingLooseDataDirectoryIsTightened() throws Exception {
    Path data = Files.createDirectories(dir.resolve("data"));
    Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path db = Files.writeString(data.resolve("switchboard.db"), "prompts");
    Files.setPosixFilePermissions(db, PosixFilePermissions.fromString("rw-r--r--"));
    Path wal = Files.writeString(data.resolve("switchboard.db-wal"), "more prompts");
    Files.setPosixFilePermissions(wal, PosixFilePermissions.fromString("rw-rw-rw-"));

    List<String> loose = DataDirectory.loose(data);
    assertEquals(3, loose.size(), loose.toString());
    assertTrue(loose.get(0).contains("rwxr-xr-x"), loose.toString());

    DataDirectory.prepare(data);
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(data)));
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(db)));
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(wal)));
    assertEquals(List.of(), DataDirectory.loose(data));
  }

  /**
   * At start the gateway's own temporary folder is made private and emptied, as are the temporary
   * folders of shared and one-off agent processes; a thread's stays, and a link an agent left there is
   * removed, never followed.
   */
  @Test
  void theTemporaryFoldersAStoppedGatewayLeftAreEmptiedAtStart() throws Exception {
    Path data = Files.createDirectories(dir.resolve("data"));
    Path temp = Files.createDirectories(data.resolve("tmp/git"));
    Files.writeString(temp.resolve("index123"), "left");
    Path outside = Files.writeString(dir.resolve("keep.txt"), "the person's");
    Path shared = Files.createDirectories(data.resolve("sandbox/shared-demo/tmp"));
    Files.createSymbolicLink(shared.resolve("link"), outside);
    Files.writeString(shared.resolve("x"), "x");
    Path thread = Files.createDirectories(data.resolve("sandbox/t_1/tmp"));
    Files.writeString(thread.resolve("mine"), "kept");
    DataDirectory.prepareTemp(data.resolve("tmp"), true);
    DataDirectory.emptySandboxTemps(data.resolve("sandbox"));
    assertEquals(List.of(), Files.list(data.resolve("tmp")).toList());
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(data.resolve("tmp"))));
    assertTrue(Files.notExists(data.resolve("sandbox/shared-demo")));
    assertEquals("kept", Files.readString(thread.resolve("mine")));
    assertEquals("the person's", Files.readString(outside), "a link is removed, not followed");
  }
}
