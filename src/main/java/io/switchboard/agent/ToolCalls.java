package io.switchboard.agent;

import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What the agent said of one session's recent tool calls (merged updates), to show with a permission
 * request that only names one. Least recently used first; bounded by count and by the bytes of the
 * lines they came in ({@code Limits#toolCallBytes}): a tool call holds whole diffs.
 */
final class ToolCalls {
  static final int KEPT = 256;

  private final long maxBytes;
  private final Map<String, JsonObject> calls = new LinkedHashMap<>(64, 0.75f, true);
  private final Map<String, Long> bytes = new HashMap<>();
  private long bytesKept;

  ToolCalls(long maxBytes) {
    this.maxBytes = maxBytes;
  }

  /** A {@code tool_call} or {@code tool_call_update} of {@code toolCallId}, from a line of {@code lineBytes}. */
  void heard(String toolCallId, JsonObject update, long lineBytes) {
    calls.computeIfAbsent(toolCallId, k -> new JsonObject()).mergeIn(update);
    long size = Math.max(256, lineBytes);
    bytes.merge(toolCallId, size, Long::sum);
    bytesKept += size;
    forgetOld(toolCallId);
  }

  /** The tool call a permission request names: what was announced of it, with what the request says on top. */
  JsonObject asked(String toolCallId, JsonObject asked) {
    JsonObject toolCall = calls.getOrDefault(toolCallId, new JsonObject()).copy().mergeIn(asked)
        .put("toolCallId", toolCallId);
    toolCall.remove("sessionUpdate");
    return toolCall;
  }

  /**
   * A turn ended without finishing some of its tool calls (cancelled, failed, its agent gone): they
   * will never finish, so they are marked cancelled rather than left "pending" for ever (as Zed does;
   * ACP leaves it to the client), each told to {@code emit} as an {@code acp} event.
   */
  void cancelUnfinished(Iterable<String> ofTurn, Consumer<JsonObject> emit) {
    for (String id : ofTurn) {
      JsonObject known = calls.get(id);
      Object status = known == null ? null : known.getValue("status");
      if (known != null && !"completed".equals(status) && !"failed".equals(status)) {
        JsonObject update = new JsonObject().put("sessionUpdate", "tool_call_update").put("toolCallId", id)
            .put("status", "cancelled");
        known.put("status", "cancelled");
        emit.accept(new JsonObject().put("kind", "acp").put("update", update));
      }
    }
  }

  /** Drops the least recently used tool calls (never {@code keep}) while over the count or the bytes. */
  private void forgetOld(String keep) {
    var eldest = calls.keySet().iterator();
    while ((calls.size() > KEPT || bytesKept > maxBytes) && eldest.hasNext()) {
      String id = eldest.next();
      if (id.equals(keep)) {
        continue;
      }
      eldest.remove();
      Long size = bytes.remove(id);
      bytesKept -= size == null ? 0 : size;
    }
  }
}
