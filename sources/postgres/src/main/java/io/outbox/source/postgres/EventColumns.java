package io.outbox.source.postgres;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * Makes an outbox row's columns, as a source read them, into an {@link OutboxEvent}. A row that
 * cannot be published as it is (a NULL in a column a table made by hand left nullable, headers that
 * are not JSON) becomes an event with a {@link OutboxEvent#defect() defect} and placeholders, which
 * the pipeline dead-letters: one bad row never fails the claim of its lane.
 */
public final class EventColumns {

  private static final UUID NIL = new UUID(0, 0);
  private static final byte[] NO_BYTES = new byte[0];

  private EventColumns() {}

  /**
   * The event of the current row of a result whose first ten columns are, in this order, {@code id,
   * event_id, aggregate_type, aggregate_id, event_type, destination, payload, headers, created_at,
   * attempts} (the payload and the headers may be cast to {@code text}).
   *
   * @param format how the payload column is typed
   * @param headers the headers column's text as a map; throws {@link IllegalArgumentException}
   *     naming no value when the text is not JSON
   */
  public static OutboxEvent read(
      ResultSet rs, PayloadFormat format, Function<String, Map<String, String>> headers)
      throws SQLException {
    OffsetDateTime createdAt = rs.getObject(9, OffsetDateTime.class);
    return event(
        rs.getLong(1),
        rs.getObject(2, UUID.class),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        rs.getString(6),
        rs.getBytes(7),
        format,
        rs.getString(8),
        headers,
        createdAt == null ? null : createdAt.toInstant(),
        rs.getInt(10));
  }

  /**
   * The event of a row's column values, each {@code null} where the column is NULL.
   *
   * @param headers the headers column's text as a map; throws {@link IllegalArgumentException}
   *     naming no value when the text is not JSON
   */
  public static OutboxEvent event(
      long id,
      UUID eventId,
      String aggregateType,
      String aggregateId,
      String eventType,
      String destination,
      byte[] payload,
      PayloadFormat format,
      String headersText,
      Function<String, Map<String, String>> headers,
      Instant createdAt,
      int attempts) {
    List<String> defects = new ArrayList<>(1);
    if (eventId == null) {
      defects.add("event_id is NULL");
    }
    String type = notNull(aggregateType, "aggregate_type", defects);
    String key = notNull(aggregateId, "aggregate_id", defects);
    String eventTypeOrEmpty = notNull(eventType, "event_type", defects);
    if (payload == null) {
      defects.add("payload is NULL");
    }
    Map<String, String> headerMap;
    try {
      headerMap = headers.apply(headersText);
    } catch (IllegalArgumentException e) {
      defects.add(e.getMessage());
      headerMap = Map.of();
    }
    if (createdAt == null) {
      defects.add("created_at is NULL");
    }
    return new OutboxEvent(
        id,
        eventId == null ? NIL : eventId,
        type,
        key,
        eventTypeOrEmpty,
        destination,
        payload == null ? NO_BYTES : payload,
        format,
        headerMap,
        createdAt == null ? Instant.EPOCH : createdAt,
        attempts,
        defects.isEmpty() ? null : String.join("; ", defects));
  }

  private static String notNull(String value, String column, List<String> defects) {
    if (value == null) {
      defects.add(column + " is NULL");
      return "";
    }
    return value;
  }
}
