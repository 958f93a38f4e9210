package io.switchboard.plugin;

import io.switchboard.permission.CancelReason;
import io.vertx.core.json.JsonObject;

/** How the chat texts name surfaces, answers and reasons: in words, never as ids or slugs. */
final class Surfaces {
  private Surfaces() {
  }

  /** "in the web chat", "in this chat's plugin (telegram)", … for a surface id. */
  static String where(String surface) {
    if (surface == null || surface.isEmpty()) {
      return "elsewhere";
    }
    if (surface.equals("web")) {
      return "in the web chat";
    }
    int colon = surface.indexOf(':');
    return colon < 0 ? "in " + surface : "in another chat of " + surface.substring(0, colon);
  }

  /** The chosen option as a person says it: "allowed once", "rejected", … */
  static String option(JsonObject outcome) {
    String kind = outcome.getString("kind");
    if (kind == null) {
      return "chose " + outcome.getString("optionId");
    }
    return switch (kind) {
      case "allow_once" -> "allowed once";
      case "allow_always" -> "always allowed";
      case "reject_once" -> "rejected";
      case "reject_always" -> "always rejected";
      case "accept" -> "answered";
      case "decline" -> "declined";
      case "cancel" -> "cancelled";
      default -> "chose " + outcome.getString("optionId");
    };
  }

  /** Why a request ended without an answer, in words. */
  static String reason(String reason) {
    return CancelReason.words(reason);
  }
}
