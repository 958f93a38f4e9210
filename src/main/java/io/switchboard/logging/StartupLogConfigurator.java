package io.switchboard.logging;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.core.spi.ContextAwareBase;
import io.switchboard.config.Settings;

/**
 * Logback's configuration until the launcher has read the log format: text lines on stderr, as
 * {@link LogSetup} makes them. Found by logback through META-INF/services in place of a
 * logback.xml, whose XML parsing took about 170 ms of every start (docs/performance.md).
 */
public final class StartupLogConfigurator extends ContextAwareBase implements Configurator {
  @Override
  public ExecutionStatus configure(LoggerContext context) {
    LogSetup.configure(context, Settings.LogFormat.TEXT);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }
}
