package io.switchboard.push;

/**
 * What a push service said to one message, reduced to what the caller does next: nothing, prune
 * the subscription, shrink the message, or retry (after {@code retryAfterMs} when the service said).
 *
 * @param httpStatus the push service's status, or -1 when no answer came (connection error, timeout)
 * @param reason a short text for the log: the start of the service's answer, or the error
 */
public record Delivery(Status status, int httpStatus, long retryAfterMs, String reason) {
  /** What to do with a message and its subscription after one attempt. */
  public enum Status {
    /** Accepted by the push service (200, 201, 202). */
    DELIVERED,
    /** The subscription is dead (404, 410): delete it, do not retry. */
    GONE,
    /** The encrypted message is too large for this service (413): retrying it as it is cannot work. */
    TOO_LARGE,
    /** Rate-limited or unavailable (429, 503): retry after {@code retryAfterMs}. */
    RETRY_AFTER,
    /** Anything else, including no answer at all: retry later with a backoff of the caller's choosing. */
    FAILED
  }
}
