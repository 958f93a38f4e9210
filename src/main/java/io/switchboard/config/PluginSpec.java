package io.switchboard.config;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;

/**
 * One configured IM plugin: its argv, working directory, environment, the settings object handed
 * to it verbatim at {@code initialize}, who may approve from it, the agent its chats use, and
 * (for the vibearound dialect, which does not say who tapped) whether group chats get cards.
 */
public record PluginSpec(String id, String dialect, List<String> command, String cwd,
                         Map<String, String> env, JsonObject config, List<String> approvers,
                         String agent, boolean cardsInGroups) {
  public PluginSpec {
    command = List.copyOf(command);
    env = env == null ? Map.of() : Map.copyOf(env);
    config = config == null ? new JsonObject() : config.copy();
    approvers = approvers == null ? List.of() : List.copyOf(approvers);
  }

  @Override
  public JsonObject config() {
    return config.copy();
  }
}
