package io.outbox.source.postgres;

import io.outbox.admin.OutboxStatus.ConnectionOpener;
import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.SourceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks, at start-up and at activation, that the outbox and dead-letter tables exist with the
 * columns the sources use, under the names {@code columns.*} maps them to, and finds how the
 * payload column is typed: one check for both sources, one line per mismatch.
 */
public final class OutboxTableCheck {

  private static final Logger log = LoggerFactory.getLogger(OutboxTableCheck.class);

  /** A table's columns and their types. */
  private static final String COLUMNS =
      "SELECT a.attname, format_type(a.atttypid, a.atttypmod)"
          + " FROM pg_attribute a"
          + " WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped";

  private static final List<String> OUTBOX_COLUMNS = OutboxTables.OUTBOX_COLUMNS;

  private static final List<String> STRINGS = List.of("text", "character varying", "character");
  private static final List<String> KEYS =
      List.of("text", "character varying", "character", "uuid", "integer", "bigint");
  private static final List<String> PAYLOAD_TYPES = List.of("jsonb", "json", "text", "bytea");
  private static final List<String> TIMES =
      List.of("timestamp with time zone", "timestamp without time zone");

  /** Per column, the types (without length) the claim and the settlements can read and write. */
  private static final Map<String, List<String>> ACCEPTED_TYPES =
      Map.ofEntries(
          Map.entry("id", List.of("bigint", "integer")),
          Map.entry("event_id", List.of("uuid")),
          Map.entry("aggregate_type", KEYS),
          Map.entry("aggregate_id", KEYS),
          Map.entry("event_type", STRINGS),
          Map.entry("destination", STRINGS),
          Map.entry("headers", List.of("jsonb", "json", "text", "character varying")),
          Map.entry("created_at", List.of("timestamp with time zone")),
          Map.entry("available_at", TIMES),
          Map.entry("published_at", TIMES),
          Map.entry("attempts", List.of("integer", "smallint", "bigint")),
          Map.entry("next_attempt_at", TIMES),
          Map.entry("last_error", List.of("text", "character varying")));

  private OutboxTableCheck() {}

  /**
   * What a source checks before the relay starts, on sessions of its own: first that the database's
   * sessions are not pooled by transaction ({@link SessionPoolingCheck}), then the checks of {@link
   * #inspect(Connection, OutboxTables, boolean)} for tables that exist: a table not created yet
   * (the relay started before {@code migrate}) is left to activation, which says so and retries; so
   * is a database that cannot be reached.
   *
   * @param open opens a new session in autocommit mode (the source's dedicated sessions)
   * @param timeout how long a statement may take
   * @param database the pipeline's settings: whether retention deletes dead letters (see {@link
   *     DeadLetterTableCheck}), the layout it expects ({@link #checkLayout})
   * @return the problems found, or none
   */
  public static List<String> startUpProblems(
      ConnectionOpener open,
      Duration timeout,
      OutboxTables tables,
      DatabaseSettings database,
      String pipeline) {
    boolean deletesDeadLetters = !database.retention().deadLetters().isZero();
    List<String> pooled = SessionPoolingCheck.startUpProblems(open, timeout, pipeline);
    if (!pooled.isEmpty()) {
      return pooled;
    }
    try (Connection c = open.open()) {
      c.setNetworkTimeout(Runnable::run, (int) timeout.toMillis());
      if (!tablesExist(c, tables)) {
        return List.of();
      }
      inspect(c, tables, deletesDeadLetters);
      checkLayout(c, tables, database.partitions(), pipeline);
      return List.of();
    } catch (SourceException e) {
      return List.of(e.getMessage());
    } catch (SQLException e) {
      log.debug(
          "pipeline {}: cannot check the tables at start-up, activation will: {}",
          pipeline,
          e.getMessage());
      return List.of();
    }
  }

