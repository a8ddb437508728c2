package io.outbox.client;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * The writer's two INSERT statements for one outbox table, made for the types its {@code payload}
 * and {@code headers} columns have: the relay reads a payload of {@code jsonb}, {@code json},
 * {@code text} or {@code bytea}, and headers of {@code jsonb}, {@code json}, {@code text} or {@code
 * character varying}. Parameters are always text; each is converted to its column's type.
 */
record WriterSql(String insertOne, String insertMany, OutboxTables tables, String payloadType) {

  private static final String COLUMNS =
      " (event_id, aggregate_type, aggregate_id, event_type, destination, payload, headers,"
          + " available_at)";

  /** The types of the columns, without their length, read once from the catalog. */
  private static final String COLUMN_TYPES =
      "SELECT a.attname, format_type(a.atttypid, NULL) FROM pg_attribute a"
          + " WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped"
          + " AND a.attname IN ('payload', 'headers')";

  /** PostgreSQL's SQLSTATE for an undefined table. */
  static final String UNDEFINED_TABLE = "42P01";

  /** PostgreSQL's SQLSTATE for an undefined column. */
  static final String UNDEFINED_COLUMN = "42703";

  /** PostgreSQL's SQLSTATE for a datatype mismatch. */
  static final String DATATYPE_MISMATCH = "42804";

  /**
   * Reads the column types of the outbox table on {@code connection} (in its transaction).
   *
   * @throws SQLException naming the table when it is missing, or the column and its type when the
   *     relay cannot read that type
   */
  static WriterSql read(Connection connection, OutboxTables tables) throws SQLException {
    Map<String, String> types = new HashMap<>();
    try (PreparedStatement select = connection.prepareStatement(COLUMN_TYPES)) {
      select.setString(1, tables.qualifiedTable());
      try (ResultSet rows = select.executeQuery()) {
        while (rows.next()) {
          types.put(rows.getString(1), rows.getString(2));
        }
      }
    }
    if (types.isEmpty()) {
      throw new SQLException(
          "the outbox table "
              + tables.displayTable()
              + " does not exist (or is not visible to this user); create it with `outbox-relay"
              + " migrate` or the script of `outbox-relay migrate --print-sql`",
          UNDEFINED_TABLE);
    }
    return of(tables, types.get("payload"), types.get("headers"));
  }

  /**
   * The statements for these column types ({@code null}: the column is missing).
   *
   * @throws SQLException naming the column and its type when the relay cannot read that type
   */
  static WriterSql of(OutboxTables tables, String payloadType, String headersType)
      throws SQLException {
    String payload =
        switch (String.valueOf(payloadType)) {
          case "jsonb" -> "%s::jsonb";
          case "json" -> "%s::json";
          case "text" -> "%s::text";
          // Hex of the bytes (see payload); the relay sends a bytea payload byte for byte.
          case "bytea" -> "decode(%s::text, 'hex')";
          default -> throw mismatch(tables, "payload", payloadType, "jsonb, json, text or bytea");
        };
    String headers =
        switch (String.valueOf(headersType)) {
          case "jsonb" -> "%s::jsonb";
          case "json" -> "%s::json";
          // Assigned to a character varying(n) column, which checks the length.
          case "text", "character varying" -> "%s::text";
          default ->
              throw mismatch(
                  tables, "headers", headersType, "jsonb, json, text or character varying");
        };
    String table = tables.qualifiedTable();
    String insertOne =
        "INSERT INTO "
            + table
            + COLUMNS
            + " VALUES (?::uuid, ?, ?, ?, ?, "
            + payload.formatted("?")
            + ", "
            + headers.formatted("?")
            + ", COALESCE(?::timestamptz, now()))";
    // One statement for any number of events; ORDER BY keeps the list order in the ids.
    String insertMany =
        "INSERT INTO "
            + table
            + COLUMNS
            + " SELECT m.event_id::uuid, m.aggregate_type, m.aggregate_id, m.event_type,"
            + " m.destination, "
            + payload.formatted("m.payload")
            + ", "
            + headers.formatted("m.headers")
            + ", COALESCE(m.available_at::timestamptz, now())"
            + " FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],"
            + " ?::text[], ?::text[]) WITH ORDINALITY"
            + " AS m(event_id, aggregate_type, aggregate_id, event_type, destination, payload,"
            + " headers, available_at, n) ORDER BY m.n";
    return new WriterSql(insertOne, insertMany, tables, payloadType);
  }

  /**
   * The payload parameter of {@code message}: its text for a {@code jsonb}, {@code json} or {@code
   * text} column; for {@code bytea}, the hex of its bytes (or of its text's UTF-8 bytes).
   *
   * @throws SQLException when binary payload meets a column that is not {@code bytea}
   */
  String payload(OutboxMessage message) throws SQLException {
    if (payloadType.equals("bytea")) {
      byte[] bytes =
          message.binary()
              ? message.payloadBytes()
              : message.payload().getBytes(StandardCharsets.UTF_8);
      return HexFormat.of().formatHex(bytes);
    }
    if (message.binary()) {
      throw new SQLException(
          "OutboxMessage "
              + message.eventId()
              + " has a binary payload, but column "
              + tables.displayTable()
              + ".payload has type "
              + payloadType
              + "; bytes go into a bytea column only (give this column text)",
          DATATYPE_MISMATCH);
    }
    return message.payload();
  }

  private static SQLException mismatch(
      OutboxTables tables, String column, String type, String accepted) {
    String where = "column " + tables.displayTable() + "." + column;
    return type == null
        ? new SQLException(where + " does not exist", UNDEFINED_COLUMN)
        : new SQLException(
            where + " has type " + type + "; the relay reads " + accepted, DATATYPE_MISMATCH);
  }
}
