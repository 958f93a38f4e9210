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
}
