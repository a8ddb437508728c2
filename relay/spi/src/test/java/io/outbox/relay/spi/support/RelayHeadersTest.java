package io.outbox.relay.spi.support;

import static io.outbox.relay.spi.PayloadFormat.JSON;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class RelayHeadersTest {

  private static final byte[] BODY = "{}".getBytes(StandardCharsets.UTF_8);

  @Test
  void relayHeadersFirstThenExtraThenTheRowsEachSortedTheFirstOfANameWins() {
    UUID id = UUID.randomUUID();
    Map<String, String> row = Map.of("z-row", "r", "tenant", "row", "event-id", "x", "b-row", "r");
    Map<String, String> extra = Map.of("tenant", "extra", "a-extra", "x", "event-type", "no");
    Instant at = Instant.parse("2024-05-01T10:15:30Z");
    OutboxEvent event =
        new OutboxEvent(1, id, "order", "o-1", "OrderCreated", null, BODY, JSON, row, at, 0);
    RoutedEvent routed = new RoutedEvent(event, "orders", extra);

    Map<String, String> headers = RelayHeaders.of(routed);

    assertThat(String.join(",", headers.keySet()))
        .isEqualTo(
            "event-id,event-type,aggregate-type,aggregate-id,created-at,content-type,"
                + "a-extra,tenant,b-row,z-row");
    assertThat(String.join(",", headers.values()))
        .isEqualTo(
            id + ",OrderCreated,order,o-1,2024-05-01T10:15:30Z,application/json,x,extra,r,r");
  }
}
