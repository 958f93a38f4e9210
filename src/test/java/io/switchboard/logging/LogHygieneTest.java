package io.switchboard.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** What a peer writes cannot forge log lines, drive a terminal, or fill the disk. */
class LogHygieneTest {
  @Test
  void controlCharactersInAMessageAreShownNotObeyed() {
    LoggerContext context = new LoggerContext();
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern(LogSetup.TEXT_PATTERN);
    encoder.start();
    ch.qos.logback.classic.Logger logger = context.getLogger("peer");
    LoggingEvent event = new LoggingEvent("x", logger, Level.INFO,
        "[plugin] \u001b[2J\u001b[31mred\r\n2026-12-01T00:00:00.000Z INFO fake line\u0007\ttab", null, null);
    String line = new String(encoder.encode(event), StandardCharsets.UTF_8);
    assertFalse(line.contains("\u001b"), line);
    assertFalse(line.contains("\u0007"), line);
    assertEquals(line.length() - 1, line.indexOf('\n'), "one line: " + line);
    assertFalse(line.contains("\r"), line);
    assertTrue(line.contains("\ufffd[31mred"), "visible: " + line);
    assertTrue(line.contains("\ttab"), "a tab stays");
  }

  @Test
  void aFloodOfLinesFromOnePeerIsCountedNotCopied() {
    AtomicLong now = new AtomicLong(1_000_000);
    LogBudget budget = new LogBudget(20, now::get);
    LoggerContext context = new LoggerContext();
    ch.qos.logback.classic.Logger log = context.getLogger("peer");
    ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> seen = new ListAppender<>();
    seen.setContext(context);
    seen.start();
    log.addAppender(seen);
    int logged = 0;
    for (int i = 0; i < 100_000; i++) {
      if (budget.take(log, "plugin fake", "malformed lines")) {
        logged++;
      }
    }
    assertEquals(20, logged);
    assertEquals(99_980, budget.suppressed());
    assertTrue(seen.list.isEmpty(), "the summary waits for the minute to end");
    now.addAndGet(60_000);
    assertTrue(budget.take(log, "plugin fake", "malformed lines"));
    assertEquals(1, seen.list.size());
    assertTrue(seen.list.get(0).getFormattedMessage().contains("99980 more malformed lines were not logged"),
        seen.list.get(0).getFormattedMessage());
  }
}
