package io.outbox.schema;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;

/**
 * A throw-away PostgreSQL database per test, created through the {@code postgres} database and
 * dropped on close. Stand-in until {@code io.outbox.testkit.TestDatabase} exists; reads the same
 * OUTBOX_PG_* environment variables with the same defaults.
 */
final class ScratchDatabase implements AutoCloseable {

  private static final String HOST = env("OUTBOX_PG_HOST", "127.0.0.1");
  private static final String PORT = env("OUTBOX_PG_PORT", "5432");
  private static final String USER = env("OUTBOX_PG_USER", "postgres");
  private static final String PASSWORD = env("OUTBOX_PG_PASSWORD", "");

  private final String name;

  private ScratchDatabase(String name) {
    this.name = name;
  }

  static ScratchDatabase create(String purpose) throws SQLException {
    String name =
        ("schema_" + purpose + "_" + UUID.randomUUID().toString().substring(0, 8))
            .toLowerCase(Locale.ROOT);
    try (Connection admin = DriverManager.getConnection(url("postgres"), USER, PASSWORD);
        Statement statement = admin.createStatement()) {
      statement.execute("CREATE DATABASE " + name);
    }
    return new ScratchDatabase(name);
  }

  String url() {
    return url(name);
  }

  String user() {
    return USER;
  }

  String password() {
    return PASSWORD;
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(url(), USER, PASSWORD);
  }

  @Override
  public void close() throws SQLException {
    try (Connection admin = DriverManager.getConnection(url("postgres"), USER, PASSWORD);
        Statement statement = admin.createStatement()) {
      statement.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
  }

  private static String url(String database) {
    return "jdbc:postgresql://" + HOST + ":" + PORT + "/" + database;
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }
}
