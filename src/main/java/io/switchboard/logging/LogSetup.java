package io.switchboard.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import io.switchboard.config.Settings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Points the logs at stderr, as text lines or one JSON object a line ({@code --log-format}). */
public final class LogSetup {
  /**
   * The text format. Control characters in a message (a peer's escape sequences, a forged line
   * break) become U+FFFD, so a log line is one line and shows what was said, not what it does to
   * a terminal. The JSON format escapes them as JSON does.
   */
  public static final String TEXT_PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{0} - "
      + "%replace(%msg){'[\\p{Cntrl}&&[^\\t]]', '\uFFFD'}%n";

  /** The context's object naming the format it was configured with. */
  private static final String FORMAT = "switchboard.logFormat";

  private LogSetup() {}

  public static void configure(Settings.LogFormat format) {
    // Already so (logback's start-up configuration is the text format): building it again took
    // tens of milliseconds of every start.
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context && context.getObject(FORMAT) != format) {
      context.reset();
      configure(context, format);
    }
  }

  static void configure(LoggerContext context, Settings.LogFormat format) {
    context.putObject(FORMAT, format);
    Encoder<ILoggingEvent> encoder;
    if (format == Settings.LogFormat.JSON) {
      JsonLayout layout = new JsonLayout();
      layout.setContext(context);
      layout.start();
      LayoutWrappingEncoder<ILoggingEvent> wrapping = new LayoutWrappingEncoder<>();
      wrapping.setLayout(layout);
      encoder = wrapping;
    } else {
      PatternLayoutEncoder pattern = new PatternLayoutEncoder();
      pattern.setPattern(TEXT_PATTERN);
      encoder = pattern;
    }
    encoder.setContext(context);
    encoder.start();
    ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
    appender.setContext(context);
    appender.setName("stderr");
    appender.setTarget("System.err");
    appender.setEncoder(encoder);
    appender.start();
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.INFO);
    root.addAppender(appender);
    context.getLogger("io.netty").setLevel(Level.WARN);
    context.getLogger("io.vertx").setLevel(Level.WARN);
    // Cluster mode: Hazelcast's start-up banner and partition chatter stay out; members coming and
    // going are logged by io.switchboard.cluster. Its warning that CP structures run unsafe without
    // a CP subsystem concerns locks and counters, which Switchboard does not use.
    context.getLogger("com.hazelcast").setLevel(Level.WARN);
    context.getLogger("com.hazelcast.cp").setLevel(Level.ERROR);
  }
}
