package io.outbox.relay.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox.relay.spi.LedgerEntry;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.LedgerWatermark;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue #30 point 4: past the last settled ledger record, a partition may hold only aborted
 * transactions (records and markers). The watermark moves past them once the read found every
 * transaction there decided, so that retention deleting them is not taken for lost unsettled
 * records; on the code before it stayed behind them, and a lane of a former configuration, which
 * never settles again, made every later activation refuse the ledger once they were deleted.
 */
class LedgerRecoveryTest {

  private final ScriptedTransactionalSink sink = new ScriptedTransactionalSink(b -> null);
  private final Map<Integer, Long> watermark = new HashMap<>();
  private final List<LedgerPosition> settledAt = new ArrayList<>();

  private final LedgerRecovery recovery =
      new LedgerRecovery(
          "p",
          sink,
          new LedgerWatermark() {
            @Override
            public Map<Integer, Long> settled() {
              return Map.copyOf(watermark);
            }

            @Override
            public int settleFromLedger(LedgerPosition position, List<LedgerRecord.Event> events) {
              settledAt.add(position);
              watermark.merge(position.partition(), position.offset(), Math::max);
              return events.size();
            }
          },
          new PipelineStats("p", new SimpleMeterRegistry()),
          Duration.ofSeconds(1));

  @Test
  void theWatermarkMovesPastAnAbortedTail() {
    watermark.put(0, 5L); // record 5 settled, its commit marker at 6
    watermark.put(1, 5L);
    watermark.put(2, 5L);
    // 0: an aborted transaction at 7-8; 1: nothing after the marker; 2: a committed record at 9
    // after an aborted one, then another aborted one up to 13.
    sink.committed.add(
        new LedgerEntry(new LedgerPosition(2, 9), new LedgerRecord(2, "c", List.of())));
    sink.decidedTo = Map.of(0, 9L, 1, 7L, 2, 14L);

    assertThat(recovery.recover(Set.of(0, 1, 2), true)).isEqualTo(1);

    assertThat(watermark).containsEntry(0, 8L).containsEntry(1, 5L).containsEntry(2, 13L);
    assertThat(settledAt.get(0)).as("the record first").isEqualTo(new LedgerPosition(2, 9));
    assertThat(settledAt)
        .containsExactlyInAnyOrder(
            new LedgerPosition(2, 9), new LedgerPosition(0, 8), new LedgerPosition(2, 13));
  }

  @Test
  void anotherLanesPartitionAndANeverSettledOneAreLeftAlone() {
    watermark.put(0, 5L);
    watermark.put(1, 5L);
    sink.decidedTo = Map.of(0, 9L, 1, 9L, 3, 4L);

    recovery.recover(Set.of(0), false);

    assertThat(watermark).containsEntry(0, 8L).containsEntry(1, 5L).doesNotContainKey(3);
  }
}
