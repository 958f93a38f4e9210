package io.switchboard.agent;

import io.switchboard.jsonrpc.JsonRpcPeer;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One session's modes and config options: what the agent offers (told to the thread, so the page
 * offers them) and what a person chose, set now when the agent runs, else at its next start (a
 * resumed or idle-stopped session starts in the agent's defaults). Lives on the agent room's event loop.
 */
final class SessionOptions {
  private final AgentSession session;
  /** What the thread was last told of the agent taking images (null: nothing yet). */
  private Boolean announcedImages;
  /** The session modes the agent offers ({currentModeId, availableModes}), once it said; null before. */
  private JsonObject modes;
  /** The mode a person chose: applied now, or when the agent next starts (a resumed session forgets it). */
  private String wantedMode;
  /** The session config options the agent offers (ACP configOptions), once it said; null before. */
  private JsonArray configOptions;
  /** The config values a person chose, set again at every start as modes are. */
  private final Map<String, String> wantedConfig = new LinkedHashMap<>();

  SessionOptions(AgentSession session) {
    this.session = session;
  }

  /**
   * What an opened session says of its modes goes to the thread (the page offers them); a mode the
   * person chose earlier is set again (an agent that was stopped as idle starts in its default).
   */
  Future<Void> apply(AgentProcess p, Object result) {
    // Whether the page may offer to attach images: said once per session, again only if it changed.
    boolean images = p.takes("image");
    if (announcedImages == null || announcedImages != images) {
      announcedImages = images;
      session.emit(new JsonObject().put("kind", "prompt_capabilities").put("image", images));
    }
    if (JsonRpcPeer.object(result).getValue("configOptions") instanceof JsonArray options) {
      configOptions = options.copy();
      session.emit(new JsonObject().put("kind", "session_config").put("configOptions", options));
    }
    return applyModes(p, result).compose(v -> applyConfig(p));
  }

  /** A {@code session/update} of the agent: it may change the options or switch mode itself. */
  void heard(Object kind, JsonObject update) {
    if ("config_option_update".equals(kind) && update.getValue("configOptions") instanceof JsonArray options) {
      configOptions = options.copy();
    }
    if ("current_mode_update".equals(kind) && modes != null && update.getValue("currentModeId") instanceof String m) {
      modes.put("currentModeId", m); // the agent switched itself (Claude into plan mode): the page shows it
    }
  }

  private Future<Void> applyModes(AgentProcess p, Object result) {
    if (JsonRpcPeer.object(result).getValue("modes") instanceof JsonObject m
        && m.getValue("availableModes") instanceof JsonArray) {
      modes = m.copy();
      session.emit(new JsonObject().put("kind", "session_modes").put("modes", m));
    }
    String current = modes == null ? null : modes.getString("currentModeId");
    if (wantedMode == null || wantedMode.equals(current) || session.acpSessionId() == null) {
      return Future.succeededFuture();
    }
    String mode = wantedMode;
    return switchMode(p, mode).recover(err -> {
      session.emit(AgentSession.error("The agent could not switch back to the mode " + mode + ": "
          + session.describe(err)));
      return Future.succeededFuture();
    });
  }

  /** The config values chosen for the thread that the agent does not have yet, set one after another. */
  private Future<Void> applyConfig(AgentProcess p) {
    Future<Void> done = Future.succeededFuture();
    for (Map.Entry<String, String> wanted : wantedConfig.entrySet()) {
      if (wanted.getValue().equals(configValue(wanted.getKey())) || session.acpSessionId() == null) {
        continue;
      }
      done = done.compose(v -> setConfigOption(p, wanted.getKey(), wanted.getValue()).recover(err -> {
        session.emit(AgentSession.error("The agent could not take the setting " + wanted.getKey() + " = "
            + wanted.getValue() + ": " + session.describe(err)));
        return Future.succeededFuture();
      }));
    }
    return done;
  }

  private String configValue(String id) {
    if (configOptions == null) {
      return null;
    }
    return configOptions.stream().filter(o -> o instanceof JsonObject c && id.equals(c.getString("id")))
        .map(o -> String.valueOf(((JsonObject) o).getValue("currentValue"))).findFirst().orElse(null);
  }

  private Future<Void> setConfigOption(AgentProcess p, String id, String value) {
    return p.peer.request("session/set_config_option", new JsonObject().put("sessionId", session.acpSessionId())
            .put("configId", id).put("value", value))
        .map(result -> {
          // Every page learns the settings, in ACP's own shape (the answer carries all of them).
          JsonArray now = JsonRpcPeer.object(result).getValue("configOptions") instanceof JsonArray a ? a : null;
          if (now != null) {
            configOptions = now.copy();
            session.emit(new JsonObject().put("kind", "acp").put("update", new JsonObject()
                .put("sessionUpdate", "config_option_update").put("configOptions", now)));
          }
          return null;
        });
  }

  /** {@code session/set_mode}; once the agent took it, every page learns the mode changed. */
  private Future<Void> switchMode(AgentProcess p, String modeId) {
    return p.peer.request("session/set_mode", new JsonObject().put("sessionId", session.acpSessionId())
            .put("modeId", modeId))
        .map(x -> {
          modeChanged(modeId);
          return null;
        });
  }

  /** The thread's chosen config values, for a session made after they were chosen. */
  void preferConfig(JsonObject values) {
    values.forEach(e -> wantedConfig.putIfAbsent(e.getKey(), String.valueOf(e.getValue())));
  }

  /** A person chose a config value: set now if the agent runs, else when it next starts. */
  Future<Void> setConfig(String id, String value) {
    wantedConfig.put(id, value);
    AgentProcess ready = session.ready();
    if (ready == null) {
      return Future.succeededFuture();
    }
    return setConfigOption(ready, id, value).recover(err -> Future.failedFuture(session.describe(err)));
  }

  /** The thread's chosen mode, for a session made after it was chosen: set when the agent starts. */
  void prefer(String modeId) {
    if (wantedMode == null) {
      wantedMode = modeId;
    }
  }

  /** A person chose a mode: set now if the agent runs, else when it next starts. */
  Future<Void> setMode(String modeId) {
    if (modes != null && modes.getValue("availableModes") instanceof JsonArray available && available.stream()
        .noneMatch(o -> o instanceof JsonObject mode && modeId.equals(mode.getString("id")))) {
      return Future.failedFuture("the agent " + session.spec().name() + " has no mode \"" + modeId + "\" (its modes: "
          + available.stream().map(o -> o instanceof JsonObject mode ? mode.getString("id") : "?").toList() + ")");
    }
    wantedMode = modeId;
    AgentProcess ready = session.ready();
    if (ready == null) {
      return Future.succeededFuture(); // applied when the agent next starts
    }
    return switchMode(ready, modeId).recover(err -> Future.failedFuture(session.describe(err)));
  }

  /** Every page learns the mode changed, in ACP's own shape. */
  private void modeChanged(String modeId) {
    if (modes != null) {
      modes.put("currentModeId", modeId);
    }
    session.emit(new JsonObject().put("kind", "acp").put("update", new JsonObject()
        .put("sessionUpdate", "current_mode_update").put("currentModeId", modeId)));
  }
}
