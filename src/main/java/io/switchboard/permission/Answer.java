package io.switchboard.permission;

import io.vertx.core.json.JsonObject;

/**
 * A checked {@code sb.permission.answer} body: which request, the option chosen, the surface it
 * came from, who answered (when the surface can say), the answer's key, and for a chat's tap its
 * plugin's approver settings.
 */
record Answer(String requestId, String optionId, String surface, String user, String answerKey, ChatApproval chat) {
  /** An answer's key is a surface's token for one answer, not data: a few dozen characters. */
  static final int MAX_ANSWER_KEY = 128;

  /** Parses and checks a body; the exception's message says what is wrong. */
  static Answer parse(JsonObject body) {
    JsonObject b = body == null ? new JsonObject() : body;
    String id = text(b, "requestId");
    String optionId = text(b, "optionId");
    String surface = text(b, "surface");
    Object user = b.getValue("user");
    Object key = b.getValue("answerKey");
    if (id == null || optionId == null || surface == null || (user != null && !(user instanceof String))
        || (key != null && !(key instanceof String k && !k.isEmpty() && k.length() <= MAX_ANSWER_KEY))) {
      throw new IllegalArgumentException("an answer needs requestId, optionId and surface (strings), user is a "
          + "string, and answerKey a string of 1.." + MAX_ANSWER_KEY + " characters");
    }
    ChatApproval chat;
    try {
      chat = b.getValue("chat") == null ? null : ChatApproval.parse(b.getValue("chat"));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("bad answer: " + e.getMessage(), e);
    }
    return new Answer(id, optionId, surface, (String) user, (String) key, chat);
  }

  /** The same answer recorded as by {@code who} (a chat's verdict names the tapper). */
  Answer by(String who) {
    return new Answer(requestId, optionId, surface, who, answerKey, chat);
  }

  private static String text(JsonObject b, String field) {
    return b.getValue(field) instanceof String s && !s.isEmpty() ? s : null;
  }
}
