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
  /** The project the chat's next conversation starts in (/new <project>): null the default, "" none. */
  String project;
  /** Who sent the chat's last message (in a direct message, the person a tap comes from). */
  String lastSender;
  /** "dm" or "group" as the chat's last message said; null until it says (a route restored at start). */
  String scope;
  /**
   * The routing of the message whose turn runs (or ran last): the vibearound dialect echoes it back
   * as the output target, so a turn's outputs reply to its own message, not to a later one waiting.
   */
  JsonObject target;
  /** The chat's last command, until it is handled (its check for a redelivery is asynchronous). */
  io.vertx.core.Future<?> commands = io.vertx.core.Future.succeededFuture();
  /**
   * Cards sent to the plugin's current process and not answered yet (vibearound: the SDK may reject
   * them itself): output id -> its request, and (cluster mode) the agent node whose request it is
   * while it waits (null once its end came).
   */
  final java.util.Map<String, OpenCard> openCards = new java.util.HashMap<>();

  record OpenCard(String requestId, String node) {}

  /** A question shown here that the chat's next message answers (its one text field); null: none. */
  TypedAnswer typedAnswer;

  record TypedAnswer(String requestId, String field) {}
  /** Cards open when the chat's prompt ended or the next began: a rejection of one is the SDK's, not a person's. */
  final java.util.Set<String> autoRejectable = new java.util.HashSet<>();
  /** Refused taps in this chat, by request (the most recent requests): each is asked again a bounded number of times. */
  final java.util.Map<String, Integer> refusedTaps = io.switchboard.common.Lru.map(256, false);
  /** When this chat's last re-ask after a refused tap was (or is due): re-asks are paced per chat. */
  long lastReaskAt;
  /** Prompts waiting for their turn, each with the plugin's open session/prompt to answer. */
  final ArrayDeque<Waiting> lane = new ArrayDeque<>();
  Waiting current;
  /** The seq of the current prompt's user_message, and how many turns end before its own does. */
  long promptSeq;
  int turnsToWait = -1;
  /** Turn ends seen on the thread while the current prompt waits. */
  final java.util.List<TurnEnd> turnEnds = new java.util.ArrayList<>();

  /** A turn of the thread ended: its event's seq and the agent's stop reason. */
  record TurnEnd(long seq, String stopReason) {}

  /**
   * A prompt in the lane; {@code done} answers the plugin's session/prompt; {@code seen}, whether the
   * platform sent this message before (then it starts no turn); {@code generation}, the plugin
   * process whose session/prompt waits on it (a later one takes it over when the platform sends the
   * message again after that process died).
   */
  static final class Waiting {
    private final Dialect.Inbound inbound;
    private final Promise<Object> done;
    private final io.vertx.core.Future<Boolean> seen;
    int generation;

    Waiting(Dialect.Inbound inbound, Promise<Object> done, io.vertx.core.Future<Boolean> seen, int generation) {
      this.inbound = inbound;
      this.done = done;
      this.seen = seen;
      this.generation = generation;
    }

    Dialect.Inbound inbound() {
      return inbound;
    }

    Promise<Object> done() {
      return done;
    }

    io.vertx.core.Future<Boolean> seen() {
      return seen;
    }
  }

  Route(String pluginId, String chatId) {
    this.pluginId = pluginId;
    this.chatId = chatId;
  }

  String surface() {
    return pluginId + ":" + chatId;
  }
}
