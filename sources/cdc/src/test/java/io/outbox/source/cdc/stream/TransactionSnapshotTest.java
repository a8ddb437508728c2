package io.outbox.source.cdc.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TransactionSnapshotTest {

  private static final long EPOCH = 1L << 32;

  @Test
  void aRunningTransactionIsInProgressAndAnEndedOneIsNot() {
    TransactionSnapshot s = TransactionSnapshot.parse("750:760:752,755");
    assertThat(s.inProgress(752)).isTrue();
    assertThat(s.inProgress(755)).isTrue();
    assertThat(s.inProgress(751)).as("ended between xmin and xmax").isFalse();
    assertThat(s.inProgress(749)).as("below xmin").isFalse();
    assertThat(s.inProgress(760)).as("at xmax: not ended").isTrue();
    assertThat(s.inProgress(790)).as("above xmax").isTrue();
  }

  @Test
  void anEmptyRunningListMeansOnlyIdsFromXmaxOnAreInProgress() {
    TransactionSnapshot s = TransactionSnapshot.parse("760:760:");
    assertThat(s.inProgress(759)).isFalse();
    assertThat(s.inProgress(760)).isTrue();
  }

  @Test
  void aStreamed32BitIdIsPlacedInTheEpochNearestTheSnapshot() {
    // xmax just past a wraparound of the 32-bit counter: epoch 3, low bits 10.
    long xmax = 3 * EPOCH + 10;
    TransactionSnapshot s = TransactionSnapshot.parse((xmax - 20) + ":" + xmax + ":" + (xmax - 15));
    assertThat(s.full(5)).isEqualTo(3 * EPOCH + 5);
    assertThat(s.full(EPOCH - 5))
        .as("before the wraparound: the epoch before")
        .isEqualTo(3 * EPOCH - 5);
    assertThat(s.full(30)).isEqualTo(3 * EPOCH + 30);
    assertThat(s.inProgress((xmax - 15) & 0xFFFF_FFFFL)).as("running, epoch before").isTrue();
    assertThat(s.inProgress(EPOCH - 12)).as("ended, epoch before").isFalse();
    assertThat(s.inProgress(12)).as("at or above xmax").isTrue();
    assertThat(s.full(3 * EPOCH + 7)).as("a 64-bit id keeps its value").isEqualTo(3 * EPOCH + 7);
  }

  @Test
  void notASnapshotIsRefused() {
    assertThatThrownBy(() -> TransactionSnapshot.parse("750-760"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a pg_snapshot");
  }
}
