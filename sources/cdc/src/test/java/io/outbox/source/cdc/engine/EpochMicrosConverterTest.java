package io.outbox.source.cdc.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.debezium.connector.postgresql.PostgresValueConverter;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Date;
import org.junit.jupiter.api.Test;

class EpochMicrosConverterTest {

  @Test
  void aTimestampBecomesItsMicrosecondsAndReadsBackExactly() {
    OffsetDateTime t = OffsetDateTime.parse("2024-05-01T12:15:30.123456+02:00");
    Long micros = EpochMicrosConverter.micros(t);
    assertThat(micros).isEqualTo(1_714_558_530_123_456L);
    assertThat(ChangeEvents.instant(micros)).isEqualTo(t.toInstant());

    Instant before = Instant.parse("1969-12-31T23:59:59.999999Z");
    assertThat(EpochMicrosConverter.micros(before)).isEqualTo(-1L);
    assertThat(ChangeEvents.instant(-1L)).isEqualTo(before);
    assertThat(EpochMicrosConverter.micros(Date.from(Instant.ofEpochMilli(1_500))))
        .isEqualTo(1_500_000L);
  }

  @Test
  void postgresInfinitiesReadAsTheFurthestInstants() {
    Long plus =
        EpochMicrosConverter.micros(PostgresValueConverter.POSITIVE_INFINITY_OFFSET_DATE_TIME);
    Long minus =
        EpochMicrosConverter.micros(PostgresValueConverter.NEGATIVE_INFINITY_OFFSET_DATE_TIME);
    assertThat(ChangeEvents.instant(plus)).isEqualTo(Instant.MAX);
    assertThat(ChangeEvents.instant(minus)).isEqualTo(Instant.MIN);
    assertThat(EpochMicrosConverter.micros(OffsetDateTime.MAX)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void aDefaultDebeziumRenderedAsTextIsConvertedToo() {
    // Debezium passes a column's default (created_at DEFAULT now(): the epoch) already as text.
    assertThat(EpochMicrosConverter.micros("1970-01-01T00:00:00Z")).isZero();
    assertThat(EpochMicrosConverter.micros("2024-05-01T10:15:30.000001Z"))
        .isEqualTo(1_714_558_530_000_001L);
    assertThat(EpochMicrosConverter.micros("infinity")).isEqualTo(Long.MAX_VALUE);
    assertThat(EpochMicrosConverter.micros("-infinity")).isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void nullStaysNullAndAnythingElseIsNamedByItsClass() {
    assertThat(EpochMicrosConverter.micros(null)).isNull();
    assertThatThrownBy(() -> EpochMicrosConverter.micros(42L))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("not a timestamp with time zone: a java.lang.Long");
  }

  @Test
  void debeziumsTextIsStillReadWhenTheUsersConvertersReplacedTheRelays() {
    assertThat(ChangeEvents.instant("2024-05-01T10:15:30.123456Z"))
        .isEqualTo(
            OffsetDateTime.of(2024, 5, 1, 10, 15, 30, 123_456_000, ZoneOffset.UTC).toInstant());
  }
}
