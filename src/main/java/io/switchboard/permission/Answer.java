package io.switchboard.permission;

import io.vertx.core.json.JsonObject;

/**
 * A checked {@code sb.permission.answer} body: which request, the option chosen, the surface it
 * came from, who answered (when the surface can say), the answer's key, for a chat's tap its
 * plugin's approver settings, for a question the form's content, and the named person the surface
 * found ({@code by}: their identity, login strength and permissions, which the room judges).
 */
record Answer(String requestId, String optionId, String surface, String user, String answerKey, ChatApproval chat,
              Grant grant, Object content, io.switchboard.people.Principal by) {
  /**
   * "Always" made a gateway grant: how far it reaches ({@code thread}, {@code project}, {@code agent}),
   * how long it lives ({@code thread}: as long as the thread; {@code day}; {@code forever}: until
   * revoked), and the command's first words it covers when the person narrowed it (null: the whole
   * command the agent asked about).
   */
  record Grant(String reach, String life, java.util.List<String> command) {
    static Grant parse(Object value) {
      if (!(value instanceof JsonObject g)) {
        throw new IllegalArgumentException("grant must be an object {reach, life, command?}");
      }
      String reach = g.getString("reach", "thread");
      String life = g.getString("life", "thread");
      if (!java.util.List.of("thread", "project", "agent").contains(reach)) {
        throw new IllegalArgumentException("grant.reach must be thread, project or agent, got \"" + reach + "\"");
      }
      if (!java.util.List.of("thread", "day", "forever").contains(life)) {
        throw new IllegalArgumentException("grant.life must be thread, day or forever, got \"" + life + "\"");
      }
      if (life.equals("thread") && !reach.equals("thread")) {
        throw new IllegalArgumentException("grant.life thread needs grant.reach thread");
      }
      java.util.List<String> command = null;
      if (g.getValue("command") != null) {
        if (!(g.getValue("command") instanceof io.vertx.core.json.JsonArray a) || a.isEmpty()
            || a.stream().anyMatch(w -> !(w instanceof String s) || s.isEmpty())) {
          throw new IllegalArgumentException("grant.command must be the command's first words, as an array of strings");
        }
        command = a.stream().map(String.class::cast).toList();
      }
      return new Grant(reach, life, command);
    }

    /** What a tap on "always" in a chat makes: this thread, as long as it lasts, the whole command. */
    static final Grant CHAT_DEFAULT = new Grant("thread", "thread", null);
  }

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
    Grant grant;
    try {
      grant = b.getValue("grant") == null ? null : Grant.parse(b.getValue("grant"));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("bad answer: " + e.getMessage(), e);
    }
    io.switchboard.people.Principal by;
    try {
      by = b.getValue("by") == null ? null : io.switchboard.people.Principal.parse(b.getValue("by"));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("bad answer: " + e.getMessage(), e);
    }
    // A question's filled form: checked against its schema by the room, which knows the question.
    return new Answer(id, optionId, surface, (String) user, (String) key, chat, grant, b.getValue("content"), by);
  }

  /** The same answer recorded as by {@code who} (a chat's verdict names the tapper). */
  Answer asUser(String who) {
    return new Answer(requestId, optionId, surface, who, answerKey, chat, grant, content, by);
  }

  private static String text(JsonObject b, String field) {
    return b.getValue(field) instanceof String s && !s.isEmpty() ? s : null;
  }
}
