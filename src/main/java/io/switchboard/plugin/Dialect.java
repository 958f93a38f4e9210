package io.switchboard.plugin;

import io.switchboard.config.PluginSpec;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;

/**
 * How one plugin dialect spells things on the wire. The plugin is the ACP client; the gateway
 * answers as the agent. docs/protocol-plugins.md documents both dialects.
 */
interface Dialect {

  /** A chat message from the plugin, with its routing. */
  record Inbound(String chatId, String senderId, String senderName, String scope, String messageId,
                 JsonObject target, String text) {
    boolean group() {
      return "group".equals(scope);
    }
  }

  /** One JSON-RPC message to send: a method and its params. */
  record Out(String method, JsonObject params) {}

  /**
   * The agent session a chat is in, every field known: its thread's workspace (id and absolute
   * path), the thread, the agent's ACP session id, whether that session is one the thread had
   * before ({@code resumed}) or a new one, and the agent.
   */
  record Session(String workspaceId, String workspacePath, String threadId, String sessionId, boolean resumed,
                 String agentId, String agentName) {}

  String envStateDir();

  JsonObject initializeResult(PluginSpec spec, Path stateDir, String version);

  /** Parses {@code session/prompt} params; an IllegalArgumentException names the missing field. */
  Inbound prompt(JsonObject params);

  /** The chat a {@code session/cancel} is for, or null. */
  String cancelledChat(JsonObject params);

  Out stream(Route route, JsonObject update);

  /** A permission card, sent as a request: its response is the tap. */
  Out card(Route route, String outputId, JsonObject card);

  Out cardEnd(Route route, String outputId, JsonObject end);

  Out text(Route route, String outputId, String kind, String text);

  /** Whether the chat is told of the agent session it is in ({@link #sessionInfo}). */
  boolean tellsSession();

  /** What the chat is told of the agent session it is in, or null when the dialect has no such message. Live only. */
  Out sessionInfo(Route route, Session session);

  /** Who answered a card, from the response, or null when the dialect does not say. */
  String tapper(JsonObject response);

  /** True when the plugin acknowledges durable outputs itself ({@code _switchboard/ack}). */
  boolean acknowledges();

  static Dialect of(String name) {
    return name.equals("vibearound") ? new VibeAround() : new Acp();
  }

  static String promptText(JsonObject params) {
    StringBuilder text = new StringBuilder();
    for (Object block : params.getValue("prompt") instanceof JsonArray a ? a : new JsonArray()) {
      if (block instanceof JsonObject b) {
        if ("text".equals(b.getString("type")) && b.getValue("text") instanceof String t) {
          text.append(t);
        } else if ("resource_link".equals(b.getString("type")) && b.getValue("uri") instanceof String uri) {
          text.append(text.length() == 0 ? "" : "\n").append(uri);
        }
      }
    }
    return text.toString();
  }

  static String string(JsonObject o, String field) {
    return o != null && o.getValue(field) instanceof String s && !s.isEmpty() ? s : null;
  }

  /** A member that must be an object, or an empty one: plugin input is read leniently, never cast. */
  static JsonObject object(JsonObject o, String field) {
    return o != null && o.getValue(field) instanceof JsonObject member ? member : new JsonObject();
  }

  /** Plain ACP v1, routing in {@code _meta.switchboard}, acknowledgements as {@code _switchboard/ack}. */
  final class Acp implements Dialect {
    @Override
    public String envStateDir() {
      return "SWITCHBOARD_PLUGIN_STATE_DIR";
    }

    @Override
    public JsonObject initializeResult(PluginSpec spec, Path stateDir, String version) {
      return new JsonObject().put("protocolVersion", 1)
          .put("agentCapabilities", new JsonObject().put("loadSession", false)
              .put("promptCapabilities", new JsonObject().put("image", false).put("audio", false)
                  .put("embeddedContext", false)))
          .put("authMethods", new JsonArray())
          .put("agentInfo", new JsonObject().put("name", "switchboard").put("title", "Switchboard").put("version", version))
          .put("_meta", new JsonObject().put("switchboard", new JsonObject().put("pluginId", spec.id())
              .put("config", spec.config()).put("stateDir", stateDir.toString())));
    }

