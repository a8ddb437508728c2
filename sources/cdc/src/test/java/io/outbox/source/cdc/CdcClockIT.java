package io.outbox.source.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.testkit.Teardown;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Due times of the CDC source follow the database's clock, not the relay host's. */
class CdcClockIT {

  @RegisterExtension final Teardown teardown = new Teardown();
  private CdcFixture fx;

  @Test
  void relayClockAheadDoesNotPublishDelayedEventsOrRetriesEarly(TestInfo info) throws Exception {
    fx = teardown.add(new CdcFixture("cdc_" + info.getTestMethod().orElseThrow().getName()));
    Clock ahead = Clock.offset(Clock.systemUTC(), Duration.ofHours(1));
    CdcSource source = fx.source(Map.of(), ahead);
    source.activate();
    fx.execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, available_at)"
            + " VALUES ('order', 'd', 'Delayed', '{}', now() + interval '4 seconds')");
    await().atMost(Duration.ofSeconds(30)).until(() -> source.inMemory() == 1);

    // An hour ahead, the relay's own clock would publish it at once.
    Claim early = source.claim(0, 10, Duration.ofSeconds(1));
    assertThat(early.events()).as("claimed before available_at on the database clock").isEmpty();
    early.release();

    Claim due = claimWhenDue(source);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE available_at <= clock_timestamp()"))
        .as("claimed only once due on the database clock")
        .isEqualTo(1);

    // A retry of 3 s is not due an hour early either.
    OutboxEvent event = due.events().get(0);
    due.settle(List.of(new Settlement.Retry(event, 1, Duration.ofSeconds(3), "broker said no")));
    long retriedAt = System.nanoTime();
    Claim retry = claimWhenDue(source);
    assertThat(Duration.ofNanos(System.nanoTime() - retriedAt))
        .as("retried after its delay")
        .isGreaterThanOrEqualTo(Duration.ofMillis(2_500));
    CdcFixture.publishAll(retry);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isZero();
  }

  private static Claim claimWhenDue(CdcSource source) {
    AtomicReference<Claim> claimed = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              Claim c = source.claim(0, 10, Duration.ofMillis(200));
              if (c.events().isEmpty()) {
                c.release();
                return false;
              }
              claimed.set(c);
              return true;
            });
    return claimed.get();
  }
}
