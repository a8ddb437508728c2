package io.outbox.client;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Inserts events into an outbox table on the caller's connection, inside the caller's transaction:
 * it never commits, rolls back or changes auto-commit, so the events become visible exactly when
 * the business change does. Thread-safe; keep one per table.
 *
 * <p>The payload goes into the column as its type asks: JSON text into {@code jsonb} or {@code
 * json} (PostgreSQL checks it), the text as it is into {@code text}; into {@code bytea} the
 * message's {@link OutboxMessage#payloadBytes() bytes}, or its text's UTF-8 bytes. The writer reads
 * the types of the {@code payload} and {@code headers} columns once, on its first write; a table or
 * a column type the relay cannot read fails that write with an {@link SQLException} naming the
 * column and its type.
 *
 * <pre>{@code
 * OutboxWriter outbox = OutboxWriter.forTable("billing.outbox");
 * connection.setAutoCommit(false);
 * // ... the business change ...
 * UUID id = outbox.write(connection, OutboxMessage.of("order", "42", "OrderCreated", json));
 * connection.commit();
 * }</pre>
 */
public final class OutboxWriter {

  private final OutboxTables tables;

  /** Made on the first write, from the table's column types; {@code null} until then. */
  private volatile WriterSql statements;

  private OutboxWriter(OutboxTables tables) {
    this.tables = tables;
  }

  /**
   * A writer for the outbox table as written in the configuration ({@code outbox}, {@code
   * billing.outbox}).
   *
   * @throws IllegalArgumentException naming the bad table name
   */
  public static OutboxWriter forTable(String table) {
    return new OutboxWriter(OutboxTables.of(table));
  }

  /** A writer for the outbox table of these tables. */
  public static OutboxWriter forTables(OutboxTables tables) {
    return new OutboxWriter(Objects.requireNonNull(tables, "tables"));
  }

  /** The outbox table written to. */
  public OutboxTables tables() {
    return tables;
  }

  /**
   * Inserts one event.
   *
   * @return the event id, as stored in {@code event_id}
   * @throws SQLException as the driver reports it (e.g. invalid JSON in the payload), or naming a
   *     missing table or a column type the relay cannot read
   */
  public UUID write(Connection connection, OutboxMessage message) throws SQLException {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(message, "message");
    WriterSql statements = statements(connection);
    try (PreparedStatement insert = connection.prepareStatement(statements.insertOne())) {
      insert.setString(1, message.eventId().toString());
      insert.setString(2, message.aggregateType());
      insert.setString(3, message.aggregateId());
      insert.setString(4, message.eventType());
      insert.setString(5, message.destination());
      insert.setString(6, statements.payload(message));
      insert.setString(7, headersJson(message.headers()));
      insert.setString(8, instant(message.availableAt()));
      insert.executeUpdate();
    }
    return message.eventId();
  }

  /**
   * Inserts the events in one statement, in list order (so their {@code id}s follow the list).
   *
   * @return the event ids, in list order
   * @throws IllegalArgumentException if an element is null or two share an event id
   * @throws SQLException as the driver reports it
   */
  public List<UUID> writeAll(Connection connection, List<OutboxMessage> messages)
      throws SQLException {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(messages, "messages");
    int size = messages.size();
    if (size == 0) {
      return List.of();
    }
    String[][] columns = new String[8][size];
    List<UUID> ids = new ArrayList<>(size);
    Map<UUID, Integer> seen = new HashMap<>();
    for (int i = 0; i < size; i++) {
      OutboxMessage message = messages.get(i);
      if (message == null) {
        throw new IllegalArgumentException("messages[" + i + "] is null");
      }
      Integer earlier = seen.putIfAbsent(message.eventId(), i);
      if (earlier != null) {
        throw new IllegalArgumentException(
            "messages["
                + i
                + "] repeats the eventId "
                + message.eventId()
                + " of messages["
                + earlier
                + "]");
      }
      ids.add(message.eventId());
      columns[0][i] = message.eventId().toString();
      columns[1][i] = message.aggregateType();
      columns[2][i] = message.aggregateId();
      columns[3][i] = message.eventType();
      columns[4][i] = message.destination();
      columns[6][i] = headersJson(message.headers());
      columns[7][i] = instant(message.availableAt());
    }
    WriterSql statements = statements(connection); // after the checks that need no database
    for (int i = 0; i < size; i++) {
      columns[5][i] = statements.payload(messages.get(i));
    }
    List<Array> arrays = new ArrayList<>(columns.length);
    try (PreparedStatement insert = connection.prepareStatement(statements.insertMany())) {
      for (int c = 0; c < columns.length; c++) {
        Array array = connection.createArrayOf("text", columns[c]);
        arrays.add(array);
        insert.setArray(c + 1, array);
      }
      insert.executeUpdate();
    } finally {
      for (Array array : arrays) {
        array.free();
      }
    }
    return List.copyOf(ids);
  }

  /**
   * The statements for the table's column types, read on the first write. A race of first writes
   * reads them twice, which is harmless.
   */
  private WriterSql statements(Connection connection) throws SQLException {
    WriterSql known = statements;
    if (known == null) {
      known = WriterSql.read(connection, tables);
      statements = known;
    }
    return known;
  }

  @Override
  public String toString() {
    return "OutboxWriter[" + tables.displayTable() + "]";
  }

  private static String instant(Instant instant) {
    return instant == null ? null : instant.toString();
  }

  /** The headers as a JSON object of strings. */
  static String headersJson(Map<String, String> headers) {
    if (headers.isEmpty()) {
      return "{}";
    }
    StringBuilder json = new StringBuilder(16 * headers.size());
    json.append('{');
    for (Map.Entry<String, String> header : headers.entrySet()) {
      if (json.length() > 1) {
        json.append(',');
      }
      appendString(json, header.getKey());
      json.append(':');
      appendString(json, header.getValue());
    }
    return json.append('}').toString();
  }

  private static void appendString(StringBuilder json, String value) {
    json.append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '"' -> json.append("\\\"");
        case '\\' -> json.append("\\\\");
        case '\n' -> json.append("\\n");
        case '\r' -> json.append("\\r");
        case '\t' -> json.append("\\t");
        case '\b' -> json.append("\\b");
        case '\f' -> json.append("\\f");
        default -> {
          if (c < 0x20) {
            json.append(String.format("\\u%04x", (int) c));
          } else {
            json.append(c);
          }
        }
      }
    }
    json.append('"');
  }
}
