package io.outbox.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class WriterSqlTest {

  private static final OutboxTables TABLES = OutboxTables.of("billing.outbox");

  @ParameterizedTest
  @CsvSource({
    "jsonb, ?::jsonb, m.payload::jsonb",
    "json, ?::json, m.payload::json",
    "text, ?::text, m.payload::text",
    "bytea, 'decode(?::text, ''hex'')', 'decode(m.payload::text, ''hex'')'"
  })
  void convertsThePayloadToItsColumnsType(String type, String one, String many)
      throws SQLException {
    WriterSql sql = WriterSql.of(TABLES, type, "jsonb");

    assertThat(sql.insertOne()).contains(", " + one + ", ?::jsonb, ");
    assertThat(sql.insertMany()).contains(", " + many + ", m.headers::jsonb, ");
  }

  @ParameterizedTest
  @CsvSource({"jsonb, ?::jsonb", "json, ?::json", "text, ?::text", "character varying, ?::text"})
  void convertsTheHeadersToTheirColumnsType(String type, String one) throws SQLException {
    assertThat(WriterSql.of(TABLES, "jsonb", type).insertOne())
        .contains("?::jsonb, " + one + ", COALESCE(");
  }

  @Test
  void refusesAPayloadTypeTheRelayCannotRead() {
    assertThatThrownBy(() -> WriterSql.of(TABLES, "character varying", "jsonb"))
        .isInstanceOf(SQLException.class)
        .hasMessage(
            "column billing.outbox.payload has type character varying; the relay reads jsonb,"
                + " json, text or bytea")
        .extracting(e -> ((SQLException) e).getSQLState())
        .isEqualTo(WriterSql.DATATYPE_MISMATCH);
  }

  @Test
  void refusesHeadersOfATypeTheRelayCannotRead() {
    assertThatThrownBy(() -> WriterSql.of(TABLES, "jsonb", "hstore"))
        .hasMessage(
            "column billing.outbox.headers has type hstore; the relay reads jsonb, json, text or"
                + " character varying");
  }

  @Test
  void namesAMissingColumn() {
    assertThatThrownBy(() -> WriterSql.of(TABLES, null, "jsonb"))
        .hasMessage("column billing.outbox.payload does not exist")
        .extracting(e -> ((SQLException) e).getSQLState())
        .isEqualTo(WriterSql.UNDEFINED_COLUMN);
  }

  @Test
  void aByteaPayloadTravelsAsHexOfTheBytesOrOfTheTextsUtf8() throws SQLException {
    WriterSql sql = WriterSql.of(TABLES, "bytea", "jsonb");

    assertThat(sql.payload(OutboxMessage.of("order", "1", "OrderCreated", "é"))).isEqualTo("c3a9");
    assertThat(
            sql.payload(
                OutboxMessage.builder()
                    .aggregate("order", "1")
                    .eventType("OrderCreated")
                    .payload(new byte[] {0, (byte) 0xff, 10})
                    .build()))
        .isEqualTo("00ff0a");
  }

  @Test
  void aTextColumnTakesTheTextAsItIs() throws SQLException {
    assertThat(
            WriterSql.of(TABLES, "text", "jsonb")
                .payload(OutboxMessage.of("order", "1", "OrderCreated", "é")))
        .isEqualTo("é");
  }

  @Test
  void refusesABinaryPayloadForAColumnThatIsNotBytea() throws SQLException {
    WriterSql sql = WriterSql.of(TABLES, "jsonb", "jsonb");
    OutboxMessage binary =
        OutboxMessage.builder()
            .aggregate("order", "1")
            .eventType("OrderCreated")
            .payload(new byte[] {1})
            .build();

    assertThatThrownBy(() -> sql.payload(binary))
        .isInstanceOf(SQLException.class)
        .hasMessage(
            "OutboxMessage "
                + binary.eventId()
                + " has a binary payload, but column billing.outbox.payload has type jsonb; bytes"
                + " go into a bytea column only (give this column text)");
  }
}
