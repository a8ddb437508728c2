package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Settlement.DeadLetterReason;
import io.outbox.relay.spi.SourceException;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The payload column may be jsonb (the default), json, text or bytea. */
class PayloadColumnIT {

  private PollingFixture fx;

  @BeforeEach
  void setUp() throws Exception {
    fx = PollingFixture.create("payload");
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  @Test
  void byteaPayloadsAreReadByteForByteAndDeadLetteredAsTheyAre() throws Exception {
    retype("bytea");
    byte[] bytes = {0, 1, 2, (byte) 0xff, (byte) 0xfe, 10};
    try (PreparedStatement ps =
        fx.sql()
            .prepareStatement(
                "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)"
                    + " VALUES ('order', '1', 'Created', ?)")) {
      ps.setBytes(1, bytes);
      ps.executeUpdate();
    }
    PollingSource source = fx.activeSource(1, OnPublish.MARK);

    Claim claim = source.claim(0, 10, Duration.ZERO);

    OutboxEvent event = claim.events().get(0);
    assertThat(event.payloadFormat()).isEqualTo(PayloadFormat.BINARY);
    assertThat(event.payload()).containsExactly(bytes);
    claim.settle(List.of(new Settlement.DeadLetter(event, DeadLetterReason.PERMANENT, 0, "x")));
    assertThat((byte[]) fx.value("SELECT payload FROM outbox_dead_letter")).containsExactly(bytes);
  }

  @Test
  void textPayloadsAreReadAsUtf8() throws Exception {
    retype("text");
    fx.execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)"
            + " VALUES ('order', '1', 'Created', 'héllo ✓')");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);

    Claim claim = source.claim(0, 10, Duration.ZERO);

    assertThat(claim.events().get(0).payloadFormat()).isEqualTo(PayloadFormat.TEXT);
    assertThat(claim.events().get(0).payload())
        .containsExactly("héllo ✓".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    claim.release();
  }

  @Test
  void anUnsupportedPayloadTypeIsRefusedNamingTheColumnAndType() throws Exception {
    retype("xml");
    PollingSource source = fx.source(1);

    assertThatThrownBy(source::activate)
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("public.outbox.payload")
        .hasMessageContaining("xml");
  }

  @Test
  void aMissingTableIsReportedByName() throws Exception {
    fx.execute("DROP TABLE outbox_dead_letter");
    PollingSource source = fx.source(1);

    assertThatThrownBy(source::activate)
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("public.outbox_dead_letter does not exist");
  }

  private void retype(String type) throws Exception {
    String using =
        switch (type) {
          case "bytea" -> "convert_to(payload::text, 'UTF8')";
          case "xml" -> "xmlelement(name p, payload::text)";
          default -> "payload::text";
        };
    for (String table : List.of("outbox", "outbox_dead_letter")) {
      fx.execute("ALTER TABLE " + table + " ALTER COLUMN payload TYPE " + type + " USING " + using);
    }
  }
}
