package io.switchboard.store;

import static io.switchboard.testkit.PermissionHarness.await;
import static io.switchboard.testkit.PermissionHarness.request;
import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The ledger's hash chain: intact after real traffic, and broken, at the right event, by any edit. */
@ExtendWith(VertxExtension.class)
class LedgerChainTest {
  @TempDir
  Path dir;
  Path db;

  /** Real traffic through the permission room: answered, refused, cancelled, shut down. */
  @BeforeEach
  void traffic(Vertx vertx) {
    db = dir.resolve("switchboard.db");
    PermissionHarness rooms = new PermissionHarness(vertx, db).start();
    for (String tc : List.of("tc1", "tc2", "tc3")) {
      rooms.register(request("t1", "s1", tc, "web"));
    }
    waitFor(() -> rooms.shown.size() == 3, "three cards");
    await(rooms.answer(rooms.idOf("tc1"), "allow", "web", "alice"));
    rooms.answer(rooms.idOf("tc2"), "allow", "telegram:9", "bob"); // refused: noted in the audit trail
    rooms.publish(Addresses.SESSION_CANCELLED, new JsonObject().put("threadId", "t1").put("sessionId", "s1"));
    waitFor(() -> rooms.ended.size() == 3, "three ends");
    rooms.shutdown();
    rooms.close();
  }

  private void tamper(String sql) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db)) {
      c.createStatement().execute(sql);
    }
  }

  @Test
  void realTrafficLeavesAnIntactChain() throws Exception {
    LedgerReader.Verification v = LedgerReader.verify(db);
    assertTrue(v.intact(), v.toString());
    assertEquals(7, v.chained(), "3 registered, 1 rejected answer, 3 ends");
    assertEquals(0, v.unchained());
  }

  @Test
  void editingAnEventBreaksTheChainThere() throws Exception {
    tamper("UPDATE permission_event SET user_name = 'mallory' WHERE event = 'selected'");
    LedgerReader.Verification v = LedgerReader.verify(db);
    assertFalse(v.intact());
    assertEquals(selectedEventId(), v.brokenEventId());
  }

  @Test
  void editingWhatARequestAskedOrHowItEndedIsCaught() throws Exception {
    tamper("UPDATE permission_request SET tool_call = '{\"toolCallId\":\"tc1\",\"title\":\"ls\"}' "
        + "WHERE request_id = (SELECT request_id FROM permission_event WHERE event = 'selected')");
    LedgerReader.Verification asked = LedgerReader.verify(db);
    assertFalse(asked.intact());
    assertTrue(asked.why().contains("not what was registered"), asked.why());
  }

  @Test
  void changingAnAnswerOnTheRowIsCaught() throws Exception {
    tamper("UPDATE permission_request SET option_id = 'reject', option_kind = 'reject_once' WHERE state = 'selected'");
    LedgerReader.Verification v = LedgerReader.verify(db);
    assertFalse(v.intact());
    assertEquals(selectedEventId(), v.brokenEventId());
  }

  @Test
  void removingAnEventBreaksTheChainAtTheNext() throws Exception {
    long removed = selectedEventId();
    tamper("DELETE FROM permission_event WHERE id = " + removed);
    LedgerReader.Verification v = LedgerReader.verify(db);
    assertFalse(v.intact());
    assertTrue(v.brokenEventId() > removed, v.toString());
  }

  private long selectedEventId() throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db + "?open_mode=1");
         var rs = c.createStatement().executeQuery("SELECT id FROM permission_event WHERE event = 'selected'")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
