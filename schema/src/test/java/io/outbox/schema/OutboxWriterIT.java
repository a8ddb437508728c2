package io.outbox.schema;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.client.OutboxMessage;
import io.outbox.client.OutboxWriter;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class OutboxWriterIT {

  private TestDatabase db;
  private final OutboxWriter writer = OutboxWriter.forTable("billing.outbox");

  @BeforeEach
  void migrate() throws SQLException {
    db = TestDatabase.create("schema_writer");
    new Migrator(writer.tables()).migrate(db.url(), db.user(), db.password());
  }

  @AfterEach
  void dropDatabase() {
    db.close();
  }

  private long rows() throws SQLException {
    try (Connection c = db.connect()) {
      return Catalog.count(c, "SELECT count(*) FROM billing.outbox");
    }
  }

  @Test
  void committedWriteStoresEveryField() throws SQLException {
    UUID id = UUID.randomUUID();
    Instant later = Instant.parse("2031-02-03T04:05:06.123456Z");
    OutboxMessage message =
        OutboxMessage.builder()
            .eventId(id)
            .aggregate("order", "42")
            .eventType("OrderCreated")
            .destination("orders.special")
            .payload("{\"total\": 10.5, \"items\": [1, 2]}")
            .header("trace-id", "abc")
            .header("quote", "say \"hi\"\n")
            .availableAt(later)
            .build();

    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      assertThat(writer.write(c, message)).isEqualTo(id);
      c.commit();
    }

    try (Connection c = db.connect();
        PreparedStatement select =
            c.prepareStatement(
                "SELECT event_id, aggregate_type, aggregate_id, event_type, destination,"
                    + " payload = ?::jsonb, headers = ?::jsonb, available_at, attempts,"
                    + " published_at, next_attempt_at, last_error, created_at"
                    + " FROM billing.outbox")) {
      select.setString(1, "{\"items\": [1, 2], \"total\": 10.5}");
      select.setString(2, "{\"trace-id\": \"abc\", \"quote\": \"say \\\"hi\\\"\\n\"}");
      try (ResultSet row = select.executeQuery()) {
        assertThat(row.next()).isTrue();
        assertThat(row.getObject(1)).isEqualTo(id);
        assertThat(row.getString(2)).isEqualTo("order");
        assertThat(row.getString(3)).isEqualTo("42");
        assertThat(row.getString(4)).isEqualTo("OrderCreated");
        assertThat(row.getString(5)).isEqualTo("orders.special");
        assertThat(row.getBoolean(6)).as("payload").isTrue();
        assertThat(row.getBoolean(7)).as("headers").isTrue();
        assertThat(row.getTimestamp(8).toInstant()).isEqualTo(later);
        assertThat(row.getInt(9)).isZero();
        assertThat(row.getObject(10)).isNull();
        assertThat(row.getObject(11)).isNull();
        assertThat(row.getObject(12)).isNull();
        assertThat(row.getObject(13)).isNotNull();
        assertThat(row.next()).isFalse();
      }
    }
  }

  @Test
  void availableAtDefaultsToTheTransactionsNow() throws SQLException {
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      writer.write(c, OutboxMessage.of("order", "1", "OrderCreated", "{}"));
      writer.writeAll(c, List.of(OutboxMessage.of("order", "2", "OrderCreated", "{}")));
      c.commit();
      assertThat(
              Catalog.strings(
                  c,
                  "SELECT (available_at = created_at AND headers = '{}'::jsonb"
                      + " AND destination IS NULL)::text FROM billing.outbox"))
          .containsExactly("true", "true");
    }
  }

  @Test
  void rolledBackTransactionLeavesNoRow() throws SQLException {
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      writer.write(c, OutboxMessage.of("order", "1", "OrderCreated", "{}"));
      writer.writeAll(
          c,
          List.of(
              OutboxMessage.of("order", "2", "OrderCreated", "{}"),
              OutboxMessage.of("order", "3", "OrderCreated", "{}")));

      assertThat(c.getAutoCommit()).as("auto-commit untouched").isFalse();
      assertThat(rows()).as("invisible to others before commit").isZero();
      c.rollback();
    }
    assertThat(rows()).isZero();
  }

  @Test
  void writeAllStoresEventsInListOrderAndReturnsTheirIds() throws SQLException {
    List<OutboxMessage> messages = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      messages.add(
          OutboxMessage.builder()
              .aggregate("order", Integer.toString(i % 10))
              .eventType("OrderChanged")
              .payload("{\"n\": " + i + "}")
              .header("n", Integer.toString(i))
              .destination(i % 2 == 0 ? null : "odd")
              .build());
    }

    List<UUID> ids;
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      ids = writer.writeAll(c, messages);
      c.commit();
    }

    assertThat(ids)
        .containsExactlyElementsOf(messages.stream().map(OutboxMessage::eventId).toList());
    try (Connection c = db.connect()) {
      assertThat(Catalog.strings(c, "SELECT event_id::text FROM billing.outbox ORDER BY id"))
          .containsExactlyElementsOf(ids.stream().map(UUID::toString).toList());
      assertThat(
              Catalog.count(
                  c,
                  "SELECT count(*) FROM billing.outbox"
                      + " WHERE (payload->>'n') = (headers->>'n')"
                      + " AND aggregate_id = ((payload->>'n')::int % 10)::text"
                      + " AND destination IS NOT DISTINCT FROM"
                      + " CASE WHEN (payload->>'n')::int % 2 = 1 THEN 'odd' END"))
          .isEqualTo(1_000);
    }
  }

  @Test
  void writeAllOfNothingDoesNothing() throws SQLException {
    try (Connection c = db.connect()) {
      assertThat(writer.writeAll(c, List.of())).isEmpty();
    }
    assertThat(rows()).isZero();
  }

  @Test
  void writeAllRejectsRepeatedEventIdsBeforeTouchingTheDatabase() throws SQLException {
    UUID id = UUID.randomUUID();
    OutboxMessage first =
        new OutboxMessage(id, "order", "1", "OrderCreated", null, "{}", Map.of(), null);
    OutboxMessage second =
        new OutboxMessage(id, "order", "2", "OrderCreated", null, "{}", Map.of(), null);

    try (Connection c = db.connect()) {
      assertThatThrownBy(() -> writer.writeAll(c, List.of(first, second)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("messages[1] repeats the eventId " + id + " of messages[0]");
    }
    assertThat(rows()).isZero();
  }

  @Test
  void invalidJsonFailsTheStatementAndLeavesTheTransactionToTheCaller() throws SQLException {
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      writer.write(c, OutboxMessage.of("order", "1", "OrderCreated", "{}"));

      assertThatThrownBy(
              () -> writer.write(c, OutboxMessage.of("order", "2", "OrderCreated", "not json")))
          .isInstanceOf(SQLException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("22P02");
      assertThat(c.getAutoCommit()).isFalse();
      c.rollback();
    }
    assertThat(rows()).isZero();
  }

  @Test
  void writesToMixedCaseTables() throws SQLException {
    OutboxWriter mixed = OutboxWriter.forTable("Billing.OrderEvents");
    new Migrator(mixed.tables()).migrate(db.url(), db.user(), db.password());

    try (Connection c = db.connect()) {
      UUID id = mixed.write(c, OutboxMessage.of("order", "1", "OrderCreated", "{}"));
      assertThat(Catalog.strings(c, "SELECT event_id::text FROM \"Billing\".\"OrderEvents\""))
          .containsExactly(id.toString());
    }
  }

  /**
   * A copy of {@code billing.outbox} named {@code billing.outbox_<type>} whose payload column has
   * {@code payloadType} and headers column {@code headersType}.
   */
  private OutboxWriter writerForTypes(String payloadType, String headersType) throws SQLException {
    String table = "billing.outbox_" + payloadType;
    try (Connection c = db.connect();
        java.sql.Statement statement = c.createStatement()) {
      statement.execute("CREATE TABLE " + table + " (LIKE billing.outbox INCLUDING ALL)");
      statement.execute(
          "ALTER TABLE "
              + table
              + " ALTER COLUMN payload TYPE "
              + payloadType
              + " USING payload::text::"
              + payloadType
              + ", ALTER COLUMN headers DROP DEFAULT, ALTER COLUMN headers TYPE "
              + headersType
              + " USING headers::text::"
              + headersType);
    }
    return OutboxWriter.forTable(table);
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource({
    "jsonb, jsonb, '{\"a\": 1}'",
    "json, json, '{\"a\" :1}'",
    "text, text, 'not json: é'",
    "bytea, character varying, '{\"a\":1} é'"
  })
  void writesThePayloadIntoEachColumnTypeTheRelayReads(
      String payloadType, String headersType, String payload) throws SQLException {
    OutboxWriter typed = writerForTypes(payloadType, headersType);
    String table = typed.tables().qualifiedTable();
    OutboxMessage one =
        OutboxMessage.builder()
            .aggregate("order", "1")
            .eventType("OrderCreated")
            .payload(payload)
            .header("h", "v")
            .build();
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      typed.write(c, one);
      typed.writeAll(c, List.of(OutboxMessage.of("order", "2", "OrderCreated", payload)));
      c.commit();
      // json and text keep the text as written, jsonb normalizes it; bytea holds its UTF-8 bytes.
      String expected =
          payloadType.equals("jsonb")
              ? Catalog.strings(c, "SELECT ?::jsonb::text", payload).get(0)
              : payloadType.equals("bytea")
                  ? "\\x" + java.util.HexFormat.of().formatHex(payload.getBytes(UTF_8))
                  : payload;
      assertThat(Catalog.strings(c, "SELECT payload::text FROM " + table + " ORDER BY id"))
          .containsExactly(expected, expected);
      assertThat(
              Catalog.strings(
                  c, "SELECT headers::text::jsonb::text FROM " + table + " ORDER BY id"))
          .containsExactly("{\"h\": \"v\"}", "{}");
    }
  }

  @Test
  void aPayloadTypeTheRelayCannotReadFailsTheWriteNamingTheColumn() throws SQLException {
    OutboxWriter typed = writerForTypes("xml", "jsonb");
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      assertThatThrownBy(
              () -> typed.write(c, OutboxMessage.of("order", "1", "OrderCreated", "<a/>")))
          .isInstanceOf(SQLException.class)
          .hasMessage(
              "column billing.outbox_xml.payload has type xml; the relay reads jsonb, json, text"
                  + " or bytea");
      c.rollback();
    }
  }

  @Test
  void aMissingTableFailsTheWriteNamingIt() throws SQLException {
    OutboxWriter missing = OutboxWriter.forTable("billing.nowhere");
    try (Connection c = db.connect()) {
      assertThatThrownBy(
              () -> missing.write(c, OutboxMessage.of("order", "1", "OrderCreated", "{}")))
          .isInstanceOf(SQLException.class)
          .hasMessageStartingWith("the outbox table billing.nowhere does not exist");
    }
  }

  @Test
  void aBinaryPayloadGoesIntoByteaByteForByte() throws SQLException {
    OutboxWriter typed = writerForTypes("bytea", "jsonb");
    byte[] bytes = {0, (byte) 0xff, (byte) 0xc3, 10, 92, 39};
    OutboxMessage binary = binary("1", bytes);
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      typed.write(c, binary);
      typed.writeAll(c, List.of(binary("2", bytes)));
      c.commit();
      assertThat(Catalog.strings(c, "SELECT encode(payload, 'hex') FROM billing.outbox_bytea"))
          .containsExactly("00ffc30a5c27", "00ffc30a5c27");
    }
  }

  @Test
  void aBinaryPayloadForAJsonbColumnFailsNamingIt() throws SQLException {
    OutboxMessage binary = binary("1", new byte[] {1});
    try (Connection c = db.connect()) {
      assertThatThrownBy(() -> writer.write(c, binary))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining(
              "has a binary payload, but column billing.outbox.payload has type jsonb");
    }
  }

  private static OutboxMessage binary(String aggregateId, byte[] payload) {
    return OutboxMessage.builder()
        .aggregate("order", aggregateId)
        .eventType("OrderCreated")
        .payload(payload)
        .build();
  }
}
