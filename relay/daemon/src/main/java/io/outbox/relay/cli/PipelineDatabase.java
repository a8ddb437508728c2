package io.outbox.relay.cli;

import io.outbox.relay.spi.DatabaseSettings;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Connections for commands that work on a pipeline's database directly (migrate, dead-letters): the
 * configured URL, user, password and {@code database.properties}.
 */
final class PipelineDatabase {

  private PipelineDatabase() {}

  /**
   * A data source for the pipeline's database.
   *
   * @throws CommandFailedException naming a bad URL or driver property (never their values)
   */
  static PGSimpleDataSource dataSource(DatabaseSettings db) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    try {
      ds.setURL(db.url());
    } catch (IllegalArgumentException e) {
      throw new CommandFailedException("database.url is not a valid PostgreSQL JDBC URL");
    }
    if (db.user() != null) {
      ds.setUser(db.user());
    }
    if (db.password() != null) {
      ds.setPassword(db.password());
    }
    for (Map.Entry<String, String> p : db.properties().entrySet()) {
      try {
        ds.setProperty(p.getKey(), p.getValue());
      } catch (SQLException e) {
        throw new CommandFailedException(
            "database.properties." + p.getKey() + " is not a PostgreSQL JDBC driver property");
      }
    }
    return ds;
  }

  /**
   * A new connection to the pipeline's database; the caller closes it.
   *
   * @throws CommandFailedException with the driver's reason when it cannot connect
   */
  static Connection connect(DatabaseSettings db) {
    PGSimpleDataSource ds = dataSource(db);
    try {
      return ds.getConnection();
    } catch (SQLException e) {
      // The driver never puts the password into its messages.
      throw new CommandFailedException("cannot connect to the database: " + e.getMessage());
    }
  }
}
