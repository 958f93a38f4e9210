package io.switchboard.permission;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * Who in a chat may answer a request: the {@code chat} part of a chat's {@code sb.permission.answer}.
 * The plugin room states its plugin's settings and what the tap said of the tapper; the permission
 * room alone decides (docs/protocol-plugins.md, "Approvers"); the thread room applies the same rule to
 * a chat's {@code /merge} of a thread's work.
 *
 * @param approvers     the plugin's {@code approvers}; empty: the person who started the thread
 * @param cardsInGroups the plugin lets any member of a group answer although it cannot tell who tapped
 * @param anonymous     the tap came from a group member the plugin cannot name
 * @param requireLinked the plugin's {@code requireLinked}: a chat account no person has linked may not
 *                      answer at all (else, until a gateway's people have linked theirs, these lists judge it)
 */
public record ChatApproval(List<String> approvers, boolean cardsInGroups, boolean anonymous, boolean requireLinked) {
  /** As before people: unlinked accounts judged by the plugin's lists. */
  public ChatApproval(List<String> approvers, boolean cardsInGroups, boolean anonymous) {
    this(approvers, cardsInGroups, anonymous, false);
  }

  /** How a tap is named in the audit when the plugin cannot say who tapped in a group. */
  public static final String GROUP_MEMBER = "a group member";

  /** The verdict on one tap: who it is recorded as, and the approvers it was judged against. */
  public record Verdict(String who, boolean allowed, List<String> approvers) {
    /** The words a refused chat is told. */
    String refusal() {
      return "Only " + String.join(", ", approvers) + " may answer that request (or the web chat).";
    }
  }

  public JsonObject toJson() {
    return new JsonObject().put("approvers", new JsonArray(new ArrayList<>(approvers)))
        .put("cardsInGroups", cardsInGroups).put("anonymous", anonymous).put("requireLinked", requireLinked);
  }

  /** Parses an answer's {@code chat}; the exception's message names what is wrong. */
  public static ChatApproval parse(Object value) {
    if (!(value instanceof JsonObject chat)) {
      throw new IllegalArgumentException("chat must be an object");
    }
    if (!(chat.getValue("approvers", new JsonArray()) instanceof JsonArray list)) {
      throw new IllegalArgumentException("chat.approvers must be an array of user ids");
    }
    List<String> approvers = new ArrayList<>();
    for (Object o : list) {
      if (!(o instanceof String s) || s.isEmpty()) {
        throw new IllegalArgumentException("chat.approvers must be an array of user ids");
      }
      approvers.add(s);
    }
    if (!(chat.getValue("cardsInGroups", false) instanceof Boolean groups)
        || !(chat.getValue("anonymous", false) instanceof Boolean anonymous)
        || !(chat.getValue("requireLinked", false) instanceof Boolean requireLinked)) {
      throw new IllegalArgumentException("chat.cardsInGroups, chat.anonymous and chat.requireLinked must be booleans");
    }
    return new ChatApproval(List.copyOf(approvers), groups, anonymous, requireLinked);
  }

  /**
   * Judges a tap by {@code user} (null: the plugin could not say; a direct message is then the
   * thread's starter) on a request of a thread {@code startedBy} started (null: unknown).
   */
  public Verdict judge(String user, String startedBy) {
    List<String> judgedBy = !approvers.isEmpty() ? approvers : startedBy == null ? List.of() : List.of(startedBy);
    if (anonymous) {
      // One of many people: the audit says so, never a name; only a plugin set to allow it counts it.
      return new Verdict(GROUP_MEMBER, cardsInGroups, judgedBy);
    }
    String who = user != null ? user : startedBy;
    return new Verdict(who, who != null && judgedBy.contains(who), judgedBy);
  }
}
