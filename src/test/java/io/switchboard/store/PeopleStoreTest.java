package io.switchboard.store;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.errorOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * People in the store (issue 44): the bootstrap owner made once, people added and changed with
 * their roles checked, one identity naming one person, the last enabled owner kept, identities
 * listed without their keys, and every change audited — against a real SQLite file, across a restart.
 */
@ExtendWith(VertxExtension.class)
class PeopleStoreTest {
  @TempDir
  Path dir;

  private static Future<JsonObject> send(Vertx vertx, String address, JsonObject body) {
    return vertx.eventBus().<JsonObject>request(address, body).map(m -> m.body());
  }

  @Test
  void peopleTheirIdentitiesAndTheAuditHoldTheirRules(Vertx vertx) {
    String deployment = await(vertx.deployVerticle(new StoreRoom(dir.resolve("db.sqlite"))));
    JsonObject owner = await(send(vertx, Addresses.STORE_PEOPLE_OWNER, new JsonObject())).getJsonObject("person");
    assertEquals("Owner", owner.getString("name"));
    assertEquals(new JsonArray().add("owner"), owner.getJsonArray("roles"));
    assertEquals(owner, await(send(vertx, Addresses.STORE_PEOPLE_OWNER, new JsonObject())).getJsonObject("person"),
        "made once");

    // The hostile rows: each a bad request naming what is wrong, nothing written.
    List<JsonObject> bad = List.of(new JsonObject(), new JsonObject().put("name", "Bob"),
        new JsonObject().put("name", "Bob").put("roles", new JsonArray().add("god")),
        new JsonObject().put("name", "Bob").put("roles", new JsonArray().add(1)),
        new JsonObject().put("name", "  ").put("roles", new JsonArray().add("viewer")),
        new JsonObject().put("name", "x".repeat(101)).put("roles", new JsonArray().add("viewer")));
    for (JsonObject b : bad) {
      Future<JsonObject> refused = send(vertx, Addresses.STORE_PEOPLE_SAVE, b);
      assertEquals(ErrorCode.BAD_REQUEST, errorOf(refused), b.encode());
    }
    assertEquals(ErrorCode.CONFLICT, errorOf(send(vertx, Addresses.STORE_PEOPLE_SAVE, new JsonObject()
        .put("personId", "p_nobody").put("name", "Nobody").put("roles", new JsonArray().add("viewer")))));
    assertEquals(1, await(send(vertx, Addresses.STORE_PEOPLE_LIST, new JsonObject())).getJsonArray("people").size());

    JsonObject bob = await(send(vertx, Addresses.STORE_PEOPLE_SAVE, new JsonObject().put("name", "Bob")
        .put("roles", new JsonArray().add("approver")).put("by", owner.getString("personId")))).getJsonObject("person");
    String bobId = bob.getString("personId");
    // One chat account names one person; linking it to another is refused.
    await(send(vertx, Addresses.STORE_PEOPLE_LINK, new JsonObject().put("personId", bobId).put("kind", "chat")
        .put("key", "telegram:42").put("label", "telegram:42")));
    assertEquals(ErrorCode.CONFLICT, errorOf(send(vertx, Addresses.STORE_PEOPLE_LINK, new JsonObject()
        .put("personId", owner.getString("personId")).put("kind", "chat").put("key", "telegram:42"))));
    assertEquals(ErrorCode.BAD_REQUEST, errorOf(send(vertx, Addresses.STORE_PEOPLE_LINK, new JsonObject()
        .put("personId", bobId).put("kind", "bootstrap").put("key", "x"))), "the bootstrap token is no identity to link");
    await(send(vertx, Addresses.STORE_PEOPLE_LINK, new JsonObject().put("personId", bobId).put("kind", "token")
        .put("key", "a".repeat(64)).put("label", "ci script").put("detail", new JsonObject().put("expiresAt", 99L))));

    // The last enabled owner stays one.
    Future<JsonObject> demote = send(vertx, Addresses.STORE_PEOPLE_SAVE, new JsonObject()
        .put("personId", owner.getString("personId")).put("name", "Owner").put("roles", new JsonArray().add("viewer")));
    assertEquals(ErrorCode.CONFLICT, errorOf(demote));
    assertTrue(demote.cause().getMessage().contains("no owner"), demote.cause().getMessage());

    // Across a restart: found by identity, listed without keys, every change audited.
    await(vertx.undeploy(deployment));
    await(vertx.deployVerticle(new StoreRoom(dir.resolve("db.sqlite"))));
    JsonObject found = await(send(vertx, Addresses.STORE_PEOPLE_FIND, new JsonObject().put("kind", "chat")
        .put("key", "telegram:42")));
    assertEquals(bobId, found.getJsonObject("person").getString("personId"));
    assertNull(await(send(vertx, Addresses.STORE_PEOPLE_FIND, new JsonObject().put("kind", "chat")
        .put("key", "telegram:43"))).getJsonObject("person"));
    JsonArray people = await(send(vertx, Addresses.STORE_PEOPLE_LIST, new JsonObject())).getJsonArray("people");
    assertEquals(List.of("Owner", "Bob"), people.stream().map(p -> ((JsonObject) p).getString("name")).toList());
    String listed = people.encode();
    assertFalse(listed.contains("a".repeat(64)), "a token's hash is never listed: " + listed);
    assertEquals(2, people.getJsonObject(1).getJsonArray("identities").size());
    assertEquals(99L, people.getJsonObject(1).getJsonArray("identities").getJsonObject(1).getLong("expiresAt"));
    JsonArray audit = await(send(vertx, Addresses.STORE_AUDIT_LIST, new JsonObject())).getJsonArray("audit");
    assertEquals(List.of("identity-linked", "identity-linked", "person-added", "person-added"),
        audit.stream().map(a -> ((JsonObject) a).getString("event")).toList(), audit.encodePrettily());
    assertEquals(owner.getString("personId"), audit.getJsonObject(2).getString("personId"), "who added Bob");
  }
}
