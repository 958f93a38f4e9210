package io.switchboard.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Set;

/**
 * The access token file ({@code <dataDir>/token}, mode 0600). A browser exchanges the token for a
 * session cookie; scripts send it as a bearer token. It never travels in a URL or a log line.
 */
public final class AccessToken {
  private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> OWNER_DIR = PosixFilePermissions.fromString("rwx------");

  private final Path file;

  public AccessToken(Path file) {
    this.file = file;
  }

  public Path file() {
    return file;
  }

  /** What {@link #ensure()} found: the token, and whether it was made just now. */
  public record Ensured(String token, boolean created) {}

  /** Reads the token, creating the file with a new random token if it does not exist yet. */
  public Ensured ensure() throws IOException {
    if (Files.exists(file)) {
      return new Ensured(read(), false);
    }
    String token = newToken();
    try {
      write(token, false);
      return new Ensured(token, true);
    } catch (FileAlreadyExistsException raced) {
      return new Ensured(read(), false);
    }
  }

  /** Replaces the token with a new random one; the old one stops working. */
  public String rotate() throws IOException {
    String token = newToken();
    write(token, true);
    return token;
  }

  public String read() throws IOException {
    ownerOnly(file);
    String token = Files.readString(file, StandardCharsets.UTF_8).trim();
    if (token.length() < 16) {
      throw new IOException("the token file " + file + " holds no usable token; run `token --rotate`");
    }
    return token;
  }

  /** Compares in constant time, so the answer's timing tells nothing about the token. */
  public static boolean matches(String expected, String given) {
    if (expected == null || given == null) {
      return false;
    }
    return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), given.getBytes(StandardCharsets.UTF_8));
  }

  /** Makes a directory (and its parents) readable by its owner only, when we create it. */
  public static void ensurePrivateDirectory(Path dir) throws IOException {
    if (Files.isDirectory(dir)) {
      return;
    }
    Files.createDirectories(dir);
    try {
      Files.setPosixFilePermissions(dir, OWNER_DIR);
    } catch (UnsupportedOperationException notPosix) {
      // non-POSIX file systems keep their defaults
    }
  }

  private static String newToken() {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  private void write(String token, boolean replace) throws IOException {
    ensurePrivateDirectory(file.toAbsolutePath().getParent());
    Path target = replace ? Files.createTempFile(file.toAbsolutePath().getParent(), ".token", ".tmp") : file;
    if (!replace) {
      try {
        Files.createFile(file, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
      } catch (UnsupportedOperationException notPosix) {
        Files.createFile(file);
      }
    }
    ownerOnly(target);
    Files.writeString(target, token + "\n", StandardCharsets.UTF_8);
    if (replace) {
      try {
        Files.move(target, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(target, file, StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  private static void ownerOnly(Path path) throws IOException {
    try {
      if (!Files.getPosixFilePermissions(path).equals(OWNER_ONLY)) {
        Files.setPosixFilePermissions(path, OWNER_ONLY);
      }
    } catch (UnsupportedOperationException notPosix) {
      // non-POSIX file systems keep their defaults
    }
  }
}
