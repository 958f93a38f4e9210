package io.switchboard.store;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.HashMap;
import java.util.Map;

/**
 * The writer connection with its prepared statements kept: sqlite-jdbc compiles the SQL again at
 * every {@code prepareStatement} (a fifth of the writer thread's time in a profile of the outbox),
 * and the writes use a few dozen fixed statements. A statement's {@code close()} only clears its
 * parameters; closing the connection closes them all. Writer thread only. (Written here because
 * a pool that caches statements, e.g. commons-dbcp2, is two libraries for one connection.)
 */
final class StatementCache {
  /** Far above the store's fixed statements; SQL built per call would otherwise grow the map. */
  private static final int MAX_KEPT = 128;

  private StatementCache() {}

  static Connection wrap(Connection conn) {
    Map<String, PreparedStatement> kept = new HashMap<>();
    InvocationHandler handler = (proxy, method, args) -> {
      String name = method.getName();
      if (name.equals("prepareStatement") && args != null && args.length == 1 && args[0] instanceof String sql) {
        PreparedStatement st = kept.get(sql);
        if (st == null || st.isClosed()) {
          if (kept.size() >= MAX_KEPT) {
            return conn.prepareStatement(sql); // not a fixed statement: compiled and closed as usual
          }
          st = conn.prepareStatement(sql);
          kept.put(sql, st);
        }
        return reusable(st);
      }
      if (name.equals("close")) {
        for (PreparedStatement st : kept.values()) {
          st.close();
        }
        kept.clear();
      }
      return invoke(conn, method, args);
    };
    return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
        handler);
  }

  private static PreparedStatement reusable(PreparedStatement st) {
    return (PreparedStatement) Proxy.newProxyInstance(PreparedStatement.class.getClassLoader(),
        new Class<?>[] {PreparedStatement.class}, (proxy, method, args) -> {
          if (method.getName().equals("close")) {
            st.clearParameters();
            return null;
          }
          return invoke(st, method, args);
        });
  }

  private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
