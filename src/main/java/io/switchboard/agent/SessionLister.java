package io.switchboard.agent;

import io.switchboard.config.AgentSpec;
import io.switchboard.config.Limits;
import io.switchboard.config.ProjectSpec;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.switchboard.process.Sandbox;
import io.switchboard.project.GitLayout;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.List;

/**
 * One-off agent processes. Asks an agent which of its sessions were begun in a project's folder (ACP {@code session/list},
 * stable since 2026-03), so a person can continue from the page one they began in a terminal. The
 * agent runs for this question only, in its sandbox in the project's folder (its {@code .git}
 * read-only), and is stopped after the answer. What it lists is the agent's word: each entry is
 * checked (a session id, a title and a time cut to size), at most {@link #MAX_SESSIONS} a page.
 */
final class SessionLister {
  static final int MAX_SESSIONS = 200;
  private static final int MAX_TITLE = 200;

  private SessionLister() {}

  /**
   * {@code {supported, sessions: [{sessionId, title, updatedAt}], nextCursor}}; {@code supported}
   * false when the agent does not list sessions (its initialize did not offer
   * {@code sessionCapabilities.list}).
   */
  static Future<JsonObject> list(Context context, AgentSpec spec, List<String> argv, ProjectSpec project,
                                 AgentSession.Shared shared, String generation, String cursor, long timeoutMs) {
    Path folder = project.path();
    return oneOff(context, spec, argv, folder, true, shared, generation, timeoutMs, p -> {
      JsonObject caps = p.capabilities.getValue("sessionCapabilities") instanceof JsonObject c ? c : new JsonObject();
      if (caps.getValue("list") == null || Boolean.FALSE.equals(caps.getValue("list"))) {
        return Future.succeededFuture(new JsonObject().put("supported", false).put("sessions", new JsonArray()));
      }
      JsonObject params = new JsonObject().put("cwd", folder.toString());
      if (cursor != null) {
        params.put("cursor", cursor);
      }
      return p.request("session/list", params, timeoutMs)
          .map(result -> checked(JsonRpcPeer.object(result), folder));
    });
  }

  /**
   * Logs the agent out of its account (ACP {@code logout}, offered as {@code agentCapabilities.auth.logout}):
   * {@code {supported, loggedOut}}. It runs for this only, in its sandbox (which shows it its HOME, where
   * agents keep their logins) with a scratch folder of its own, and is stopped after the answer.
   */
  static Future<JsonObject> logout(Context context, AgentSpec spec, List<String> argv, AgentSession.Shared shared,
                                   String generation, long timeoutMs) {
    Path folder = shared.dataDir().resolve("workspaces").resolve("_logout");
    return oneOff(context, spec, argv, folder, false, shared, generation, timeoutMs, p -> {
      JsonObject auth = p.capabilities.getValue("auth") instanceof JsonObject a ? a : new JsonObject();
      if (auth.getValue("logout") == null || Boolean.FALSE.equals(auth.getValue("logout"))) {
        return Future.succeededFuture(new JsonObject().put("supported", false).put("loggedOut", false));
      }
      return p.request("logout", new JsonObject(), timeoutMs)
          .map(result -> new JsonObject().put("supported", true).put("loggedOut", true));
    });
  }

  /**
   * Runs {@code work} on a process of the agent started for it alone, in {@code folder} (a project's
   * {@code repository}, or a scratch folder); stops it after.
   */
  private static Future<JsonObject> oneOff(Context context, AgentSpec spec, List<String> argv, Path folder,
                                           boolean repository, AgentSession.Shared shared, String generation,
                                           long timeoutMs, java.util.function.Function<AgentProcess,
                                           Future<JsonObject>> work) {
    AgentProcess p = new AgentProcess(context, spec, generation, false, shared.limits());
    boolean confined = spec.sandbox() == Sandbox.Mode.BWRAP
        || (spec.sandbox() == Sandbox.Mode.AUTO && shared.sandboxProblem() == null);
    if (spec.sandbox() == Sandbox.Mode.BWRAP && shared.sandboxProblem() != null) {
      return Future.failedFuture(new AgentSession.StartFailure("The agent " + spec.name() + " must run in a sandbox, "
          + "but " + shared.sandboxProblem() + "."));
    }
    Future<Void> started = p.start(() -> {
      java.nio.file.Files.createDirectories(folder); // on a worker: a scratch folder made at first use
      if (!confined) {
        return argv;
      }
      GitLayout layout = repository ? GitLayout.of(folder) : null; // its .git read-only in the sandbox
      // A temporary folder of its own: not a thread's, whose agent may be running.
      Sandbox.Writes writes = Sandbox.Writes.of(shared.dataDir(), "oneoff-" + spec.id(), argv, spec.env(),
          spec.writable());
      return Sandbox.wrap(argv, shared.dataDir(), folder, folder, writes, new Sandbox.Confinement(List.of(),
          layout == null ? List.of() : List.of(layout.commonDir())));
    }, folder, shared.owner(), timeoutMs);
    return started.compose(v -> work.apply(p)).onComplete(done -> p.stop());
  }

  private static JsonObject checked(JsonObject result, Path folder) {
    JsonArray sessions = new JsonArray();
    for (Object o : JsonRpcPeer.array(result.getValue("sessions"))) {
      if (sessions.size() >= MAX_SESSIONS) {
        break;
      }
      if (!(o instanceof JsonObject s) || !(s.getValue("sessionId") instanceof String id) || id.isEmpty()
          || id.length() > 500) {
        continue;
      }
      // An agent that ignores the cwd filter lists other folders' sessions: those are not this project's.
      if (s.getValue("cwd") instanceof String cwd && !Path.of(cwd).normalize().equals(folder)) {
        continue;
      }
      String title = s.getValue("title") instanceof String t && !t.isBlank() ? t.strip() : null;
      sessions.add(new JsonObject().put("sessionId", id)
          .put("title", title == null ? null : title.length() > MAX_TITLE ? title.substring(0, MAX_TITLE) + "…" : title)
          .put("updatedAt", s.getValue("updatedAt") instanceof String at && at.length() <= 64 ? at : null));
    }
    Object next = result.getValue("nextCursor");
    return new JsonObject().put("supported", true).put("sessions", sessions)
        .put("nextCursor", next instanceof String n && n.length() <= 1000 ? n : null);
  }
}
