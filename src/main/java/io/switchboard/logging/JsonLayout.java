package io.switchboard.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;
import io.vertx.core.json.JsonObject;
import java.time.Instant;

/** One JSON object per log line: {@code ts, level, logger, thread, msg} and {@code error} when there is one. */
public final class JsonLayout extends LayoutBase<ILoggingEvent> {
  @Override
  public String doLayout(ILoggingEvent event) {
    JsonObject line = new JsonObject()
        .put("ts", Instant.ofEpochMilli(event.getTimeStamp()).toString())
        .put("level", event.getLevel().toString())
        .put("logger", event.getLoggerName())
        .put("thread", event.getThreadName())
        .put("msg", event.getFormattedMessage());
    if (event.getThrowableProxy() != null) {
      line.put("error", ThrowableProxyUtil.asString(event.getThrowableProxy()));
    }
    return line.encode() + CoreConstants.LINE_SEPARATOR;
  }
}
