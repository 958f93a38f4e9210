package io.switchboard.common;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 digests, which every Java has. */
public final class Sha256 {
  private Sha256() {}

  public static byte[] of(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this Java", e);
    }
  }

  /** The digest of {@code text}'s UTF-8 bytes. */
  public static byte[] of(String text) {
    return of(text.getBytes(StandardCharsets.UTF_8));
  }

  /** The digest of {@code text}'s UTF-8 bytes in lower-case hex. */
  public static String hex(String text) {
    return HexFormat.of().formatHex(of(text));
  }
}
