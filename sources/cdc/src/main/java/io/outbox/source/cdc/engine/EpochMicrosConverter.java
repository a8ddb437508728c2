package io.outbox.source.cdc.engine;

import io.debezium.spi.converter.CustomConverter;
import io.debezium.spi.converter.RelationalColumn;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAccessor;
import java.util.Properties;
import org.apache.kafka.connect.data.SchemaBuilder;

/**
 * The outbox's {@code timestamptz} columns as microseconds since the epoch (a Connect {@code
 * int64}) instead of Debezium's ISO-8601 text: Debezium already holds each value as an {@link
 * OffsetDateTime}, and rendering it as text (a formatter built per value) for {@link ChangeEvents}
 * to parse back cost 6-9 % of the stream's CPU per event (2026-12-02, in docs/performance.md's
 * history). PostgreSQL's {@code infinity} and {@code -infinity} become {@link Long#MAX_VALUE} and
 * {@link Long#MIN_VALUE}. Debezium instantiates it by name ({@code converters}), hence public.
 */
public final class EpochMicrosConverter
    implements CustomConverter<SchemaBuilder, RelationalColumn> {

  /** The name under {@code converters} in the engine's properties. */
  static final String NAME = "outboxrelaytime";

  /** Read back by {@link ChangeEvents#instant}. */
  static final long POSITIVE_INFINITY = Long.MAX_VALUE;

  static final long NEGATIVE_INFINITY = Long.MIN_VALUE;

  private static final Instant MICROS_MAX =
      Instant.EPOCH.plus(Long.MAX_VALUE - 1, ChronoUnit.MICROS);
  private static final Instant MICROS_MIN =
      Instant.EPOCH.plus(Long.MIN_VALUE + 1, ChronoUnit.MICROS);

  /** For Debezium, which instantiates converters by class. */
  public EpochMicrosConverter() {}

  @Override
  public void configure(Properties props) {}

  @Override
  public void converterFor(
      RelationalColumn column, ConverterRegistration<SchemaBuilder> registration) {
    if (!"timestamptz".equalsIgnoreCase(column.typeName())) {
      return;
    }
    SchemaBuilder schema = SchemaBuilder.int64();
    if (column.isOptional()) {
      schema.optional();
    }
    registration.register(schema, EpochMicrosConverter::micros);
  }

  /**
   * {@code value} in microseconds since the epoch: what Debezium decoded from the stream (an {@link
   * OffsetDateTime}), or a column default it rendered already (ISO-8601 text, or {@code infinity} /
   * {@code -infinity}); {@code null} stays {@code null}.
   *
   * @throws IllegalArgumentException for a value of any other class, naming the class only
   * @throws java.time.format.DateTimeParseException for text that is not an ISO-8601 timestamp
   */
  static Long micros(Object value) {
    Instant instant;
    if (value == null) {
      return null;
    } else if (value instanceof TemporalAccessor t) {
      instant = Instant.from(t);
    } else if (value instanceof java.util.Date t) {
      instant = t.toInstant();
    } else if (value instanceof String text) {
      if ("infinity".equals(text)) {
        return POSITIVE_INFINITY;
      }
      if ("-infinity".equals(text)) {
        return NEGATIVE_INFINITY;
      }
      instant = OffsetDateTime.parse(text).toInstant();
    } else {
      throw new IllegalArgumentException(
          "not a timestamp with time zone: a " + value.getClass().getName());
    }
    if (instant.isAfter(MICROS_MAX)) {
      return POSITIVE_INFINITY;
    }
    if (instant.isBefore(MICROS_MIN)) {
      return NEGATIVE_INFINITY;
    }
    return ChronoUnit.MICROS.between(Instant.EPOCH, instant);
  }
}
