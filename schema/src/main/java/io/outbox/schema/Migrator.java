package io.outbox.schema;

import io.outbox.client.OutboxTables;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Creates or upgrades one outbox's tables (outbox, dead letters, notify trigger) with Flyway, from
 * the migrations in {@value #LOCATION}, idempotently.
 *
 * <p>Each outbox keeps its own Flyway history table, {@link OutboxTables#historyTable()} in the
 * outbox's schema, so the relay's migrations never mix with the application's own Flyway history
 * (and an application's default Flyway location, {@code db/migration}, never picks up ours).
 * Because the outbox usually lands in a schema that already holds application tables, a missing
 * history table is started at version 0 ("baseline on migrate" with baseline version 0): every
 * relay migration still runs, none is skipped. {@code clean} is disabled. Schemas that do not exist
 * yet are created.
 */
public final class Migrator {

  /** Where the relay's migrations live on the classpath. */
  public static final String LOCATION = "classpath:db/outbox-relay/migration";

  /** The oldest PostgreSQL major version supported: {@code gen_random_uuid()} is built in. */
  static final int MIN_POSTGRESQL_MAJOR = 13;

  private final OutboxTables tables;
  private final PartitionedLayout partitioned; // null: the plain layout
  private final boolean byPosition; // on-publish = position

  /** A migrator for these tables in the plain layout; it holds no connection. */
  public Migrator(OutboxTables tables) {
    this(tables, null);
  }

  /**
   * A migrator for these tables; with {@code partitioned}, after the migrations it makes the outbox
   * partitioned so ({@link PartitionedLayout#apply}). It holds no connection.
   */
  public Migrator(OutboxTables tables, PartitionedLayout partitioned) {
    this(tables, partitioned, false);
  }

  /**
   * A migrator for these tables; with {@code partitioned} as above, and with {@code byPosition}
   * what settlement by position needs ({@link PositionLayout}) after the migrations.
   */
  public Migrator(OutboxTables tables, PartitionedLayout partitioned, boolean byPosition) {
    this.tables = Objects.requireNonNull(tables, "tables");
    this.partitioned = partitioned;
    this.byPosition = byPosition;
  }

  /** The tables this migrator creates. */
  public OutboxTables tables() {
    return tables;
  }

  /**
   * Migrates through a JDBC URL.
   *
   * @param jdbcUrl a {@code jdbc:postgresql:} URL
   * @param user the database user, or {@code null} to use the URL's
   * @param password the password, or {@code null}; never part of any message
   * @throws MigrationException when the database is unreachable or a migration fails
   */
  public MigrationResult migrate(String jdbcUrl, String user, String password) {
    Objects.requireNonNull(jdbcUrl, "jdbcUrl");
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    try {
      dataSource.setUrl(jdbcUrl);
    } catch (IllegalArgumentException e) {
      throw failure(
          "the JDBC URL is not a valid jdbc:postgresql: URL: " + MigrationErrors.redact(jdbcUrl),
          e);
    }
    if (user != null) {
      dataSource.setUser(user);
    }
    if (password != null) {
      dataSource.setPassword(password);
    }
    return migrateWith(dataSource);
  }

  /**
   * Migrates through a data source; connections are borrowed and closed again.
   *
   * @throws MigrationException when the database is unreachable or a migration fails
   */
  public MigrationResult migrate(DataSource dataSource) {
    return migrateWith(Objects.requireNonNull(dataSource, "dataSource"));
  }

  private MigrationResult migrateWith(DataSource dataSource) {
    try {
      checkServerVersion(dataSource);
      Flyway flyway = flyway(dataSource);
      MigrateResult result = flyway.migrate();
      String version =
          result.targetSchemaVersion != null ? result.targetSchemaVersion : currentVersion(flyway);
      PartitionedLayout.Outcome layout = null;
      if (partitioned != null) {
        try (Connection c = dataSource.getConnection()) {
          layout = partitioned.apply(c, tables);
        }
      }
      if (byPosition) {
        try (Connection c = dataSource.getConnection()) {
          PositionLayout.apply(c, tables);
        }
      }
      return new MigrationResult(tables, result.migrationsExecuted, version, partitioned, layout);
    } catch (MigrationException e) {
      throw e;
    } catch (SQLException | RuntimeException e) {
      throw failure(database(dataSource) + MigrationErrors.describe(e), e);
    }
  }

  /** {@code "database app at db:5432: "} for a PostgreSQL data source, else empty. */
  private static String database(DataSource dataSource) {
    if (!(dataSource instanceof PGSimpleDataSource pg)) {
      return "";
    }
    String[] hosts = pg.getServerNames();
    int[] ports = pg.getPortNumbers();
    StringBuilder where =
        new StringBuilder("database ").append(pg.getDatabaseName()).append(" at ");
    for (int i = 0; i < hosts.length; i++) {
      where.append(i == 0 ? "" : ",").append(hosts[i]);
      if (ports != null && i < ports.length && ports[i] > 0) {
        where.append(':').append(ports[i]);
      }
    }
    return where.append(": ").toString();
  }

  /**
   * The SQL {@link #migrate} runs on a database without these tables, as one script, without
   * connecting to any database: the same migration files with the same placeholder values, in
   * version order, each headed by its file name, after a {@code CREATE SCHEMA IF NOT EXISTS} for
   * each schema other than {@code public} (Flyway creates missing schemas). Not in it: Flyway's
   * history table. Every statement is idempotent, so the script may run again.
   *
   * @throws MigrationException when a migration cannot be read
   */
  public String script() {
    if (partitioned != null) {
      throw failure(
          "cannot print the SQL of the partitioned layout: the conversion depends on the table it"
              + " finds (its rows, grants, indexes); run migrate against the database",
          null);
    }
    if (MappedLayout.needed(tables)) {
      // What MappedLayout does depends on the table found: the columns it adds, those it renames.
      throw failure(
          "cannot print the SQL for a table in another layout (columns.* maps the relay's"
              + " columns to "
              + tables.displayTable()
              + "'s own): what migrate adds depends on the table it finds; run migrate against"
              + " it, or a copy of it (docs/coming-from-debezium.md)",
          null);
    }
    try {
      String script = MigrationScript.of(configuration(), tables, schemas());
      return byPosition ? script + PositionLayout.script(tables) : script;
    } catch (IOException | RuntimeException e) {
      throw failure("cannot read the migrations in " + LOCATION + ": " + e.getMessage(), e);
    }
  }

  private Set<String> schemas() {
    Set<String> schemas = new LinkedHashSet<>();
    schemas.add(tables.schema()); // first: holds the history table
    schemas.add(tables.deadLetterSchema());
    return schemas;
  }

  private Flyway flyway(DataSource dataSource) {
    return configuration().dataSource(dataSource).load();
  }

  /** Everything but the data source: {@link #migrate} and {@link #script} share it. */
  private FluentConfiguration configuration() {
    Set<String> schemas = schemas();
    return Flyway.configure(Migrator.class.getClassLoader())
        .locations(LOCATION)
        .failOnMissingLocations(true)
        .schemas(schemas.toArray(String[]::new))
        .defaultSchema(tables.schema())
        .table(tables.historyTable())
        .createSchemas(true)
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .baselineDescription("outbox-relay history start")
        .cleanDisabled(true)
        .placeholders(MigrationPlaceholders.of(tables))
        .loggers(FlywayLogging.class.getName())
        .callbacks(
            MappedLayout.needed(tables)
                ? new org.flywaydb.core.api.callback.Callback[] {new MappedLayout(tables)}
                : new org.flywaydb.core.api.callback.Callback[0]);
  }

  private void checkServerVersion(DataSource dataSource) throws SQLException {
    try (Connection connection = dataSource.getConnection()) {
      DatabaseMetaData metaData = connection.getMetaData();
      if (metaData.getDatabaseMajorVersion() < MIN_POSTGRESQL_MAJOR) {
        throw failure(
            "outbox-relay needs PostgreSQL "
                + MIN_POSTGRESQL_MAJOR
                + " or later (for the built-in gen_random_uuid()), the server is "
                + metaData.getDatabaseProductVersion(),
            null);
      }
    }
  }

  private static String currentVersion(Flyway flyway) {
    MigrationInfo current = flyway.info().current();
    return current == null || current.getVersion() == null
        ? "0"
        : current.getVersion().getVersion();
  }

  /** The driver never puts the password into messages; URL parameters are masked here. */
  private MigrationException failure(String cause, Throwable e) {
    String message = "Migrating the outbox table " + tables.displayTable() + " failed: " + cause;
    return new MigrationException(MigrationErrors.redact(message), e);
  }
}
