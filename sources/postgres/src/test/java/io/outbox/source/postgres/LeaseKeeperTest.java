package io.outbox.source.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.client.OutboxTables;
import io.outbox.testkit.FakeTime;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The lease's timing rules on a driven clock (no database, no sleeps): the keeper renews one {@code
 * leadership-check-interval} after the last renewal, well before the lease runs out, and a holder
 * that has not renewed counts its lease lost at 80 % of {@code lease-timeout}, before the database
 * lets a standby take over.
 */
class LeaseKeeperTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  // The longest interval the settings allow: a third of the lease (Timing.checkRenewal).
  private static final Duration RENEW_EVERY = Duration.ofSeconds(10);

  private final FakeTime time = new FakeTime();
  private final AgreeableSession database = new AgreeableSession();
  private final LeaseKeeper keeper =
      new LeaseKeeper(
          OutboxTables.of("outbox"),
          "orders",
          "test",
          new LeaseKeeper.Timing() {
            @Override
            public Duration standbyCheckInterval() {
              return Duration.ofSeconds(1);
            }

            @Override
            public Duration leadershipCheckInterval() {
              return RENEW_EVERY;
            }

            @Override
            public Duration leaseTimeout() {
              return LEASE;
            }
          },
          "the test database",
          database::open,
          IllegalStateException::new,
          new LeaseKeeper.Hooks() {},
          time);

  @BeforeEach
  void take() throws InterruptedException {
    assertThat(keeper.acquire(() -> {}, () -> false)).isTrue();
  }

  @AfterEach
  void close() {
    keeper.close();
  }

  @Test
  void renewsEveryCheckIntervalWhileTheLeaseHasTimeLeft() {
    for (int i = 1; i <= 5; i++) {
      assertThat(keeper.nextRenewal().left()).isEqualTo(RENEW_EVERY);
      time.advance(RENEW_EVERY);
      assertThat(keeper.nextRenewal().passed()).isTrue();
      assertThat(keeper.held()).as("renewal %d is due with the lease still held", i).isTrue();
      keeper.renew(); // what the watchdog runs when it is due
    }
    assertThat(database.updates).hasValue(5);
    assertThat(keeper.held()).isTrue();
  }

  @Test
  void aRenewalLateByAWholeIntervalIsStillInTime() {
    time.advance(RENEW_EVERY);
    keeper.renew();
    time.advance(RENEW_EVERY.multipliedBy(2)); // the next renewal missed its turn
    assertThat(keeper.held()).isTrue();
    keeper.renew();
    assertThat(keeper.held()).isTrue();
  }

  @Test
  void aHolderThatHasNotRenewedCountsItsLeaseLostBeforeTheDatabaseDoes() {
    time.advance(RENEW_EVERY);
    keeper.renew(); // the last renewal: good for 24 s locally, 30 s in the database

    time.advance(Duration.ofMillis(23_999));
    assertThat(keeper.held()).isTrue();
    time.advance(Duration.ofMillis(1)); // frozen past 80 % of the lease
    assertThat(keeper.held()).isFalse();
  }
}
