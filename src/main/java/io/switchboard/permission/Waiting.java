package io.switchboard.permission;

import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;

/** How long a request has waited and when it expires, in the words chats and pushes show. */
public final class Waiting {
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm");

  private Waiting() {}

  /** "45 s", "7 min", "2 h 5 min". */
  public static String duration(long ms) {
    long s = Math.max(0, ms) / 1000;
    if (s < 60) {
      return s + " s";
    }
    long min = s / 60;
    if (min < 60) {
      return min + " min";
    }
    return min / 60 + " h" + (min % 60 == 0 ? "" : " " + min % 60 + " min");
  }

  /** "expires at 14:32 (in 8 min)", the time in the gateway host's zone. */
  public static String expiry(long deadlineAt, long now, ZoneId zone) {
    return "expires at " + CLOCK.format(Instant.ofEpochMilli(deadlineAt).atZone(zone)) + " (in "
        + duration(deadlineAt - now) + ")";
  }

  /** What an expiry does to the agent, in words. */
  public static String onExpiry(String onExpiry) {
    return "cancelTurn".equals(onExpiry) ? "the agent's turn is then stopped" : "the agent is then told no";
  }
}
