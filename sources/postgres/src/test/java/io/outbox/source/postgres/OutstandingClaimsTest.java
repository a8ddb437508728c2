package io.outbox.source.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.Ticker;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The pause of claim transactions that lets retention empty a partition. */
class OutstandingClaimsTest {

  private final OutstandingClaims claims = new OutstandingClaims(2, "orders");

  @Test
  void aPauseWaitsForTheOpenTransactionsAndOpensNoNewOneUntilResumed() throws Exception {
    AtomicInteger woken = new AtomicInteger();
    claims.onResume(woken::incrementAndGet);
    assertThat(claims.openTransaction()).isTrue();

    CompletableFuture<Boolean> paused =
        CompletableFuture.supplyAsync(
            () -> claims.pauseTransactions(Ticker.SYSTEM.deadline(Duration.ofSeconds(10))));
    while (claims.openTransaction()) { // the pause is not in place yet
      claims.closeTransaction();
      Thread.onSpinWait();
    }
    assertThat(paused).isNotDone(); // one transaction is still open
    claims.closeTransaction();

    assertThat(paused.get(10, TimeUnit.SECONDS)).isTrue();
    assertThat(claims.openTransaction()).isFalse();
    assertThat(woken).hasValue(0);
    claims.resumeTransactions();
    assertThat(woken).hasValue(1);
    assertThat(claims.openTransaction()).isTrue();
  }

  @Test
  void aPauseGivesUpAtItsDeadlineAndResumingReopens() {
    assertThat(claims.openTransaction()).isTrue();

    assertThat(claims.pauseTransactions(Ticker.SYSTEM.deadline(Duration.ZERO))).isFalse();
    assertThat(claims.openTransaction()).isFalse();
    claims.resumeTransactions();
    assertThat(claims.openTransaction()).isTrue();
  }
}