  /**
   * {@link #inspect(Connection, OutboxTables, boolean)} on a connection of {@code pool}, rolled
   * back after.
   *
   * @param where the database, for the message
   * @throws SourceException naming the table, the column and what is wrong, or that the columns
   *     cannot be read
   */
  public static PayloadFormat inspect(
      DataSource pool,
      OutboxTables tables,
      DatabaseSettings database,
      String pipeline,
      String where) {
    try (Connection c = pool.getConnection()) {
      PayloadFormat format = inspect(c, tables, !database.retention().deadLetters().isZero());
      checkLayout(c, tables, database.partitions(), pipeline);
      c.rollback();
      return format;
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": cannot read the columns of "
              + tables.displayTable()
              + " on "
              + where
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * @param deletesDeadLetters whether retention deletes dead letters (see {@link
   *     DeadLetterTableCheck})
   * @return the payload column's format
   * @throws SourceException naming the table, the column and what is wrong
   */
  public static PayloadFormat inspect(
      Connection connection, OutboxTables tables, boolean deletesDeadLetters) throws SQLException {
    Map<String, String> outbox = columns(connection, tables.qualifiedTable());
    requireColumns(tables.displayTable(), outbox, tables.columns());
    Optional<String> deadLetterProblem =
        DeadLetterTableCheck.problem(connection, tables, deletesDeadLetters);
    if (deadLetterProblem.isPresent()) {
      throw new SourceException(deadLetterProblem.get());
    }
    Map<String, String> dead = columns(connection, tables.qualifiedDeadLetterTable());
    String payload = tables.columns().payload();
    String type = outbox.get(payload);
    PayloadFormat format = formatOf(type);
    String deadType = dead.get("payload");
    if (!deadType.equals(type)) {
      throw new SourceException(
          "column "
              + tables.displayDeadLetterTable()
              + ".payload has type "
              + deadType
              + " but "
              + tables.displayTable()
              + "."
              + payload
              + " has type "
              + type
              + "; dead letters are moved as they are, so both must have the same type");
    }
    return format;
  }

  /**
   * Warns when the table's layout is not the one the settings ask for: the relay reads either, so
   * this never stops it, but {@code migrate} has not been run since {@code layout} changed.
   */
  static void checkLayout(
      Connection c, OutboxTables tables, DatabaseSettings.Partitions layout, String pipeline)
      throws SQLException {
    boolean partitioned = OutboxLayout.partitioned(c, tables);
    if (layout.partitioned() && !partitioned) {
      log.warn(
          "pipeline {}: layout = partitioned, but {} is one plain table: run `outbox-relay migrate`"
              + " to partition it; until then retention deletes published rows one by one",
          pipeline,
          tables.displayTable());
    } else if (!layout.partitioned() && partitioned) {
      log.warn(
          "pipeline {}: {} is partitioned, but layout = plain: retention empties its partitions"
              + " all the same, but claims are planned as for one table, which can read a whole"
              + " partition each; set layout = partitioned to say so (migrate does not turn it"
              + " back)",
          pipeline,
          tables.displayTable());
    }
  }

  /** Whether both the outbox and the dead-letter table exist (are visible to the user). */
  static boolean tablesExist(Connection connection, OutboxTables tables) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT to_regclass(?) IS NOT NULL AND to_regclass(?) IS NOT NULL")) {
      ps.setString(1, tables.qualifiedTable());
      ps.setString(2, tables.qualifiedDeadLetterTable());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  /**
   * The format of a payload column of {@code type}; {@code null} for a type the relay cannot read.
   */
  public static PayloadFormat formatOf(String type) {
    return switch (type) {
      case "jsonb", "json" -> PayloadFormat.JSON;
      case "text" -> PayloadFormat.TEXT;
      case "bytea" -> PayloadFormat.BINARY;
      default -> null;
    };
  }

  private static Map<String, String> columns(Connection connection, String qualified)
      throws SQLException {
    Map<String, String> columns = new HashMap<>();
    try (PreparedStatement ps = connection.prepareStatement(COLUMNS)) {
      ps.setString(1, qualified);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          columns.put(rs.getString(1), rs.getString(2));
        }
      }
    }
    return columns;
  }

  /**
   * Refuses a table that lacks a column the source uses, or has one whose type the claim cannot
   * read row by row (it would fail every claim of a lane): one line per mismatch, naming the {@code
   * columns.*} key of a mapped column.
   */
  private static void requireColumns(
      String table, Map<String, String> found, OutboxColumns mapping) {
    if (found.isEmpty()) {
      throw new SourceException(
          "table " + table + " does not exist (or is not visible to the user); run `migrate`");
    }
    Map<String, String> mapped = mapping.byRelayColumn();
    List<String> problems = new ArrayList<>();
    for (String relayColumn : OUTBOX_COLUMNS) {
      String column = mapped.getOrDefault(relayColumn, relayColumn);
      // Where to fix it: the key of a mapped column; a missing column of the relay's, migrate.
      String key =
          mapped.containsKey(relayColumn) ? " (columns." + relayColumn.replace('_', '-') + ")" : "";
      String missingHint = key.isEmpty() ? " (a column of the relay's: run `migrate`)" : key;
      String typeHint = mapping.isDefault() ? "" : key;
      String type = found.get(column);
      List<String> accepted =
          relayColumn.equals("payload") ? PAYLOAD_TYPES : ACCEPTED_TYPES.get(relayColumn);
      if (type == null) {
        problems.add("table " + table + " lacks the column " + column + missingHint);
      } else if (!accepted.contains(type.replaceFirst("\\(.*\\)$", ""))) { // varchar(64)
        problems.add(
            "column "
                + table
                + "."
                + column
                + typeHint
                + " has type "
                + type
                + "; the relay reads "
                + String.join(", ", accepted));
      }
    }
    if (!problems.isEmpty()) {
      throw new SourceException(String.join("\n", problems));
    }
  }
}
