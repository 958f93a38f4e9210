package io.switchboard.permission;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A checked {@code sb.permission.register} body: which thread, ACP session and agent process
 * generation ask, the tool call, the agent's own options, the surfaces that may answer, who
 * started the thread (a chat's default approver; null when unknown), and the person who prompted the
 * turn that asks ({@code promptedBy}, their person id: the four-eyes rule keeps them from approving it).
 */
record Registration(String threadId, String sessionId, String agentId, String generation, String toolCallId,
                    String toolCallJson, String optionsJson, List<String> eligible, String startedBy,
                    String projectId, String cwd, String promptedBy) {

  static final Set<String> OPTION_KINDS = Set.of("allow_once", "allow_always", "reject_once", "reject_always");

  /** Parses and checks a body; the exception's message names the field that is wrong. */
  static Registration parse(JsonObject body) {
    if (body == null) {
      throw new IllegalArgumentException("the body is missing");
    }
    String threadId = text(body, "threadId");
    String sessionId = text(body, "sessionId");
    Object agent = body.getValue("agentId");
    if (agent != null && !(agent instanceof String)) {
      throw new IllegalArgumentException("agentId must be a string");
    }
    Object generation = body.getValue("generation");
    if (generation != null && (!(generation instanceof String g) || g.isEmpty())) {
      throw new IllegalArgumentException("generation must be a non-empty string");
    }
    Object project = body.getValue("projectId");
    if (project != null && !(project instanceof String)) {
      throw new IllegalArgumentException("projectId must be a string");
    }
    Object cwd = body.getValue("cwd");
    if (cwd != null && !(cwd instanceof String c && c.startsWith("/"))) {
      throw new IllegalArgumentException("cwd must be an absolute path");
    }
    Object startedBy = body.getValue("startedBy");
    if (startedBy != null && !(startedBy instanceof String)) {
      throw new IllegalArgumentException("startedBy must be a string");
    }
    Object promptedBy = body.getValue("promptedBy");
    if (promptedBy != null && !(promptedBy instanceof String)) {
      throw new IllegalArgumentException("promptedBy must be a person id (a string)");
    }
    if (!(body.getValue("toolCall") instanceof JsonObject toolCall)) {
      throw new IllegalArgumentException("toolCall must be an object");
    }
    if (!(toolCall.getValue("toolCallId") instanceof String id) || id.isEmpty()) {
      throw new IllegalArgumentException("toolCall.toolCallId must be a non-empty string");
    }
    // A question (elicitation) offers the answers Question makes; a permission request, the agent's options.
    Set<String> kinds = Question.KIND.equals(toolCall.getValue("kind")) && toolCall.getValue("question") instanceof JsonObject
        ? Question.OPTION_KINDS : OPTION_KINDS;
    if (!(body.getValue("options") instanceof JsonArray options) || options.isEmpty()) {
      throw new IllegalArgumentException("options must be a non-empty array");
    }
    Set<String> optionIds = new HashSet<>();
    for (int i = 0; i < options.size(); i++) {
      if (!(options.getValue(i) instanceof JsonObject option)) {
        throw new IllegalArgumentException("options[" + i + "] must be an object");
      }
      if (!(option.getValue("optionId") instanceof String optionId) || optionId.isEmpty()) {
        throw new IllegalArgumentException("options[" + i + "].optionId must be a non-empty string");
      }
      if (!optionIds.add(optionId)) {
        throw new IllegalArgumentException("options[" + i + "].optionId \"" + optionId + "\" is offered twice");
      }
      if (!(option.getValue("name") instanceof String)) {
        throw new IllegalArgumentException("options[" + i + "].name must be a string");
      }
      if (!(option.getValue("kind") instanceof String kind) || !kinds.contains(kind)) {
        throw new IllegalArgumentException("options[" + i + "].kind must be one of " + kinds);
      }
    }
    if (!(body.getValue("eligible") instanceof JsonArray surfaces)) {
      throw new IllegalArgumentException("eligible must be an array of surface ids");
    }
    Set<String> eligible = new LinkedHashSet<>();
    for (int i = 0; i < surfaces.size(); i++) {
      if (!(surfaces.getValue(i) instanceof String s) || s.isEmpty()) {
        throw new IllegalArgumentException("eligible[" + i + "] must be a non-empty string");
      }
      eligible.add(s);
    }
    // Kept encoded: a pending request holds its tool call and options as text (a few hundred bytes),
    // not as trees of maps (several KiB); they are decoded when a card is made or an answer checked.
    return new Registration(threadId, sessionId, (String) agent, (String) generation, id, toolCall.encode(),
        options.encode(), List.copyOf(eligible), (String) startedBy,
        project == null || ((String) project).isEmpty() ? null : (String) project, (String) cwd,
        (String) promptedBy);
  }

  /** The tool call as the agent sent it (a new copy each time). */
  JsonObject toolCall() {
    return new JsonObject(toolCallJson);
  }

  /** What a question asks ({@link Question#fromAgent}), or null for a permission request. */
  JsonObject question() {
    if (!toolCallJson.contains("\"question\"")) {
      return null;
    }
    JsonObject toolCall = toolCall();
    return Question.KIND.equals(toolCall.getValue("kind")) ? toolCall.getJsonObject("question") : null;
  }

  /** The agent's own options (a new copy each time). */
  JsonArray options() {
    return new JsonArray(optionsJson);
  }

  /** What its tool call and options take, encoded: counted against the room's byte budget. */
  long bytes() {
    return toolCallJson.length() + (long) optionsJson.length();
  }

  /** The first option of {@code kind} the agent offered, or null. */
  JsonObject optionOfKind(String kind) {
    for (Object o : options()) {
      if (kind.equals(((JsonObject) o).getString("kind"))) {
        return (JsonObject) o;
      }
    }
    return null;
  }

  /** The option the agent offered with this id, or null. */
  JsonObject option(String optionId) {
    for (Object o : options()) {
      JsonObject option = (JsonObject) o;
      if (option.getString("optionId").equals(optionId)) {
        return option;
      }
    }
    return null;
  }

  List<String> eligibleList() {
    return eligible;
  }

  private static String text(JsonObject body, String field) {
    if (!(body.getValue(field) instanceof String s) || s.isEmpty()) {
      throw new IllegalArgumentException(field + " must be a non-empty string");
    }
    return s;
  }
}
