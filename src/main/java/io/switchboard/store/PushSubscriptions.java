package io.switchboard.store;

import static io.switchboard.store.Sql.required;
import static io.switchboard.store.Sql.update;

import io.switchboard.common.RandomIds;
import io.switchboard.store.WriteQueue.Write;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

/**
 * The browsers' Web Push subscriptions (one per device that clicked "Notify me"). The endpoint is a
 * capability URL: whoever has it can push to the device, so it stays in the database and the push
 * room, never in a log line or a reply to a page.
 */
final class PushSubscriptions {
  /** Devices kept (today one login for all: per person once people have names). */
  static final int MAX_DEVICES = 10;
  private final Pool readers;
  private final RandomIds ids = new RandomIds();

  PushSubscriptions(Pool readers) {
    this.readers = readers;
  }

  /** {@code {endpoint, p256dh, auth, details, userAgent?}}: saves a device, or updates the one with that endpoint. */
  Write subscribe(JsonObject b) {
    String endpoint = required(b, "endpoint");
    String p256dh = required(b, "p256dh");
    String auth = required(b, "auth");
    boolean details = Boolean.TRUE.equals(b.getValue("details"));
    String userAgent = b.getString("userAgent");
    String id = ids.next("push_", 12);
    long at = System.currentTimeMillis();
    return conn -> {
      update(conn, """
          INSERT INTO push_subscription (subscription_id, endpoint, p256dh, auth, details, created_at, user_agent)
          VALUES (?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth,
            details = excluded.details, user_agent = excluded.user_agent, created_at = excluded.created_at""",
          id, endpoint, p256dh, auth, details ? 1 : 0, at, userAgent);
      // At most MAX_DEVICES: the oldest goes, with what was waiting for it (a socket that subscribes a
      // thousand endpoints makes a card go to ten, not a thousand).
      int dropped = update(conn, "DELETE FROM push_subscription WHERE subscription_id NOT IN (SELECT subscription_id "
          + "FROM push_subscription ORDER BY created_at DESC, rowid DESC LIMIT " + MAX_DEVICES + ")");
      if (dropped > 0) {
        update(conn, "UPDATE outbox SET state = 'superseded' WHERE plugin_id = ? AND state = 'pending' AND chat_id NOT IN "
            + "(SELECT subscription_id FROM push_subscription)", Outbox.PUSH);
      }
      return new JsonObject().put("subscribed", true).put("dropped", dropped);
    };
  }

  /** {@code {endpoint}} or {@code {subscriptionId}}: forgets a device (unsubscribed, or gone at its push service). */
  Write unsubscribe(JsonObject b) {
    String endpoint = b.getString("endpoint");
    String id = b.getString("subscriptionId");
    if (endpoint == null && id == null) {
      throw new IllegalArgumentException("endpoint or subscriptionId is missing");
    }
    return conn -> {
      int n = endpoint != null ? update(conn, "DELETE FROM push_subscription WHERE endpoint = ?", endpoint)
          : update(conn, "DELETE FROM push_subscription WHERE subscription_id = ?", id);
      // What was waiting for it can never be sent.
      update(conn, "UPDATE outbox SET state = 'superseded' WHERE plugin_id = ? AND state = 'pending' AND chat_id NOT IN "
          + "(SELECT subscription_id FROM push_subscription)", Outbox.PUSH);
      return new JsonObject().put("removed", n);
    };
  }

  /** Every device, with its keys: for the push room only. */
  Future<JsonObject> list(JsonObject body) {
    return Sql.listed(readers.query("SELECT * FROM push_subscription ORDER BY created_at").execute(), "subscriptions",
        PushSubscriptions::device);
  }

  /** {@code {subscriptionId}} → {@code {subscription}} (null when it is gone). */
  Future<JsonObject> get(JsonObject body) {
    String id = body == null ? null : body.getString("subscriptionId");
    if (id == null) {
      throw new IllegalArgumentException("subscriptionId is missing");
    }
    return readers.preparedQuery("SELECT * FROM push_subscription WHERE subscription_id = ?").execute(Tuple.of(id))
        .map(rows -> rows.size() == 0 ? new JsonObject().putNull("subscription")
            : new JsonObject().put("subscription", device(rows.iterator().next())));
  }

  private static JsonObject device(io.vertx.sqlclient.Row row) {
    return new JsonObject().put("subscriptionId", row.getString("subscription_id"))
        .put("endpoint", row.getString("endpoint")).put("p256dh", row.getString("p256dh"))
        .put("auth", row.getString("auth")).put("details", row.getInteger("details") == 1)
        .put("createdAt", row.getLong("created_at"));
  }
}
