package io.switchboard.jsonrpc;

import io.vertx.core.json.JsonObject;

/** A JSON-RPC error: received in a response, or raised by a handler to answer a request with. */
public class JsonRpcError extends RuntimeException {
  public static final int PARSE_ERROR = -32700;
  public static final int INVALID_REQUEST = -32600;
  public static final int METHOD_NOT_FOUND = -32601;
  public static final int INVALID_PARAMS = -32602;
  public static final int INTERNAL_ERROR = -32603;
  /** ACP: the agent needs {@code authenticate} first. */
  public static final int AUTH_REQUIRED = -32000;
  /** ACP: a file that does not exist. */
  public static final int RESOURCE_NOT_FOUND = -32002;
  public static final int REQUEST_CANCELLED = -32800;

  private final int code;
  private final Object data;

  public JsonRpcError(int code, String message) {
    this(code, message, null);
  }

  public JsonRpcError(int code, String message, Object data) {
    super(message, null, false, false);
    this.code = code;
    this.data = data;
  }

  public int code() {
    return code;
  }

  public Object data() {
    return data;
  }

  public JsonObject toJson() {
    JsonObject error = new JsonObject().put("code", code).put("message", getMessage());
    if (data != null) {
      error.put("data", data);
    }
    return error;
  }

  /**
   * The peer's own error answer to a request, read leniently: agents send odd codes (500) and odd
   * shapes. Unlike an error made here (not sent, peer gone), it proves the peer read the request.
   */
  public static JsonRpcError from(Object error) {
    if (error instanceof JsonObject e) {
      Object code = e.getValue("code");
      int c = code instanceof Number n ? n.intValue() : INTERNAL_ERROR;
      Object message = e.getValue("message");
      return new Answered(c, message == null ? "error " + c : String.valueOf(message), e.getValue("data"));
    }
    return new Answered(INTERNAL_ERROR, String.valueOf(error), null);
  }

  /** An error the peer answered (see {@link #from}). */
  public static final class Answered extends JsonRpcError {
    Answered(int code, String message, Object data) {
      super(code, message, data);
    }
  }
}
