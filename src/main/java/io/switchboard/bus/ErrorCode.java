package io.switchboard.bus;

import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;

/**
 * Failure codes of event-bus commands. The integer travels as the {@code ReplyException} failure
 * code; the wire name is what surfaces show (the {@code code} of a /ws/chat {@code error} frame).
 */
public enum ErrorCode {
  BAD_REQUEST(400, "bad_frame"),
  UNKNOWN_REQUEST(404, "unknown_request"),
  ALREADY_ANSWERED(409, "already_answered"),
  NOT_ELIGIBLE(403, "not_eligible"),
  /** A chat user who is not among the approvers of the request's chat (the message names them). */
  NOT_APPROVER(401, "not_approver"),
  INVALID_OPTION(422, "invalid_option"),
  UNKNOWN_THREAD(410, "unknown_thread"),
  BUSY(429, "busy"),
  STORE_FAILED(500, "store_failed"),
  CONFLICT(412, "conflict"),
  /**
   * Not a room's refusal: the room did not answer in time, or nothing consumes its address (in a
   * cluster, the agent node is down). What was asked may or may not have been done.
   */
  UNAVAILABLE(503, "unavailable");

  public final int failureCode;
  public final String wireName;

  ErrorCode(int failureCode, String wireName) {
    this.failureCode = failureCode;
    this.wireName = wireName;
  }

  /** Fails the message with this code and a human-readable reason. */
  public void fail(Message<?> message, String reason) {
    message.fail(failureCode, reason);
  }

  /** The code a failed request carried, or null when it failed for another reason (timeout, no handler). */
  public static ErrorCode of(Throwable failure) {
    if (failure instanceof ReplyException re) {
      for (ErrorCode code : values()) {
        if (code.failureCode == re.failureCode()) {
          return code;
        }
      }
    }
    return null;
  }
}
