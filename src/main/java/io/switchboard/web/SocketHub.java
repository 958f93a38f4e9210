package io.switchboard.web;

import io.switchboard.bus.Addresses;
import io.switchboard.thread.ThreadEvent;
import io.switchboard.config.Limits;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The open {@code /ws/chat} sockets: which are attached to which thread (and the bus consumer
 * feeding each thread's events to them), frames to one thread's sockets or to every page, encoded
 * once, and the byte budget that closes the socket furthest behind when slow readers hold too much.
 */
final class SocketHub {
  private final Vertx vertx;
  private final Limits limits;
  /** The open /ws/chat sockets (closed ones may still hold frames until their connection goes). */
  private final Set<ChatSocket> open = new HashSet<>();
  /** threadId -> the sockets attached to it, and the bus consumer feeding them. */
  private final Map<String, Set<ChatSocket>> attached = new HashMap<>();
  private final Map<String, MessageConsumer<JsonObject>> threadConsumers = new HashMap<>();
  /** What waits to be sent to all sockets together; at most {@code Limits#socketsQueueBytes}. */
  private long queuedBytes;
  private String encodedKey;
  private String encodedText;

  SocketHub(Vertx vertx, Limits limits) {
    this.vertx = vertx;
    this.limits = limits;
  }

  void opened(ChatSocket socket) {
    open.add(socket);
  }

  void closed(ChatSocket socket) {
    open.remove(socket);
  }

  int openCount() {
    return open.size();
  }

  /** Closes (4401) the open sockets whose login ended. */
  void closeUnauthorized(Predicate<ChatSocket> which, String why) {
    for (ChatSocket s : new ArrayList<>(open)) {
      if (which.test(s)) {
        s.closeUnauthorized(why);
      }
    }
  }

  /** Adds a socket to a thread's audience, subscribing to the thread's events for the first one. */
  void attach(String threadId, ChatSocket socket) {
    attached.computeIfAbsent(threadId, id -> new HashSet<>()).add(socket);
    threadConsumers.computeIfAbsent(threadId, id -> vertx.eventBus().<JsonObject>consumer(
        Addresses.threadEvents(id), m -> {
          ThreadEvent event = ThreadEvent.of(m.body());
          String[] encoded = {null}; // once for all the thread's sockets, and only if one sends it now
          Supplier<String> frame = () -> encoded[0] != null ? encoded[0]
              : (encoded[0] = ChatSocket.eventFrame(event).encode());
          toThread(id, s -> s.event(event, frame));
        }));
  }

  void detach(String threadId, ChatSocket socket) {
    Set<ChatSocket> sockets = attached.get(threadId);
    if (sockets != null && sockets.remove(socket) && sockets.isEmpty()) {
      attached.remove(threadId);
      MessageConsumer<JsonObject> consumer = threadConsumers.remove(threadId);
      if (consumer != null) {
        consumer.unregister();
      }
    }
  }

  void toThread(String threadId, Consumer<ChatSocket> send) {
    Set<ChatSocket> sockets = attached.get(threadId);
    if (sockets != null) {
      for (ChatSocket s : Set.copyOf(sockets)) {
        send.accept(s);
      }
    }
  }

  /** One frame, encoded once, to every open page, attached or not. */
  void toAllPages(JsonObject frame) {
    String text = frame.encode();
    new ArrayList<>(open).forEach(s -> s.notice(text));
  }

  /** A thread as it is now, to every open page. */
  void threadChanged(JsonObject thread) {
    JsonObject frame = new JsonObject().put("type", "thread").put("threadId", thread.getString("threadId"))
        .put("agent", thread.getString("agent")).put("title", thread.getString("title"))
        .mergeIn(WebRoom.threadFacts(thread))
        .put("archived", thread.getBoolean("archived", false));
    if (thread.getBoolean("deleted", false)) {
      frame.put("deleted", true);
    }
    toAllPages(frame);
  }

  /**
   * The frame for {@code key}, encoded once: an event or a card goes to every socket of its thread
   * one after another, so the last one encoded is kept, and the sockets share one string (also in
   * the queues of readers that fell behind).
   */
  String encodeOnce(String key, Supplier<JsonObject> frame) {
    if (!key.equals(encodedKey)) {
      encodedText = frame.get().encode();
      encodedKey = key;
    }
    return encodedText;
  }

  /** What may wait to be sent to one socket before it is closed as too slow ({@code Limits#socketQueueBytes}). */
  int socketQueueBytes() {
    return limits.socketQueueBytes();
  }

  /**
   * Frames waiting for slow readers, across sockets. Each socket may hold 4 MiB, but many slow
   * readers at once could hold more than a small heap has, so over this room-wide budget (an eighth
   * of the heap, at most 64 MiB) the socket furthest behind is closed (it resumes from the
   * transcript when its browser reconnects).
   */
  void queued(long delta) {
    queuedBytes += delta;
    while (delta > 0 && queuedBytes > limits.socketsQueueBytes() && !open.isEmpty()) {
      ChatSocket furthest = Collections.max(open, Comparator.comparingLong(ChatSocket::queuedBytes));
      if (furthest.queuedBytes() <= 0) {
        return; // what waits belongs to sockets already closed: it goes with their connections
      }
      furthest.closeSlow();
    }
  }
}
