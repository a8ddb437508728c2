package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.LedgerRecord;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class LedgerCodecTest {

  @Test
  void aRecordReadsBackAsWritten() {
    LedgerRecord record =
        new LedgerRecord(
            3,
            "epoch 7\nwith a line break",
            List.of(
                new LedgerRecord.Event(41, UUID.randomUUID()),
                new LedgerRecord.Event(42, UUID.randomUUID())));

    LedgerRecord read = LedgerCodec.decode(LedgerCodec.encode(record));

    assertThat(read.lane()).isEqualTo(3);
    assertThat(read.claim()).isEqualTo("epoch 7 with a line break");
    assertThat(read.events()).isEqualTo(record.events());
  }

  @Test
  void aRecordOfAnotherWriterIsRefused() {
    assertThatThrownBy(() -> LedgerCodec.decode("{\"order\": 1}".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a ledger record");
    assertThatThrownBy(() -> LedgerCodec.decode(null)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aDistrustMarkerIsToldApartFromARecordAndRefusedAsOne() {
    byte[] marker = LedgerCodec.encodeDistrust(2);
    assertThat(new String(marker, StandardCharsets.UTF_8))
        .isEqualTo("outbox-relay-ledger-distrust 1\nlane 2\n");
    assertThat(LedgerCodec.isDistrust(marker)).isTrue();
    assertThat(LedgerCodec.isDistrust(LedgerCodec.encode(new LedgerRecord(2, "c", List.of()))))
        .isFalse();
    assertThat(LedgerCodec.isDistrust(null)).isFalse();
    assertThatThrownBy(() -> LedgerCodec.decode(marker))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
