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
import java.util.Base64;
import java.util.Set;

/**
 * The access token file ({@code <dataDir>/token}, mode 0600). It keeps only the token's SHA-256
 * (the token is 256 random bits, so a plain hash is enough): whoever reads the file cannot log in.
 * The token itself is shown once, when it is made. A browser exchanges the token for a session
 * cookie; scripts send it as a bearer token. It never travels in a URL or a log line.
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

  /** How the file keeps the token: only its SHA-256, so that reading the file does not give the token. */
  static final String HASH_PREFIX = "sha256:";

  /**
   * What {@link #ensure()} found: the token in clear (only when it was made just now, or when an
   * earlier release kept it in clear and this is the last time it can be shown), whether it was
   * made just now, and the verifier the file now holds.
   */
  public record Ensured(String token, boolean created, String verifier) {}

  /**
   * Reads the verifier, creating the file with a new random token if it does not exist yet. A
   * token an earlier release kept in clear is replaced by its hash (it keeps working).
   */
  public Ensured ensure() throws IOException {
    if (Files.exists(file)) {
      String stored = stored();
      if (stored.startsWith(HASH_PREFIX)) {
        return new Ensured(null, false, stored);
      }
      String verifier = verifierOf(stored);
      write(verifier, true);
      return new Ensured(stored, false, verifier);
    }
    String token = newToken();
    try {
      write(verifierOf(token), false);
      return new Ensured(token, true, verifierOf(token));
    } catch (FileAlreadyExistsException raced) {
      return ensure();
    }
  }

  /** Replaces the token with a new random one (its hash in the file); the old one stops working. */
  public String rotate() throws IOException {
    String token = newToken();
    write(verifierOf(token), true);
    return token;
  }

  /** What the file holds: the token's verifier ({@code sha256:<hex>}), or a token an earlier release kept in clear. */
  public String read() throws IOException {
    return stored();
  }

  private String stored() throws IOException {
    ownerOnly(file);
    String stored = Files.readString(file, StandardCharsets.UTF_8).trim();
    if (stored.length() < 16) {
      throw new IOException("the token file " + file + " holds no usable token; run `token --rotate`");
    }
    return stored;
  }

  /** The verifier of a token: what the file keeps. */
  public static String verifierOf(String token) {
    return HASH_PREFIX + io.switchboard.common.Sha256.hex(token);
  }

  /**
   * Whether {@code given} is the token {@code stored} (a verifier, or a token kept in clear by an
   * earlier release) stands for; compares in constant time, so the timing tells nothing.
   */
  public static boolean matches(String stored, String given) {
    if (stored == null || given == null) {
      return false;
    }
    String expected = stored.startsWith(HASH_PREFIX) ? stored : verifierOf(stored);
    return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8),
        verifierOf(given).getBytes(StandardCharsets.UTF_8));
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
    return new io.switchboard.common.RandomIds().next("", 32);
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
