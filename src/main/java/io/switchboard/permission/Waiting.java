package io.switchboard.permission;

import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;

/** How long a request has waited and when it expires, in the words chats and pushes show. */
public final class Waiting {
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm");

  private Waiting() {}

  /** "45 s", "7 min", "2 h 5 min". */
  /** What a chat is told at a reminder or an escalation of a request still waiting (a new message, so it notifies). */
  static String stepText(String step, String title, long waitedMs, Card.Deadline d, long now, ZoneId zone) {
    String deadline = d == null ? "" : " It " + expiry(d.at(), now, zone) + "; " + onExpiry(d.onExpiry()) + ".";
    return step.equals("escalate")
        ? "\u23eb Still unanswered after " + duration(waitedMs) + ": \u201c" + title + "\u201d. It was sent to more people."
            + deadline
        : "\u23f0 Still waiting for an answer (" + duration(waitedMs) + "): \u201c" + title + "\u201d. The card is above."
            + deadline;
  }

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
