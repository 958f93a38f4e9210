package io.switchboard.plugin;

import io.switchboard.bus.Addresses;
import io.switchboard.config.PluginSpec;
import io.switchboard.people.Principal;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The people behind chat accounts: a chat identity is {@code (plugin, platform user id)}, linked to
 * one person (store/People). A tap or typed answer carries the linked person ({@code by}); one no
 * person has linked is refused by the permission room. At start, the ids a plugin's config names
 * ({@code approvers}, {@code users}) that no person has linked yet become people of their own
 * (approvers: {@code approver}, also allowed to prompt: {@code operator}), so a gateway that named
 * approvers before there were people goes on as it did; after that, people link accounts with
 * {@code /link}.
 */
final class ChatPeople {
  private static final Logger log = LoggerFactory.getLogger(ChatPeople.class);
  /** How a linked chat account signs in: the platform vouches for the account, the link for the person. */
  static final String STRENGTH = "linked-chat";

  private final BiFunction<String, JsonObject, Future<JsonObject>> ask;

  /** {@code ask}: the plugin room's way to the store (in a cluster, the edge's own). */
  ChatPeople(BiFunction<String, JsonObject, Future<JsonObject>> ask) {
    this.ask = ask;
  }

  static String key(String pluginId, String userId) {
    return pluginId + ":" + userId;
  }

  /** The person who linked this chat account, or null (nobody has, or they are disabled). */
  Future<Principal> principal(String pluginId, String userId) {
    if (userId == null) {
      return Future.succeededFuture(null);
    }
    return ask.apply(Addresses.STORE_PEOPLE_FIND, new JsonObject().put("kind", "chat").put("key", key(pluginId, userId)))
        .map(found -> {
          JsonObject person = found.getJsonObject("person");
          return person == null || person.getBoolean("disabled", false) ? null
              : Principal.of(person, "chat", STRENGTH);
        });
  }

  /** The config's approvers and users that no person has linked become people (see the class comment). */
  Future<Void> migrate(List<PluginSpec> specs) {
    Map<String, String> roles = new LinkedHashMap<>(); // chat key -> role
    Map<String, String> names = new LinkedHashMap<>();
    for (PluginSpec spec : specs) {
      List<String> ids = new ArrayList<>(spec.approvers());
      if (spec.users() != null) {
        ids.addAll(spec.users());
      }
      for (String id : ids) {
        if (id.equals(PluginSpec.ANYONE)) {
          continue; // anyone is no one to name
        }
        String role = spec.approvers().contains(id) && !spec.mayPrompt(id) ? "approver" : "operator";
        roles.putIfAbsent(key(spec.id(), id), role);
        names.putIfAbsent(key(spec.id(), id), id + " (" + spec.id() + ")");
      }
    }
    Future<Integer> made = Future.succeededFuture(0);
    for (var e : roles.entrySet()) {
      made = made.compose(n -> ask.apply(Addresses.STORE_PEOPLE_FIND, new JsonObject().put("kind", "chat")
              .put("key", e.getKey()))
          .compose(found -> found.getJsonObject("person") != null ? Future.succeededFuture(n)
              : ask.apply(Addresses.STORE_PEOPLE_SAVE, new JsonObject().put("name", names.get(e.getKey()))
                      .put("roles", new JsonArray().add(e.getValue())).put("by", "config"))
                  .compose(saved -> ask.apply(Addresses.STORE_PEOPLE_LINK, new JsonObject()
                      .put("personId", saved.getJsonObject("person").getString("personId")).put("kind", "chat")
                      .put("key", e.getKey()).put("label", e.getKey()).put("by", "config")))
                  .map(x -> n + 1)));
    }
    return made.onSuccess(n -> {
      if (n > 0) {
        log.info("{} chat accounts named by plugins' approvers and users became people of their own (README, People)",
            n);
      }
    }).mapEmpty();
  }
}
