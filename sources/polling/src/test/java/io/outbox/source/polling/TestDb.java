package io.outbox.source.polling;

import io.outbox.client.OutboxTables;
import io.outbox.schema.Migrator;
import io.outbox.schema.PartitionedLayout;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;

/**
 * A throw-away PostgreSQL database per test with the outbox tables migrated, dropped on close.
 * Reads the OUTBOX_PG_* environment variables of {@code io.outbox.testkit.Services}, with the same
 * defaults (stand-in until the testkit offers a shared helper).
 */
final class TestDb implements AutoCloseable {

  static final String HOST = env("OUTBOX_PG_HOST", "127.0.0.1");
  static final String PORT = env("OUTBOX_PG_PORT", "5432");
  static final String USER = env("OUTBOX_PG_USER", "postgres");
  static final String PASSWORD = env("OUTBOX_PG_PASSWORD", "");

  private final String name;

  private TestDb(String name) {
    this.name = name;
  }

  /** A new database with {@code public.outbox} and {@code public.outbox_dead_letter}. */
  static TestDb create(String purpose) throws SQLException {
    return create(purpose, null);
  }

  /**
   * A new database with {@code public.outbox} in {@code layout} (null: plain) and {@code
   * public.outbox_dead_letter}.
   */
  static TestDb create(String purpose, PartitionedLayout layout) throws SQLException {
    return create(purpose, layout, false);
  }

  /** A database migrated so, with what settlement by position needs when {@code byPosition}. */
  static TestDb create(String purpose, PartitionedLayout layout, boolean byPosition)
      throws SQLException {
    String name =
        ("polling_" + purpose + "_" + UUID.randomUUID().toString().substring(0, 8))
            .toLowerCase(Locale.ROOT);
    try (Connection admin = DriverManager.getConnection(url("postgres"), USER, PASSWORD);
        Statement statement = admin.createStatement()) {
      statement.execute("CREATE DATABASE " + name);
    }
    TestDb db = new TestDb(name);
    new Migrator(OutboxTables.of("outbox", "outbox_dead_letter"), layout, byPosition)
        .migrate(db.url(), USER, PASSWORD);
    return db;
  }

  String url() {
    return url(name);
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