    @Override
    public Inbound prompt(JsonObject params) {
      JsonObject meta = object(object(params, "_meta"), "switchboard");
      String chatId = string(meta, "chatId");
      String senderId = string(meta, "senderId");
      if (chatId == null || senderId == null) {
        throw new IllegalArgumentException("_meta.switchboard.chatId and senderId are required");
      }
      String scope = "group".equals(string(meta, "scope")) ? "group" : "dm";
      return new Inbound(chatId, senderId, string(meta, "senderName"), scope, string(meta, "messageId"), null,
          promptText(params));
    }

    @Override
    public String cancelledChat(JsonObject params) {
      String chat = string(object(object(params, "_meta"), "switchboard"), "chatId");
      return chat != null ? chat : string(params, "sessionId");
    }

    private static JsonObject meta(Route route) {
      return new JsonObject().put("switchboard", new JsonObject().put("chatId", route.chatId)
          .put("threadId", route.threadId));
    }

    @Override
    public Out stream(Route route, JsonObject update) {
      return new Out("session/update", new JsonObject().put("sessionId", route.chatId).put("update", update)
          .put("_meta", meta(route)));
    }

    @Override
    public Out card(Route route, String outputId, JsonObject card) {
      JsonObject meta = meta(route);
      meta.getJsonObject("switchboard").put("outputId", outputId).put("requestId", card.getString("requestId"));
      return new Out("session/request_permission", new JsonObject().put("sessionId", route.chatId)
          .put("toolCall", card.getJsonObject("toolCall")).put("options", card.getJsonArray("options"))
          .put("_meta", meta));
    }

    @Override
    public Out cardEnd(Route route, String outputId, JsonObject end) {
      return new Out("_switchboard/permission_resolved", new JsonObject().put("chatId", route.chatId)
          .put("outputId", outputId).put("requestId", end.getString("requestId")).put("outcome", end.getJsonObject("outcome"))
          .put("endedAt", end.getLong("endedAt")));
    }

    @Override
    public Out text(Route route, String outputId, String kind, String text) {
      return new Out("_switchboard/text", new JsonObject().put("chatId", route.chatId).put("outputId", outputId)
          .put("kind", kind).put("text", text));
    }

    @Override
    public boolean tellsSession() {
      return false;
    }

    @Override
    public Out sessionInfo(Route route, Session session) {
      return null;
    }

    @Override
    public String tapper(JsonObject response) {
      return string(object(object(response, "_meta"), "switchboard"), "senderId");
    }

    @Override
    public boolean acknowledges() {
      return true;
    }
  }

  /**
   * The wire shapes of VibeAround's channel-plugin SDK (jazzenchen/va-plugin-channel-sdk 0.6.x):
   * outputs are {@code _va/*} notifications with a {@code target}, cards are
   * {@code _va/request_permission} requests, routing is in {@code _meta["va.channel"]}. Only methods
   * the SDK handles are sent. It has no delivery acknowledgement; see docs/protocol-plugins.md.
   */
  final class VibeAround implements Dialect {
    @Override
    public String envStateDir() {
      return "VIBEAROUND_PLUGIN_STATE_DIR";
    }

    @Override
    public JsonObject initializeResult(PluginSpec spec, Path stateDir, String version) {
      return new JsonObject().put("protocolVersion", 1)
          .put("agentCapabilities", new JsonObject().put("loadSession", false))
          .put("authMethods", new JsonArray())
          .put("agentInfo", new JsonObject().put("name", "switchboard").put("version", version))
          .put("_meta", new JsonObject().put("channelKind", spec.id()).put("channelInstanceId", spec.id())
              .put("actorId", spec.id()).put("config", spec.config()).put("hostVersion", version)
              .put("cacheDir", stateDir.resolve("cache").toString()));
    }

    @Override
    public Inbound prompt(JsonObject params) {
      JsonObject channel = object(object(params, "_meta"), "va.channel");
      String chatId = string(channel, "chatId");
      if (chatId == null) {
        chatId = string(params, "sessionId");
      }
      if (chatId == null) {
        throw new IllegalArgumentException("_meta[\"va.channel\"].chatId is required");
      }
      JsonObject c = channel;
      JsonObject target = new JsonObject().put("channelInstanceId", c.getString("channelInstanceId", ""))
          .put("actorId", c.getString("actorId", "")).put("chatId", chatId);
      if (string(c, "topicId") != null) {
        target.put("topicId", c.getString("topicId"));
      }
      if (string(c, "platformMessageId") != null) {
        target.put("replyTo", c.getString("platformMessageId"));
      }
      return new Inbound(chatId, string(c, "senderId"), null, "group".equals(string(c, "scope")) ? "group" : "dm",
          string(c, "platformMessageId"), target, promptText(params));
    }

