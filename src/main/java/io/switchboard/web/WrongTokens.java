package io.switchboard.web;

import io.switchboard.common.Lru;
import java.util.Map;

/**
 * Wrong tokens per client address, one count for every route that takes the token (a bearer on
 * {@code /api/*}, {@code /metrics} and the {@code /ws/chat} upgrade, and {@code /api/login}): past
 * {@link #PER_MINUTE} in a minute, a wrong try gets 429 until that minute is over. Only wrong tries
 * count, and only they wait: the right token is checked first and always taken.
 */
final class WrongTokens {
  /** Wrong tokens a client address may try per minute. */
  static final int PER_MINUTE = 10;
  static final long WINDOW_MS = 60_000;
  /** Addresses remembered at most (the least recently wrong dropped first): a flood cannot grow it. */
  private static final int ADDRESSES = 10_000;

  /** Client address -> {wrong tries in its window, when the window began}. */
  private final Map<String, long[]> byAddress = Lru.map(ADDRESSES, true);

  /**
   * Counts a wrong token from {@code address} at {@code now}: 0 while the address is within the
   * limit, else the seconds until its minute is over (for Retry-After; at least 1).
   */
  long wrong(String address, long now) {
    long[] window = byAddress.computeIfAbsent(address, a -> new long[] {0, now});
    if (now - window[1] >= WINDOW_MS) {
      window[0] = 0;
      window[1] = now;
    }
    window[0]++;
    if (window[0] <= PER_MINUTE) {
      return 0;
    }
    return Math.max(1, (window[1] + WINDOW_MS - now + 999) / 1000);
  }
}
