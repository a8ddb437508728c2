package io.outbox.testkit;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Properties;

/**
 * A fresh, uniquely named PostgreSQL database for one test (class), created through the {@code
 * postgres} database and dropped again by {@link #close()}, together with any logical replication
 * slots that were created in it (they would otherwise block the drop and pin WAL forever).
 */
public final class TestDatabase implements AutoCloseable {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int MAX_IDENTIFIER_LENGTH = 63;
  private static final int SUFFIX_BYTES = 5;
  private static final Duration SLOT_RELEASE_TIMEOUT = Duration.ofSeconds(30);

  private final String name;
  private boolean closed;

  private TestDatabase(String name) {
    this.name = name;
  }

  /**
   * Creates a database named {@code prefix} (lower-cased, reduced to {@code [a-z0-9_]}) plus a
   * random suffix, e.g. {@code polling_it_3f9a0c12d4}.
   */
  public static TestDatabase create(String prefix) {
    String name = uniqueName(prefix);
    try (Connection admin = connectTo("postgres");
        Statement statement = admin.createStatement()) {
      statement.execute("CREATE DATABASE " + quote(name));
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot create test database " + name + " at " + Services.jdbcUrl("postgres"), e);
    }
    return new TestDatabase(name);
  }

  /** A valid, unquoted PostgreSQL identifier: {@code prefix_} plus ten random hex digits. */
  static String uniqueName(String prefix) {
    String clean = prefix.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]+", "_");
    if (clean.isEmpty() || !Character.isLetter(clean.charAt(0)) && clean.charAt(0) != '_') {
      clean = "t_" + clean;
    }
    byte[] bytes = new byte[SUFFIX_BYTES];
    RANDOM.nextBytes(bytes);
    String suffix = "_" + HexFormat.of().formatHex(bytes);
    int room = MAX_IDENTIFIER_LENGTH - suffix.length();
    return (clean.length() > room ? clean.substring(0, room) : clean) + suffix;
  }

  /** The database name (a plain lower-case identifier, no quoting needed). */
  public String name() {
    return name;
  }

  /** The JDBC URL of this database. */
  public String url() {
    return Services.jdbcUrl(name);
  }

  /** The user to connect as (the server's superuser, see {@link Services#pgUser()}). */
  public String user() {
    return Services.pgUser();
  }

  /** The password of {@link #user()}, empty with trust authentication. */
  public String password() {
    return Services.pgPassword();
  }

  /** Opens a new connection to this database; the caller closes it. */
  public Connection connect() throws SQLException {
    return connectTo(name);
  }

  /**
   * Drops the database, first ending its connections and dropping the logical replication slots
   * created in it. Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    try (Connection admin = connectTo("postgres")) {
      dropReplicationSlots(admin);
      try (Statement statement = admin.createStatement()) {
        statement.execute("DROP DATABASE IF EXISTS " + quote(name) + " WITH (FORCE)");
      }
      closed = true;
    } catch (SQLException e) {
      throw new IllegalStateException("cannot drop test database " + name, e);
    }
  }

  private void dropReplicationSlots(Connection admin) throws SQLException {
    // An active slot cannot be dropped: end its walsender first. The slot is released
    // asynchronously, hence the bounded retry.
    try (PreparedStatement terminate =
        admin.prepareStatement(
            "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
                + " WHERE database = ? AND active_pid IS NOT NULL")) {
      terminate.setString(1, name);
      terminate.execute();
    }
    long deadline = System.nanoTime() + SLOT_RELEASE_TIMEOUT.toNanos();
    while (true) {
      try (PreparedStatement drop =
          admin.prepareStatement(
              "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
                  + " WHERE database = ? AND NOT active")) {
        drop.setString(1, name);
        drop.execute();
      }
      if (countSlots(admin) == 0) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new SQLException(
            "replication slots of database "
                + name
                + " are still active after "
                + SLOT_RELEASE_TIMEOUT.toSeconds()
                + " s");
      }
      pause();
    }
  }

  private int countSlots(Connection admin) throws SQLException {
    try (PreparedStatement count =
        admin.prepareStatement("SELECT count(*) FROM pg_replication_slots WHERE database = ?")) {
      count.setString(1, name);
      try (ResultSet rs = count.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static void pause() throws SQLException {
    try {
      Thread.sleep(100);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLException("interrupted while waiting for replication slots to be released", e);
    }
  }

  private static Connection connectTo(String database) throws SQLException {
    Properties properties = new Properties();
    properties.setProperty("user", Services.pgUser());
    properties.setProperty("password", Services.pgPassword());
    return DriverManager.getConnection(Services.jdbcUrl(database), properties);
  }

  private static String quote(String identifier) {
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }

  @Override
  public String toString() {
    return "TestDatabase[" + name + "]";
  }
}
