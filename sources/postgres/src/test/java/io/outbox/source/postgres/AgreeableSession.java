package io.outbox.source.postgres;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A database session that says yes to everything, for the lease's timing rules without a database:
 * every lock is free, every query answers one row of {@code true} and {@code 1}, every update
 * changes one row (counted: the lease's renewals).
 */
final class AgreeableSession {

  final AtomicInteger updates = new AtomicInteger();

  Connection open() {
    return proxy(
        Connection.class,
        (self, method, args) ->
            switch (method.getName()) {
              case "prepareStatement", "createStatement" -> statement();
              default -> nothing(self, method.getReturnType(), method.getName(), args);
            });
  }

  private PreparedStatement statement() {
    return proxy(
        PreparedStatement.class,
        (self, method, args) ->
            switch (method.getName()) {
              case "executeQuery" -> row();
              case "executeUpdate" -> oneRowUpdated();
              default -> nothing(self, method.getReturnType(), method.getName(), args);
            });
  }

  private int oneRowUpdated() {
    updates.incrementAndGet();
    return 1;
  }

  private static ResultSet row() {
    return proxy(
        ResultSet.class,
        (self, method, args) ->
            switch (method.getName()) {
              case "next", "getBoolean" -> true;
              case "getLong" -> 1L;
              case "getInt" -> 1;
              default -> nothing(self, method.getReturnType(), method.getName(), args);
            });
  }

  /** What a call answers that the lease does not look at: nothing, zero or false. */
  private static Object nothing(Object self, Class<?> type, String name, Object[] args) {
    if (name.equals("equals")) {
      return self == args[0];
    }
    if (name.equals("hashCode")) {
      return System.identityHashCode(self);
    }
    if (name.equals("toString")) {
      return "agreeable session";
    }
    if (type == boolean.class) {
      return false;
    }
    if (type == int.class) {
      return 0;
    }
    if (type == long.class) {
      return 0L;
    }
    return null; // void, and the objects nobody reads
  }

  private static <T> T proxy(Class<T> type, InvocationHandler handler) {
    return type.cast(
        Proxy.newProxyInstance(
            AgreeableSession.class.getClassLoader(), new Class<?>[] {type}, handler));
  }
}
