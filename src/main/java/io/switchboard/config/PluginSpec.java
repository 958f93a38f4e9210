package io.switchboard.config;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;

/**
 * One configured IM plugin: its argv, working directory, environment, the settings object handed
 * to it verbatim at {@code initialize}, who may approve from it, the agent its chats use,
 * (for the vibearound dialect, which does not say who tapped) whether group chats get cards, and
 * who may prompt through it ({@code users}; null when not configured: then its approvers, and
 * nobody when it has none), and whether only chat accounts a person has linked may answer
 * ({@code requireLinked}; false: an unlinked account is judged by {@code approvers} as before people).
 */
public record PluginSpec(String id, String dialect, List<String> command, String cwd,
                         Map<String, String> env, JsonObject config, List<String> approvers,
                         String agent, boolean cardsInGroups, List<String> users, boolean requireLinked) {
  /** Unlinked accounts judged by the lists, as before people. */
  public PluginSpec(String id, String dialect, List<String> command, String cwd, Map<String, String> env,
                    JsonObject config, List<String> approvers, String agent, boolean cardsInGroups,
                    List<String> users) {
    this(id, dialect, command, cwd, env, config, approvers, agent, cardsInGroups, users, false);
  }

  /** Anyone may prompt: written {@code "users": ["*"]}, on purpose. */
  public static final String ANYONE = "*";

  public PluginSpec {
    command = List.copyOf(command);
    env = env == null ? Map.of() : Map.copyOf(env);
    config = config == null ? new JsonObject() : config.copy();
    approvers = approvers == null ? List.of() : List.copyOf(approvers);
    users = users == null ? null : List.copyOf(users);
  }

  /** Without a list of users: its approvers may prompt. */
  public PluginSpec(String id, String dialect, List<String> command, String cwd, Map<String, String> env,
                    JsonObject config, List<String> approvers, String agent, boolean cardsInGroups) {
    this(id, dialect, command, cwd, env, config, approvers, agent, cardsInGroups, null);
  }

  /** Whether this platform user may prompt (and use commands) through the plugin: closed by default. */
  public boolean mayPrompt(String userId) {
    List<String> allowed = users != null ? users : approvers;
    return allowed.contains(ANYONE) || userId != null && allowed.contains(userId);
  }

  @Override
  public JsonObject config() {
    return config.copy();
  }
}
