package io.switchboard.common;

import java.security.SecureRandom;
import java.util.Base64;

/** Unguessable ids (a prefix and 128 random bits, URL-safe): one generator per room that makes them. */
public final class RandomIds {
  private final SecureRandom random = new SecureRandom();

  /** {@code prefix} followed by {@code bytes} random bytes in URL-safe Base64 without padding. */
  public String next(String prefix, int bytes) {
    byte[] b = new byte[bytes];
    random.nextBytes(b);
    return prefix + Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  /** {@code prefix} and 16 random bytes: ids of requests, threads, outputs, answers. */
  public String next(String prefix) {
    return next(prefix, 16);
  }
}
