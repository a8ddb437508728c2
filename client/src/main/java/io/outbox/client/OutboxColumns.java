package io.outbox.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The outbox table's own names for the relay's event columns ({@code columns.*} of a pipeline), so
 * that a table in another layout (Debezium's outbox router: {@code id}, {@code aggregatetype},
 * {@code aggregateid}, {@code type}) is read without renaming it. The one place that decides which
 * column holds what: every SQL builder of the sources takes its names from here, quoted.
 *
 * <p>The relay's bookkeeping columns ({@code destination}, {@code headers}, {@code created_at},
 * {@code available_at}, {@code published_at}, {@code attempts}, {@code next_attempt_at}, {@code
 * last_error}) keep their names and live beside the mapped ones. The dead-letter table always has
 * the relay's own layout: a dead letter is copied into it column by column.
 *
 * @param id {@code columns.id}: the row's insertion order, {@code bigint} (the relay's {@code id})
 * @param eventId {@code columns.event-id}: the event id, {@code uuid}
 * @param aggregateType {@code columns.aggregate-type}
 * @param aggregateId {@code columns.aggregate-id}: the ordering and partition key
 * @param eventType {@code columns.event-type}
 * @param payload {@code columns.payload}
 */
public record OutboxColumns(
    String id,
    String eventId,
    String aggregateType,
    String aggregateId,
    String eventType,
    String payload) {

  /** The settings keys under {@code columns}, in the order of the components. */
  public static final List<String> KEYS =
      List.of("id", "event-id", "aggregate-type", "aggregate-id", "event-type", "payload");

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  /** The relay's own layout, as {@code migrate} creates it. */
  public static final OutboxColumns DEFAULT =
      new OutboxColumns(
          "id", "event_id", "aggregate_type", "aggregate_id", "event_type", "payload");

  /**
   * The layout of Debezium's outbox event router ({@code id} the event id, {@code aggregatetype},
   * {@code aggregateid}, {@code type}, {@code payload}) with the relay's row order in {@code
   * relay_id}, as docs/coming-from-debezium.md configures it.
   */
  public static final OutboxColumns DEBEZIUM =
      new OutboxColumns("relay_id", "id", "aggregatetype", "aggregateid", "type", "payload");

  /** Validates every name: see {@link #problems(Map)}. */
  public OutboxColumns {
    List<String> problems =
        problems(byKey(id, eventId, aggregateType, aggregateId, eventType, payload));
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
  }

  /**
   * The mapping of the settings, by key (see {@link #KEYS}); an empty map is the relay's own
   * layout.
   *
   * @throws IllegalArgumentException naming every bad key and value
   */
  public static OutboxColumns of(Map<String, String> byKey) {
    if (byKey.isEmpty()) {
      return DEFAULT;
    }
    return new OutboxColumns(
        byKey.get("id"),
        byKey.get("event-id"),
        byKey.get("aggregate-type"),
        byKey.get("aggregate-id"),
        byKey.get("event-type"),
        byKey.get("payload"));
  }

  /**
   * What is wrong with a mapping, one line per key: a missing or malformed name (ASCII letters,
   * digits and {@code _}, at most 63 bytes; case is kept, as for table names), or a column mapped
   * twice.
   */
  public static List<String> problems(Map<String, String> byKey) {
    List<String> problems = new ArrayList<>();
    Map<String, String> keyOfColumn = new LinkedHashMap<>();
    for (String key : KEYS) {
      String column = byKey.get(key);
      if (column == null || !IDENTIFIER.matcher(column).matches()) {
        problems.add(
            "columns."
                + key
                + ": must be a column name (letters, digits and '_', not starting with a digit),"
                + " not "
                + (column == null ? "null" : "\"" + column + "\""));
      } else if (column.length() > OutboxTables.MAX_IDENTIFIER_BYTES) {
        problems.add("columns." + key + ": longer than 63 bytes: \"" + column + "\"");
      } else {
        String other = keyOfColumn.putIfAbsent(column, key);
        if (other != null) {
          problems.add(
              "columns." + key + ": \"" + column + "\" is already the column of columns." + other);
        }
      }
    }
    return problems;
  }

  /** The settings key to the table's column name, in the order of {@link #KEYS}. */
  public Map<String, String> byKey() {
    return byKey(id, eventId, aggregateType, aggregateId, eventType, payload);
  }

  /** The relay's own column name (as in the dead-letter table) to the table's, in key order. */
  public Map<String, String> byRelayColumn() {
    Map<String, String> map = new LinkedHashMap<>();
    byKey().forEach((key, column) -> map.put(key.replace('-', '_'), column));
    return map;
  }

  /** Whether this is the relay's own layout. */
  public boolean isDefault() {
    return equals(DEFAULT);
  }

  /** {@code alias."column"} of the row id, for SQL. */
  public String id(String alias) {
    return alias + "." + OutboxTables.quote(id);
  }

  /** {@code alias."column"} of the event id, for SQL. */
  public String eventId(String alias) {
    return alias + "." + OutboxTables.quote(eventId);
  }

  /** {@code alias."column"} of the aggregate type, for SQL. */
  public String aggregateType(String alias) {
    return alias + "." + OutboxTables.quote(aggregateType);
  }

  /** {@code alias."column"} of the aggregate id, for SQL. */
  public String aggregateId(String alias) {
    return alias + "." + OutboxTables.quote(aggregateId);
  }

  /** {@code alias."column"} of the event type, for SQL. */
  public String eventType(String alias) {
    return alias + "." + OutboxTables.quote(eventType);
  }

  /** {@code alias."column"} of the payload, for SQL. */
  public String payload(String alias) {
    return alias + "." + OutboxTables.quote(payload);
  }

  private static Map<String, String> byKey(String... columns) {
    Map<String, String> map = new LinkedHashMap<>();
    for (int i = 0; i < KEYS.size(); i++) {
      map.put(KEYS.get(i), columns[i]);
    }
    return map;
  }
}
