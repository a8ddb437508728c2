package io.outbox.schema;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** Catalog queries the integration tests compare. */
final class Catalog {

  /** Columns, constraints, indexes, triggers and functions of every user schema, sorted. */
  private static final String SNAPSHOT =
      """
      SELECT 'column ' || table_schema || '.' || table_name || '.' || column_name || ' '
             || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
        FROM information_schema.columns
       WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
      UNION ALL
      SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' '
             || pg_get_constraintdef(oid)
        FROM pg_constraint
       WHERE connamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
      UNION ALL
      SELECT 'index ' || indexdef FROM pg_indexes
       WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
      UNION ALL
      SELECT 'trigger ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
      UNION ALL
      SELECT 'function ' || p.oid::regprocedure || ' ' || md5(p.prosrc)
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
      ORDER BY 1
      """;

  private Catalog() {}

  static List<String> snapshot(Connection connection) throws SQLException {
    return strings(connection, SNAPSHOT);
  }

  static List<String> strings(Connection connection, String sql, Object... parameters)
      throws SQLException {
    try (PreparedStatement statement = connection.prepareStatement(sql)) {
      for (int i = 0; i < parameters.length; i++) {
        statement.setObject(i + 1, parameters[i]);
      }
      List<String> rows = new ArrayList<>();
      try (ResultSet result = statement.executeQuery()) {
        while (result.next()) {
          rows.add(result.getString(1));
        }
      }
      return rows;
    }
  }

  static long count(Connection connection, String sql, Object... parameters) throws SQLException {
    return Long.parseLong(strings(connection, sql, parameters).get(0));
  }

  /** {@code schema.table} of every base table in the user schemas. */
  static List<String> tables(Connection connection) throws SQLException {
    return strings(
        connection,
        "SELECT schemaname || '.' || tablename FROM pg_tables"
            + " WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1");
  }

  /** {@code indexname: indexdef} of one schema. */
  static List<String> indexes(Connection connection, String schema) throws SQLException {
    return strings(
        connection,
        "SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = ? ORDER BY 1",
        schema);
  }
}
