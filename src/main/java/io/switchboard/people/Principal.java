package io.switchboard.people;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Set;
import java.util.TreeSet;

/**
 * A named person as a surface found them: who ({@code personId}, {@code name}), by which identity
 * ({@code identity}: {@code bootstrap} — the data directory's access token —, {@code token} — a
 * personal API token —, {@code chat} — a linked chat identity —, {@code passkey}, {@code oidc},
 * {@code proxy}), how strong that login is ({@code strength}), and what they may do
 * ({@code permissions}, their roles' words, narrowed by a token's scope). A surface puts it on what
 * it asks the rooms to do; the permission room judges by it and the ledger keeps it.
 */
public record Principal(String personId, String name, String identity, String strength, Set<String> permissions) {
  public static final java.util.List<String> IDENTITIES = java.util.List.of("bootstrap", "token", "chat", "passkey",
      "oidc", "proxy");

  public Principal {
    permissions = Set.copyOf(permissions);
  }

  public boolean may(String permission) {
    return Roles.allows(permissions, permission);
  }

  public JsonObject toJson() {
    return new JsonObject().put("personId", personId).put("name", name).put("identity", identity)
        .put("strength", strength).put("permissions", new JsonArray(new java.util.ArrayList<>(new TreeSet<>(permissions))));
  }

  /** What the ledger keeps of who answered: no permissions (they are the judge's input, not a fact). */
  public JsonObject who() {
    return new JsonObject().put("personId", personId).put("name", name).put("identity", identity)
        .put("strength", strength);
  }

  /** A stored person ({@code sb.store.people.*}'s shape) signed in by {@code identity} at {@code strength}. */
  public static Principal of(JsonObject person, String identity, String strength) {
    java.util.List<String> roles = person.getJsonArray("roles", new JsonArray()).stream().map(String::valueOf).toList();
    return new Principal(person.getString("personId"), person.getString("name"), identity, strength,
        Roles.permissions(roles));
  }

  /** Parses a principal a surface sent; the message names the field that is wrong. */
  public static Principal parse(Object value) {
    if (!(value instanceof JsonObject o)) {
      throw new IllegalArgumentException("by must be an object {personId, name, identity, strength, permissions}");
    }
    String personId = text(o, "personId");
    String name = text(o, "name");
    String identity = text(o, "identity");
    String strength = text(o, "strength");
    if (!IDENTITIES.contains(identity)) {
      throw new IllegalArgumentException("by.identity must be one of " + IDENTITIES + ", got \"" + identity + "\"");
    }
    if (!(o.getValue("permissions") instanceof JsonArray list)) {
      throw new IllegalArgumentException("by.permissions must be an array of permission words");
    }
    Set<String> permissions = new TreeSet<>();
    for (Object p : list) {
      if (!(p instanceof String s) || !Roles.isPermission(s)) {
        throw new IllegalArgumentException("by.permissions holds \"" + p + "\", which is no permission");
      }
      permissions.add(s);
    }
    return new Principal(personId, name, identity, strength, permissions);
  }

  private static String text(JsonObject o, String field) {
    if (!(o.getValue(field) instanceof String s) || s.isBlank() || s.length() > 200) {
      throw new IllegalArgumentException("by." + field + " must be a non-empty string of at most 200 characters");
    }
    return s;
  }
}
