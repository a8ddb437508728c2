package io.outbox.source.postgres;

import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Checks at start-up that a pipeline's dead-letter table will take the dead-letter move ({@link
 * OutboxVerdicts}), so that a table made by hand or a missing grant stops the start with one line
 * instead of failing every settlement that holds a dead letter. Shared by every source.
 *
 * <p>It checks, in this order: the table exists; it has every column the move writes; every other
 * column that is {@code NOT NULL} has a default; no column the move copies is {@code NOT NULL} here
 * but nullable in the outbox (a row with a NULL there, which the pipeline dead-letters, could never
 * be moved); the session's role may {@code INSERT} (and, when retention deletes dead letters,
 * {@code SELECT} and {@code DELETE}); and PostgreSQL accepts the move statement itself ({@code
 * EXPLAIN}: types, casts, the privileges on the outbox it deletes from). A {@code CHECK} constraint
 * or a trigger cannot be judged without rows: a move they refuse at run time keeps its events in
 * the outbox as retries ({@link OutboxVerdicts}).
 */
public final class DeadLetterTableCheck {

  /** The columns the move writes. */
  static final List<String> WRITTEN =
      Stream.concat(
              OutboxTables.OUTBOX_COLUMNS.stream(),
              Stream.of("dead_lettered_at", "reason", "pipeline"))
          .toList();

  /**
   * The columns the move copies from the outbox row: all but published_at, attempts, last_error.
   */
  static final List<String> COPIED =
      OutboxTables.OUTBOX_COLUMNS.stream()
          .filter(c -> !List.of("published_at", "attempts", "last_error").contains(c))
          .toList();

  private static final String COLUMNS =
      "SELECT a.attname, a.attnotnull,"
          + " a.attnotnull AND NOT a.atthasdef AND a.attidentity = '' AND a.attgenerated = ''"
          + " FROM pg_attribute a"
          + " WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped"
          + " ORDER BY a.attnum";

  private static final String PRIVILEGE =
      "SELECT has_table_privilege(to_regclass(?), ?), current_user::text";

  private DeadLetterTableCheck() {}

  /**
   * What is wrong with the dead-letter table of {@code tables}, as one line naming the table, the
   * column and the fault; empty when the move can run.
   *
   * @param connection a session of the role the relay runs as; left in an open transaction the
   *     caller rolls back or ends
   * @param deletesDeadLetters whether retention deletes dead letters ({@code SELECT} and {@code
   *     DELETE} are then needed too)
   * @throws SQLException when the database cannot be read (not when the table is wrong)
   */
  public static Optional<String> problem(
      Connection connection, OutboxTables tables, boolean deletesDeadLetters) throws SQLException {
    String table = tables.displayDeadLetterTable();
    Map<String, Nullity> columns = columns(connection, tables.qualifiedDeadLetterTable());
    if (columns.isEmpty()) {
      return Optional.of(
          "dead-letter table "
              + table
              + " does not exist (or the relay's role cannot see it); run `migrate`");
    }
    List<String> missing = new ArrayList<>();
    for (String c : WRITTEN) {
      if (!columns.containsKey(c)) {
        missing.add(c);
      }
    }
    if (!missing.isEmpty()) {
      return Optional.of(
          "dead-letter table "
              + table
              + " lacks the column(s) "
              + missing
              + " the dead-letter move writes; run `migrate`");
    }
    for (Map.Entry<String, Nullity> c : columns.entrySet()) {
      if (c.getValue().needsValue() && !WRITTEN.contains(c.getKey())) {
        return Optional.of(
            "column "
                + table
                + "."
                + c.getKey()
                + " is NOT NULL without a default, and the dead-letter move does not write it;"
                + " give it a default or drop NOT NULL");
      }
    }
    Map<String, Nullity> outbox = columns(connection, tables.qualifiedTable());
    Map<String, String> mapped = tables.columns().byRelayColumn();
    for (String c : COPIED) {
      String source = mapped.getOrDefault(c, c); // the outbox's own name (columns.*)
      Nullity from = outbox.get(source);
      if (from != null && !from.notNull() && columns.get(c).notNull()) {
        return Optional.of(
            "column "
                + tables.displayTable()
                + "."
                + source
                + " allows NULL but "
                + table
                + "."
                + c
                + " is NOT NULL: a row with a NULL "
                + source
                + " could never be dead-lettered; make "
                + tables.displayTable()
                + "."
                + source
                + " NOT NULL or drop NOT NULL from "
                + table
                + "."
                + c);
      }
    }
    List<String> needed = new ArrayList<>(List.of("INSERT"));
    if (deletesDeadLetters) {
      needed.addAll(List.of("SELECT", "DELETE"));
    }
    for (String privilege : needed) {
      Optional<String> lacking = lacking(connection, tables, privilege);
      if (lacking.isPresent()) {
        return lacking;
      }
    }
    return explain(connection, tables);
  }

