package io.outbox.relay.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class BacklogMonitorTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final Clock clock = Clock.fixed(Instant.ofEpochSecond(1_000), ZoneOffset.UTC);
  private Supplier<Optional<Backlog>> answer = Optional::empty;
  private boolean stopping;

  private final Source source =
      new Source() {
        @Override
        public void activate() {
          throw new UnsupportedOperationException();
        }

        @Override
        public Claim claim(int lane, int maxEvents, Duration maxWait) {
          throw new UnsupportedOperationException();
        }

        @Override
        public Optional<Backlog> backlog() {
          return answer.get();
        }

        @Override
        public void close(Duration timeout) {}
      };

  private final BacklogMonitor monitor =
      new BacklogMonitor("orders", source, registry, clock, () -> stopping);

  private double gauge(String name) {
    return registry.get(name).tag("pipeline", "orders").gauge().value();
  }

  private static Backlog backlog(long pending) {
    return new Backlog(pending, Duration.ofMillis(2500), 2, 3, "boom", OptionalLong.empty());
  }

  @Test
  void aSourceWithoutBacklogRegistersNoGauges() {
    assertThat(monitor.refresh()).isEmpty();
    assertThat(registry.find("outbox.relay.pending.events").gauge()).isNull();
  }

  @Test
  void gaugesAppearWithTheFirstReadAndKeepTheLastValueWhileReadsFail() {
    answer = () -> Optional.of(backlog(7));
    assertThat(monitor.refresh()).contains(true);
    assertThat(gauge("outbox.relay.pending.events")).isEqualTo(7);
    assertThat(gauge("outbox.relay.oldest.pending.age.seconds")).isEqualTo(2.5);
    assertThat(gauge("outbox.relay.retrying.events")).isEqualTo(2);
    assertThat(gauge("outbox.relay.dead.letters")).isEqualTo(3);
    assertThat(gauge("outbox.relay.backlog.read.timestamp.seconds")).isEqualTo(1_000);
    assertThat(registry.find("outbox.relay.cdc.retained.wal.bytes").gauge()).isNull();

    answer =
        () -> {
          throw new SourceException("database down");
        };
    assertThat(monitor.refresh()).contains(false);
    assertThat(gauge("outbox.relay.pending.events")).isEqualTo(7);
    assertThat(registry.get("outbox.relay.backlog.read.failures").counter().count()).isEqualTo(1);

    answer = () -> Optional.of(backlog(9).withRetainedWalBytes(4096));
    assertThat(monitor.refresh()).contains(true);
    assertThat(gauge("outbox.relay.pending.events")).isEqualTo(9);
    assertThat(gauge("outbox.relay.cdc.retained.wal.bytes")).isEqualTo(4096);
  }

  @Test
  void cdcGaugesHaveConventionalNamesAndTheirOldNamesAsDeprecatedAliases() {
    answer = () -> Optional.of(backlog(1).withWalKeepShare(0.25).withSlotCreationBlocked(2));
    assertThat(monitor.refresh()).contains(true);

    assertThat(gauge("outbox.relay.cdc.wal.keep.ratio")).isEqualTo(0.25);
    assertThat(gauge("outbox.relay.cdc.slot.creation.blocking.transactions")).isEqualTo(2);
    assertThat(gauge("outbox.relay.cdc.wal.keep.share")).isEqualTo(0.25);
    assertThat(gauge("outbox.relay.cdc.slot.creation.blocked")).isEqualTo(2);
    assertThat(registry.get("outbox.relay.cdc.wal.keep.share").gauge().getId().getDescription())
        .startsWith("Deprecated: use outbox_relay_cdc_wal_keep_ratio");
    assertThat(
            registry.get("outbox.relay.cdc.slot.creation.blocked").gauge().getId().getDescription())
        .startsWith("Deprecated: use outbox_relay_cdc_slot_creation_blocking_transactions");
  }

  @Test
  void aPartitionedOutboxReportsTheRowsOfAnEarlierRoundOnceRetentionCountedThem() {
    answer = () -> Optional.of(backlog(1));
    assertThat(monitor.refresh()).contains(true);
    assertThat(registry.find("outbox.relay.partition.earlier.round.rows").gauge()).isNull();

    answer = () -> Optional.of(backlog(1).withEarlierRoundRows(812).withRetainedWalBytes(1));
    assertThat(monitor.refresh()).contains(true);
    assertThat(gauge("outbox.relay.partition.earlier.round.rows")).isEqualTo(812);
  }

  @Test
  void aReadCutShortByTheStopIsNoFailure() {
    stopping = true;
    answer =
        () -> {
          throw new SourceException("interrupted");
        };
    assertThat(monitor.refresh()).isEmpty();
    assertThat(registry.get("outbox.relay.backlog.read.failures").counter().count()).isZero();
  }
}
