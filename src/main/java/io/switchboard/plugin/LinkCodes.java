package io.switchboard.plugin;

import java.security.SecureRandom;
import java.util.Map;

/**
 * The short codes {@code /link} shows in a direct message: one names a chat account (plugin, platform
 * user id) for two minutes, until a signed-in person enters it on the page, which links that account
 * to them. A code is used once; a new {@code /link} from the same account replaces its code. At most
 * {@link #MAX_CODES} wait (the oldest go), so a flood of {@code /link} costs a bounded map.
 */
final class LinkCodes {
  static final long LIFETIME_MS = 120_000;
  static final int MAX_CODES = 1_000;
  /** No 0/O, 1/I/L: a code is read off a phone and typed. 31^8: about 2^40 codes. */
  private static final String ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

  /** What a code names. */
  record Account(String pluginId, String userId, String chatId, long expiresAt) {}

  private final SecureRandom random = new SecureRandom();
  private final Map<String, Account> codes = io.switchboard.common.Lru.map(MAX_CODES, false);
  private final java.util.function.LongSupplier clock;

  LinkCodes(java.util.function.LongSupplier clock) {
    this.clock = clock;
  }

  /** A new code for this account (its earlier one, if any, no longer works). */
  String issue(String pluginId, String userId, String chatId) {
    codes.values().removeIf(a -> a.pluginId().equals(pluginId) && a.userId().equals(userId));
    StringBuilder code = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      if (i == 4) {
        code.append('-');
      }
      code.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
    }
    codes.put(code.toString(), new Account(pluginId, userId, chatId, clock.getAsLong() + LIFETIME_MS));
    return code.toString();
  }

  /** The account a code names, used up; null when no such code waits or it expired. Case and spaces do not matter. */
  Account redeem(String typed) {
    if (typed == null) {
      return null;
    }
    String code = typed.strip().toUpperCase(java.util.Locale.ROOT).replace(" ", "");
    if (code.length() == 8) {
      code = code.substring(0, 4) + "-" + code.substring(4);
    }
    Account a = codes.remove(code);
    return a == null || a.expiresAt() < clock.getAsLong() ? null : a;
  }
}
