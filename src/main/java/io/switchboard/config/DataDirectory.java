package io.switchboard.config;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The data directory holds prompts, the ledger, the token's hash and every workspace: only its
 * owner may read it. At start the directory is made 0700 and the files in it (the database and its
 * journal, the token, the lock) 0600, whatever they were; a mode that cannot be changed stops the
 * start, naming the path. {@code doctor} reports what is looser.
 */
public final class DataDirectory {
  private static final Set<PosixFilePermission> DIR = PosixFilePermissions.fromString("rwx------");
  private static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");

  private DataDirectory() {}

  /** Creates the directory if needed and tightens it and its files; an IOException names what could not be. */
  public static void prepare(Path dir) throws IOException {
    AccessToken.ensurePrivateDirectory(dir);
    try {
      set(dir, DIR);
      for (Path file : files(dir)) {
        set(file, FILE);
      }
    } catch (UnsupportedOperationException notPosix) {
      // non-POSIX file systems keep their defaults
    }
  }

  /**
   * Makes the gateway's own temporary folder ({@link Settings#tempDir()}) private, and with
   * {@code empty} clears what a stopped gateway left there (scratch indexes, an unpacked library).
   */
  public static void prepareTemp(Path temp, boolean empty) throws IOException {
    AccessToken.ensurePrivateDirectory(temp);
    set(temp, DIR);
    if (empty) {
      try (var walk = Files.walk(temp)) {
        for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
          if (!p.equals(temp)) {
            Files.deleteIfExists(p);
          }
        }
      }
    }
  }

  /** Removes the sandbox folders of shared and one-off agent processes ({@code shared-*}, {@code oneoff-*}). */
  public static void emptySandboxTemps(Path sandboxes) throws IOException {
    if (!Files.isDirectory(sandboxes, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (DirectoryStream<Path> owners = Files.newDirectoryStream(sandboxes)) {
      for (Path owner : owners) {
        String name = owner.getFileName().toString();
        if (name.startsWith("shared-") || name.startsWith("oneoff-")) {
          try (var walk = Files.walk(owner)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
              Files.deleteIfExists(p);
            }
          }
        }
      }
    }
  }

  /** What is readable or writable by others: "path (mode)" each; empty when all is private. */
  public static List<String> loose(Path dir) throws IOException {
    List<String> out = new ArrayList<>();
    try {
      if (Files.isDirectory(dir) && !Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS).equals(DIR)) {
        out.add(dir + " (" + PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)) + ")");
      }
      for (Path file : files(dir)) {
        Set<PosixFilePermission> mode = Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
        if (!FILE.containsAll(mode)) {
          out.add(file + " (" + PosixFilePermissions.toString(mode) + ")");
        }
      }
    } catch (UnsupportedOperationException notPosix) {
      // nothing to say
    }
    return out;
  }

  private static void set(Path path, Set<PosixFilePermission> mode) throws IOException {
    try {
      if (!Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS).equals(mode)) {
        Files.setPosixFilePermissions(path, mode);
      }
    } catch (IOException e) {
      throw new IOException("cannot make " + path + " private (" + PosixFilePermissions.toString(mode) + "): "
          + e.getMessage() + "; fix its owner or mode", e);
    }
  }

  /** The regular files directly in the directory (not links, not the workspaces). */
  private static List<Path> files(Path dir) throws IOException {
    List<Path> files = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return files;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path p : entries) {
        if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
          files.add(p);
        }
      }
    }
    return files;
  }
}
