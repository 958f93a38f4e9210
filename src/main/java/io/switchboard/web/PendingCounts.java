package io.switchboard.web;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The questions waiting in each thread (for the pages' badges and titles), and the coalesced
 * {@code pending} frame that tells every open page the counts that changed.
 */
final class PendingCounts {
  /**
   * How often at most the pages hear of changed counts, all changed threads in one frame: under
   * load every question's start and end went to every open socket as a frame of its own (two frames
   * per question per socket, the web room's largest cost in the load benchmark's profile,
   * docs/performance.md); now each socket gets at most five such frames a second however many
   * threads ask, and a question asked and answered within one period changes nothing on the pages.
   */
  static final long PENDING_NOTICE_MS = 200;

  private final Vertx vertx;
  private final SocketHub hub;
  /** threadId -> its questions waiting for an answer. */
  private final Map<String, Set<String>> pending = new HashMap<>();
  /** threadId -> the count the pages were last told (welcome frames tell the same); absent: 0. */
  private final Map<String, Integer> announced = new HashMap<>();
  private final Set<String> changedSince = new LinkedHashSet<>();

  PendingCounts(Vertx vertx, SocketHub hub) {
    this.vertx = vertx;
    this.hub = hub;
  }

  /** The permission room's pending cards at start: counted, and taken as already told. */
  void restore(Iterable<Object> cards) {
    for (Object o : cards) {
      JsonObject card = (JsonObject) o;
      pending.computeIfAbsent(card.getString("threadId"), id -> new HashSet<>()).add(card.getString("requestId"));
    }
    pending.forEach((threadId, ids) -> announced.put(threadId, ids.size()));
  }

  /** The count the pages were last told for a thread (a new page's welcome gives the same, so all agree). */
  int count(String threadId) {
    return announced.getOrDefault(threadId, 0);
  }

  boolean isPending(String threadId, String requestId) {
    return pending.getOrDefault(threadId, Set.of()).contains(requestId);
  }

  /** The ids of the pending requests that {@code which} picks, in every thread. */
  void forEachRequest(Predicate<String> which, java.util.function.Consumer<String> action) {
    pending.values().forEach(set -> set.stream().filter(which).forEach(action));
  }

  void changed(String threadId, String requestId, boolean waiting) {
    if (threadId == null || requestId == null) {
      return;
    }
    Set<String> ids = pending.computeIfAbsent(threadId, id -> new HashSet<>());
    boolean changed = waiting ? ids.add(requestId) : ids.remove(requestId);
    if (ids.isEmpty()) {
      pending.remove(threadId);
    }
    if (changed && changedSince.isEmpty()) {
      vertx.setTimer(PENDING_NOTICE_MS, t -> announce());
    }
    if (changed) {
      changedSince.add(threadId);
    }
  }

  /** Tells every open page, in one frame encoded once, the counts that changed since the last time. */
  private void announce() {
    JsonObject counts = new JsonObject();
    for (String threadId : changedSince) {
      Set<String> ids = pending.get(threadId);
      int count = ids == null ? 0 : ids.size();
      if (count != count(threadId)) {
        counts.put(threadId, count);
        if (count == 0) {
          announced.remove(threadId);
        } else {
          announced.put(threadId, count);
        }
      }
    }
    changedSince.clear();
    if (!counts.isEmpty()) {
      hub.toAllPages(new JsonObject().put("type", "pending").put("counts", counts));
    }
  }
}
