package io.outbox.schema;

import static io.outbox.client.OutboxTables.quote;

import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.callback.BaseCallback;
import org.flywaydb.core.api.callback.Context;
import org.flywaydb.core.api.callback.Event;

/**
 * Lets migration V1 create the outbox's indexes on a table whose event columns have names of its
 * own ({@code columns.*}, e.g. Debezium's outbox layout). V1 names the relay's columns, and an
 * applied migration is never edited; so, inside V1's own transaction (Flyway runs these callbacks
 * in it), the table's mapped columns take the relay's names before V1 and their own names again
 * after it, and the relay's columns the table lacks are added first. A failure rolls back all of it
 * with V1. A table V1 creates (none existed) ends up with the mapped names.
 */
final class MappedLayout extends BaseCallback {

  /**
   * The relay's columns {@code migrate} adds to an existing table, as V1 defines them (nothing
   * rewrites the table but the identity column's numbering of the existing rows).
   */
  private static final Map<String, String> RELAY_COLUMNS = relayColumns();

  private final OutboxTables tables;
  private final Map<String, String> renamed; // relay name -> the table's, where they differ

  MappedLayout(OutboxTables tables) {
    this.tables = tables;
    this.renamed = new LinkedHashMap<>();
    tables
        .columns()
        .byRelayColumn()
        .forEach(
            (relay, own) -> {
              if (!relay.equals(own)) {
                renamed.put(relay, own);
              }
            });
  }

  /** Whether {@code tables} need this callback. */
  static boolean needed(OutboxTables tables) {
    return !tables.columns().isDefault();
  }

  @Override
  public boolean supports(Event event, Context context) {
    return (event == Event.BEFORE_EACH_MIGRATE || event == Event.AFTER_EACH_MIGRATE)
        && context.getMigrationInfo() != null
        && context.getMigrationInfo().getVersion() != null
        && context.getMigrationInfo().getVersion().getVersion().equals("1");
  }

  @Override
  public boolean canHandleInTransaction(Event event, Context context) {
    return true;
  }

  @Override
  public void handle(Event event, Context context) {
    try {
      Connection c = context.getConnection();
      if (event == Event.BEFORE_EACH_MIGRATE) {
        Set<String> existing = columns(c);
        if (!existing.isEmpty()) {
          toRelayNames(c, existing);
        }
      } else {
        rename(c, renamed);
      }
    } catch (SQLException e) {
      throw new FlywayException(
          "cannot present " + tables.displayTable() + " under the relay's column names: " + e, e);
    }
  }

  private void toRelayNames(Connection c, Set<String> existing) throws SQLException {
    for (Map.Entry<String, String> e : renamed.entrySet()) {
      String key = "columns." + e.getKey().replace('_', '-');
      if (!existing.contains(e.getValue()) && !e.getKey().equals("id")) {
        throw new FlywayException(
            key
                + " = "
                + e.getValue()
                + ": table "
                + tables.displayTable()
                + " has no such column");
      }
      if (existing.contains(e.getKey()) && !renamed.containsValue(e.getKey())) {
        throw new FlywayException(
            key
                + " = "
                + e.getValue()
                + ": table "
                + tables.displayTable()
                + " also has a column "
                + e.getKey()
                + ", the relay's name for it; rename or map that one");
      }
    }
    Map<String, String> present = new LinkedHashMap<>();
    renamed.forEach(
        (relay, own) -> {
          if (existing.contains(own)) {
            present.put(own, relay);
          }
        });
    rename(c, present);
    try (Statement s = c.createStatement()) {
      for (Map.Entry<String, String> column : RELAY_COLUMNS.entrySet()) {
        s.execute(
            "ALTER TABLE "
                + tables.qualifiedTable()
                + " ADD COLUMN IF NOT EXISTS "
                + quote(column.getKey())
                + " "
                + column.getValue());
      }
    }
  }

  /** Renames {@code from -> to} through temporary names, so that names may be swapped. */
  private void rename(Connection c, Map<String, String> fromTo) throws SQLException {
    try (Statement s = c.createStatement()) {
      int i = 0;
      for (String from : fromTo.keySet()) {
        s.execute(renameSql(from, "outbox_relay_renaming_" + i++));
      }
      i = 0;
      for (String to : fromTo.values()) {
        s.execute(renameSql("outbox_relay_renaming_" + i++, to));
      }
    }
  }

  private String renameSql(String from, String to) {
    return "ALTER TABLE "
        + tables.qualifiedTable()
        + " RENAME COLUMN "
        + quote(from)
        + " TO "
        + quote(to);
  }

  private Set<String> columns(Connection c) throws SQLException {
    Set<String> names = new HashSet<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(?)"
                + " AND attnum > 0 AND NOT attisdropped")) {
      ps.setString(1, tables.qualifiedTable());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          names.add(rs.getString(1));
        }
      }
    }
    return names;
  }

  private static Map<String, String> relayColumns() {
    Map<String, String> columns = new LinkedHashMap<>();
    columns.put("id", "bigint GENERATED ALWAYS AS IDENTITY");
    columns.put("destination", "text NULL");
    columns.put("headers", "jsonb NOT NULL DEFAULT '{}'::jsonb");
    columns.put("created_at", "timestamptz NOT NULL DEFAULT now()");
    columns.put("available_at", "timestamptz NOT NULL DEFAULT now()");
    columns.put("published_at", "timestamptz NULL");
    columns.put("attempts", "integer NOT NULL DEFAULT 0");
    columns.put("next_attempt_at", "timestamptz NULL");
    columns.put("last_error", "text NULL");
    return columns;
  }

  @Override
  public String getCallbackName() {
    return "outbox-relay mapped layout";
  }
}