  /**
   * @param notNull the column is {@code NOT NULL}
   * @param needsValue {@code NOT NULL} without a default (nor identity, nor generated)
   */
  private record Nullity(boolean notNull, boolean needsValue) {}

  private static Map<String, Nullity> columns(Connection connection, String qualified)
      throws SQLException {
    Map<String, Nullity> columns = new LinkedHashMap<>();
    try (PreparedStatement ps = connection.prepareStatement(COLUMNS)) {
      ps.setString(1, qualified);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          columns.put(rs.getString(1), new Nullity(rs.getBoolean(2), rs.getBoolean(3)));
        }
      }
    }
    return columns;
  }

  private static Optional<String> lacking(
      Connection connection, OutboxTables tables, String privilege) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(PRIVILEGE)) {
      ps.setString(1, tables.qualifiedDeadLetterTable());
      ps.setString(2, privilege);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (rs.getBoolean(1)) {
          return Optional.empty();
        }
        String why =
            privilege.equals("INSERT")
                ? "the dead-letter move inserts into it"
                : "retention deletes dead letters (or set retention.dead-letters = off)";
        return Optional.of(
            "role "
                + rs.getString(2)
                + " lacks "
                + privilege
                + " on dead-letter table "
                + tables.displayDeadLetterTable()
                + ": "
                + why
                + "; GRANT SELECT, INSERT, DELETE ON "
                + tables.qualifiedDeadLetterTable()
                + " (docs/security.md)");
      }
    }
  }

  /** Lets PostgreSQL analyse the move statement: types, casts and privileges, without rows. */
  private static Optional<String> explain(Connection connection, OutboxTables tables)
      throws SQLException {
    boolean autoCommit = connection.getAutoCommit();
    try (PreparedStatement ps =
        connection.prepareStatement(
            "EXPLAIN " + new OutboxVerdicts(tables).deadLetterStatement())) {
      for (int i = 1; i <= 4; i++) {
        ps.setNull(i, Types.ARRAY);
      }
      ps.setNull(5, Types.VARCHAR);
      if (autoCommit) {
        connection.setAutoCommit(false); // a savepoint needs a transaction
      }
      var beforeExplain = connection.setSavepoint();
      try {
        ps.executeQuery().close();
        connection.releaseSavepoint(beforeExplain);
        return Optional.empty();
      } catch (SQLException refused) {
        connection.rollback(beforeExplain);
        if (refused.getSQLState() != null && refused.getSQLState().startsWith("08")) {
          throw refused; // the connection failed, not the table
        }
        return Optional.of(
            "dead-letter table "
                + tables.displayDeadLetterTable()
                + " does not accept the dead-letter move from "
                + tables.displayTable()
                + ": "
                + OutboxVerdicts.firstLine(refused.getMessage()));
      }
    } finally {
      if (autoCommit) {
        connection.rollback();
        connection.setAutoCommit(true);
      }
    }
  }
}
