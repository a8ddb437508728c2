package io.outbox.source.polling;

import static io.outbox.source.polling.OutboxSql.AGGREGATE_ID;
import static io.outbox.source.polling.OutboxSql.AGGREGATE_TYPE;
import static io.outbox.source.polling.OutboxSql.ATTEMPTS;
import static io.outbox.source.polling.OutboxSql.CREATED_AT;
import static io.outbox.source.polling.OutboxSql.DESTINATION;
import static io.outbox.source.polling.OutboxSql.EVENT_ID;
import static io.outbox.source.polling.OutboxSql.EVENT_TYPE;
import static io.outbox.source.polling.OutboxSql.HEADER_KEYS;
import static io.outbox.source.polling.OutboxSql.HEADER_VALUES;
import static io.outbox.source.polling.OutboxSql.ID;
import static io.outbox.source.polling.OutboxSql.PAYLOAD;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Turns the rows of a claim ({@link OutboxSql#claim}) into events. */
final class EventRows {

  private static final byte[] NO_BYTES = new byte[0];

  private EventRows() {}

  static List<OutboxEvent> read(ResultSet rs, PayloadFormat format) throws SQLException {
    List<OutboxEvent> events = new ArrayList<>();
    while (rs.next()) {
      events.add(
          new OutboxEvent(
              rs.getLong(ID),
              rs.getObject(EVENT_ID, UUID.class),
              rs.getString(AGGREGATE_TYPE),
              rs.getString(AGGREGATE_ID),
              rs.getString(EVENT_TYPE),
              rs.getString(DESTINATION),
              payload(rs),
              format,
              headers(rs.getArray(HEADER_KEYS), rs.getArray(HEADER_VALUES)),
              rs.getObject(CREATED_AT, OffsetDateTime.class).toInstant(),
              rs.getInt(ATTEMPTS)));
    }
    return events;
  }

  /**
   * The column's bytes as received: bytea decoded, text (json and jsonb are read as text) in the
   * connection's encoding, which the driver fixes to UTF-8. No decoding to a String and back.
   */
  private static byte[] payload(ResultSet rs) throws SQLException {
    byte[] bytes = rs.getBytes(PAYLOAD);
    return bytes == null ? NO_BYTES : bytes;
  }

  private static Map<String, String> headers(Array keys, Array values) throws SQLException {
    if (keys == null || values == null) {
      return Map.of();
    }
    String[] k = (String[]) keys.getArray();
    String[] v = (String[]) values.getArray();
    Map<String, String> headers = new HashMap<>(k.length * 2);
    for (int i = 0; i < k.length && i < v.length; i++) {
      headers.put(k[i], v[i]);
    }
    return headers;
  }
}
