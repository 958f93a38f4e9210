package io.switchboard.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StatementCacheTest {
  @TempDir
  Path dir;

  @Test
  void aClosedStatementIsPreparedOnceAndComesBackWithoutItsParameters() throws Exception {
    try (Connection conn = StatementCache.wrap(DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("t.db")))) {
      conn.createStatement().execute("CREATE TABLE t (a TEXT NOT NULL)");
      String sql = "INSERT INTO t (a) VALUES (?)";
      PreparedStatement first;
      PreparedStatement compiled;
      try (PreparedStatement st = conn.prepareStatement(sql)) {
        first = st;
        compiled = st.unwrap(PreparedStatement.class);
        st.setString(1, "one");
        st.executeUpdate();
      }
      try (PreparedStatement st = conn.prepareStatement(sql)) {
        assertSame(compiled, st.unwrap(PreparedStatement.class), "compiled once");
        // The same compiled statement, parameters cleared: executing it unbound must fail, not repeat "one".
        assertThrows(SQLException.class, st::executeUpdate);
        st.setString(1, "two");
        st.executeUpdate();
      }
      try (PreparedStatement count = conn.prepareStatement("SELECT group_concat(a) FROM t");
           ResultSet rs = count.executeQuery()) {
        assertEquals("one,two", rs.getString(1));
      }
      // A query read once, closed, and asked again sees the table as it is now.
      try (PreparedStatement st = conn.prepareStatement(sql)) {
        st.setString(1, "three");
        st.executeUpdate();
      }
      try (PreparedStatement count = conn.prepareStatement("SELECT group_concat(a) FROM t");
           ResultSet rs = count.executeQuery()) {
        assertEquals("one,two,three", rs.getString(1));
      }
      conn.close();
      assertTrue(first.isClosed(), "closing the connection closes what it kept");
    }
  }
}
