package io.switchboard.thread;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * What the transcript keeps of images and audio an agent sends: small ones whole, large ones as a
 * note of their kind and size. They are shown live whole; a thread's replay (every reload, every
 * reconnecting tab) stays small however many pictures its agent drew.
 */
final class AgentMedia {
  /** Media blocks up to this (base64) are kept whole, like a prompt's preview. */
  static final int KEPT_CHARS = 64 * 1024;

  private AgentMedia() {
  }

  /** The event as the transcript keeps it: itself, or a copy with large media blocks replaced by notes. */
  static JsonObject kept(JsonObject event) {
    if (!"acp".equals(event.getString("kind")) || !(event.getValue("update") instanceof JsonObject update)) {
      return event;
    }
    JsonObject trimmed = null;
    if (update.getValue("content") instanceof JsonObject block && large(block)) {
      trimmed = update.copy().put("content", note(block));
    } else if (update.getValue("content") instanceof JsonArray items) {
      JsonArray kept = null;
      for (int i = 0; i < items.size(); i++) {
        if (items.getValue(i) instanceof JsonObject item && item.getValue("content") instanceof JsonObject block
            && large(block)) {
          kept = kept == null ? items.copy() : kept;
          kept.set(i, item.copy().put("content", note(block)));
        }
      }
      trimmed = kept == null ? null : update.copy().put("content", kept);
    }
    return trimmed == null ? event : event.copy().put("update", trimmed);
  }

  private static boolean large(JsonObject block) {
    String type = block.getString("type", "");
    return (type.equals("image") || type.equals("audio")) && block.getValue("data") instanceof String data
        && data.length() > KEPT_CHARS;
  }

  private static JsonObject note(JsonObject block) {
    return new JsonObject().put("type", block.getString("type")).put("mimeType", block.getValue("mimeType"))
        .put("omittedBytes", block.getString("data").length() / 4 * 3);
  }
}
