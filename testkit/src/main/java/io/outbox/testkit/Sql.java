package io.outbox.testkit;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * Plain JDBC for tests: each call opens a session with its {@link Connector} (a {@link
 * TestDatabase}, a {@link PrivatePostgres} session, a fixture's), does one thing, and closes it.
 *
 * <pre>{@code
 * Sql.execute(db::connect, "DELETE FROM outbox");
 * long n = Sql.number(db::connect, "SELECT count(*) FROM outbox");
 * }</pre>
 */
public final class Sql {
  private Sql() {}

  /** Opens a new session of a test database. */
  @FunctionalInterface
  public interface Connector {
    Connection connect() throws SQLException;
  }

  /** Work done inside one transaction. */
  @FunctionalInterface
  public interface Work<T> {
    T apply(Connection c) throws SQLException;
  }

  /** Runs each statement, in autocommit, in one session. */
  public static void execute(Connector db, String... statements) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      for (String statement : statements) {
        s.execute(statement);
      }
    }
  }

  /** The first column of every row {@code query} returns, as text. */
  public static List<String> strings(Connector db, String query) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      List<String> out = new ArrayList<>();
      while (rs.next()) {
        out.add(rs.getString(1));
      }
      return out;
    }
  }

  /** The first column of the first row {@code query} returns, as a long (0 for SQL NULL). */
  public static long number(Connector db, String query) throws SQLException {
    try (Connection c = db.connect()) {
      return number(c, query);
    }
  }

  /** The first column of the first row of {@code query}, read in the open session {@code c}. */
  public static long number(Connection c, String query) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Runs {@code work} in one transaction, commits it and returns what the work returned. */
  public static <T> T inTransaction(Connector db, Work<T> work) throws SQLException {
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      T result = work.apply(c);
      c.commit();
      return result;
    }
  }
}
