package io.switchboard.permission;

import io.vertx.core.json.JsonObject;

/**
 * Why a permission request (or a question) ended without an answer: the slug the ledger keeps and the words a
 * person reads, in IM chats and in the web page (which gets them from {@code GET /api/reasons}).
 */
public enum CancelReason {
  SESSION_CANCELLED("session-cancelled", "the turn was stopped"),
  AGENT_EXITED("agent-exited", "the agent exited"),
  SURFACE_GONE("surface-gone", "no one was left who could answer"),
  NO_SURFACE("no-surface", "there was nowhere to show it"),
  SHUTDOWN("shutdown", "the gateway stopped"),
  VOIDED_BY_RESTART("voided-by-restart", "the gateway restarted"),
  TOO_MANY_PENDING("too-many-pending", "too many questions were waiting at once"),
  /** Cluster mode: no edge node (no surface that could answer) was a member for the grace period. */
  NO_EDGE("no-edge", "no surface was connected to answer it"),
  /** The ledger could not record the request: it was never shown, and has no row (nothing to void). */
  NOT_RECORDED("not-recorded", "it could not be recorded"),
  /** The agent took its own question back ({@code $/cancel_request}). */
  WITHDRAWN("withdrawn", "the agent withdrew its question"),
  /** The agent said the interaction at a question's URL is complete ({@code elicitation/complete}). */
  COMPLETED("completed", "the agent said it is done");

  private final String slug;
  private final String words;

  CancelReason(String slug, String words) {
    this.slug = slug;
    this.words = words;
  }

  public String slug() {
    return slug;
  }

  /** The words for a slug; one this gateway does not know (a newer node's) is read as words. */
  public static String words(String slug) {
    if (slug == null) {
      return "no reason given";
    }
    for (CancelReason r : values()) {
      if (r.slug.equals(slug)) {
        return r.words;
      }
    }
    return slug.replace('-', ' ');
  }

  /** Every slug with its words: {@code {"session-cancelled": "the turn was stopped", …}}. */
  public static JsonObject all() {
    JsonObject all = new JsonObject();
    for (CancelReason r : values()) {
      all.put(r.slug, r.words);
    }
    return all;
  }
}