    @Override
    public String cancelledChat(JsonObject params) {
      String chat = string(object(object(params, "_meta"), "va.channel"), "chatId");
      return chat != null ? chat : string(params, "sessionId");
    }

    /** The route's last inbound target, or one built from what this gateway told the plugin at start. */
    private static JsonObject target(Route route, boolean reply) {
      JsonObject t = route.target == null ? new JsonObject() : route.target.copy();
      if (string(t, "channelInstanceId") == null) {
        t.put("channelInstanceId", route.pluginId);
      }
      if (string(t, "actorId") == null) {
        t.put("actorId", t.getString("channelInstanceId"));
      }
      t.put("chatId", route.chatId);
      if (!reply) {
        t.remove("replyTo");
      }
      return t;
    }

    @Override
    public Out stream(Route route, JsonObject update) {
      return new Out("_va/thread_reply", new JsonObject().put("target", target(route, true))
          .put("reply", new JsonObject().put("payload", new JsonObject().put("kind", "acp_session_notification")
              .put("notification", new JsonObject().put("sessionId", route.chatId).put("update", update)))));
    }

    @Override
    public Out card(Route route, String outputId, JsonObject card) {
      return new Out("_va/request_permission", new JsonObject().put("target", target(route, true))
          .put("requestId", outputId).put("request", new JsonObject().put("sessionId", route.chatId)
              .put("toolCall", card.getJsonObject("toolCall")).put("options", card.getJsonArray("options"))));
    }

    /**
     * A card's end, in words. Null when this chat's own tap answered it: the SDK has already edited
     * the card to show the choice, and a second message would only repeat it.
     */
    @Override
    public Out cardEnd(Route route, String outputId, JsonObject end) {
      JsonObject outcome = end.getJsonObject("outcome", new JsonObject());
      JsonObject toolCall = end.getJsonObject("toolCall", new JsonObject());
      String title = toolCall.getString("title");
      String noun = io.switchboard.permission.Question.KIND.equals(toolCall.getString("kind")) ? "The question"
          : "The permission request";
      String what = title == null ? noun : noun + " \u201c" + title + "\u201d";
      if ("selected".equals(outcome.getString("outcome"))) {
        String where = outcome.getJsonObject("answeredBy", new JsonObject()).getString("surface", "");
        if (where.equals(route.surface())) {
          return null;
        }
        return text(route, outputId, "card_end", what + " was answered " + Surfaces.where(where) + ": "
            + Surfaces.option(outcome) + ".");
      }
      if ("expired".equals(outcome.getString("outcome"))) {
        return text(route, outputId, "card_end", what + " expired unanswered (" + outcome.getString("rule") + "): "
            + ("cancelTurn".equals(outcome.getString("onExpiry")) ? "the turn was stopped."
                : "the agent was told no.") + " Nobody refused it.");
      }
      return text(route, outputId, "card_end", what + " ended without an answer: "
          + Surfaces.reason(outcome.getString("reason")) + ".");
    }

    @Override
    public Out text(Route route, String outputId, String kind, String text) {
      return new Out("_va/system_text", new JsonObject().put("chatId", route.chatId).put("target", target(route, false))
          .put("text", text));
    }

    @Override
    public boolean tellsSession() {
      return true;
    }

    /**
     * {@code _va/session_info}: the SDK keeps the workspace path per chat and sends the files an agent
     * links only from there. It drops the whole message unless every field is a string.
     */
    @Override
    public Out sessionInfo(Route route, Session s) {
      return new Out("_va/session_info", new JsonObject().put("target", target(route, false))
          .put("info", new JsonObject().put("workspaceId", s.workspaceId()).put("workspacePath", s.workspacePath())
              .put("threadId", s.threadId()).put("sessionId", s.sessionId()).put("start", s.resumed() ? "resumed" : "new")
              .put("agent", new JsonObject().put("id", s.agentId()).put("name", s.agentName()))));
    }

    @Override
    public String tapper(JsonObject response) {
      return null;
    }

    @Override
    public boolean acknowledges() {
      return false;
    }
  }
}
