package io.switchboard.config;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations in the config, as people write them: {@code "90s"}, {@code "2m"}, {@code "1h"}, {@code "off"}. */
public final class Durations {
  private static final Pattern DURATION = Pattern.compile("(\\d{1,6})(ms|s|m|h|d)");

  private Durations() {}

  /** Milliseconds (at most 30 days); 0 for {@code "off"}. The exception's message says what was expected. */
  public static long parse(String s) {
    if (s.equals("off")) {
      return 0;
    }
    return parse(s, 30L * 86_400_000);
  }

  /** Milliseconds, from {@code minMs} to {@code maxMs} ({@code "off"} is not one); the exception's message says what was expected. */
  public static long parse(String s, long minMs, long maxMs) {
    if (!DURATION.matcher(s).matches()) {
      throw new IllegalArgumentException("must be a duration like \"12h\" or \"30d\", got \"" + s + "\"");
    }
    long ms = parse(s, maxMs);
    if (ms < minMs) {
      throw new IllegalArgumentException("must be at least " + format(minMs) + ", got \"" + s + "\"");
    }
    return ms;
  }

  private static long parse(String s, long maxMs) {
    Matcher m = DURATION.matcher(s);
    if (!m.matches()) {
      throw new IllegalArgumentException("must be a duration like \"90s\", \"2m\", \"1h\" or \"off\", got \"" + s + "\"");
    }
    long n = Long.parseLong(m.group(1));
    long ms = switch (m.group(2)) {
      case "ms" -> n;
      case "s" -> n * 1000;
      case "m" -> n * 60_000;
      case "h" -> n * 3_600_000;
      default -> n * 86_400_000;
    };
    if (ms > maxMs) {
      throw new IllegalArgumentException("must be at most " + format(maxMs) + ", got \"" + s + "\"");
    }
    return ms;
  }

  /** The shortest of the forms above that says {@code ms} exactly. */
  public static String format(long ms) {
    if (ms % 86_400_000 == 0) {
      return ms / 86_400_000 + "d";
    }
    if (ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
  }
}
