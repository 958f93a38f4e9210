package io.switchboard.plugin;

import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;

/** One chat of one plugin, the thread it is attached to, and its lane of waiting prompts. */
final class Route {
  static final int LANE_CAPACITY = 16;

  final String pluginId;
  final String chatId;
  String threadId;
  String startedBy;
  /** Who sent the chat's last message (in a direct message, the person a tap comes from). */
  String lastSender;
  String scope = "dm";
  /**
   * The routing of the message whose turn runs (or ran last): the vibearound dialect echoes it back
   * as the output target, so a turn's outputs reply to its own message, not to a later one waiting.
   */
  JsonObject target;
  /** Prompts waiting for their turn, each with the plugin's open session/prompt to answer. */
  final ArrayDeque<Waiting> lane = new ArrayDeque<>();
  Waiting current;
  /** The seq of the current prompt's user_message, and how many turns end before its own does. */
  long promptSeq;
  int turnsToWait = -1;
  /** Turn ends seen on the thread while the current prompt waits: {seq, stopReason}. */
  final java.util.List<JsonObject> turnEnds = new java.util.ArrayList<>();

  /** A prompt in the lane; {@code done} answers the plugin's session/prompt. */
  record Waiting(Dialect.Inbound inbound, Promise<Object> done) {}

  Route(String pluginId, String chatId) {
    this.pluginId = pluginId;
    this.chatId = chatId;
  }

  String surface() {
    return pluginId + ":" + chatId;
  }
}
