package io.outbox.sink.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.testkit.SinkContexts;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class StreamEntriesTest {

  private static final UUID ID = UUID.fromString("5f0c6a9e-8a7b-4f57-9d0e-3c1f2b4a6d8e");

  @Test
  void xaddCarriesTheFieldsInOrderTheRelaysWinAndThePayloadComesLast() {
    StreamEntries entries = entries("max-len = 50, dedup-window = 0s");
    assertThat(entries.deduplicates()).isFalse();
    assertThat(text(entries.xadd(routed())))
        .containsExactly(
            "outbox.order",
            "MAXLEN",
            "~",
            "50",
            "*",
            "event-id",
            ID.toString(),
            "event-type",
            "OrderCreated",
            "aggregate-type",
            "order",
            "aggregate-id",
            "o-ü",
            "created-at",
            "2024-05-01T10:15:30Z",
            "content-type",
            "application/json",
            "x-extra",
            "e",
            "tenant",
            "acmé",
            "payload",
            "{}");
  }

  @Test
  void evalshaNamesTheStreamAndTheMarkerOfItsEvent() {
    StreamEntries entries = entries("dedup-window = 90s");
    assertThat(entries.deduplicates()).isTrue();
    List<String> args = text(entries.evalsha(routed()));
    assertThat(args.subList(0, 6))
        .containsExactly(
            StreamEntries.SCRIPT_SHA,
            "2",
            "outbox.order",
            "outbox-relay:added:outbox.order:" + ID,
            "90000",
            "0");
    assertThat(args.subList(6, args.size()))
        .startsWith("event-id", ID.toString())
        .endsWith("payload", "{}");
    assertThat(StreamEntries.SCRIPT_SHA).hasSize(40);
  }

  private static StreamEntries entries(String hocon) {
    return new StreamEntries(
        SettingsReader.settings(
            SinkContexts.context("redis", hocon), RedisSinkSettings::read, "redis sink"));
  }

  private static RoutedEvent routed() {
    return new RoutedEvent(
        new OutboxEvent(
            1,
            ID,
            "order",
            "o-ü",
            "OrderCreated",
            null,
            "{}".getBytes(StandardCharsets.UTF_8),
            PayloadFormat.JSON,
            Map.of("tenant", "acmé", "payload", "forged", "event-id", "forged"),
            Instant.parse("2024-05-01T10:15:30Z"),
            0),
        "outbox.order",
        Map.of("x-extra", "e"));
  }

  private static List<String> text(List<byte[]> args) {
    return args.stream().map(b -> new String(b, StandardCharsets.UTF_8)).toList();
  }
}
