package io.outbox.source.cdc;

import static io.outbox.source.cdc.CdcFixture.LEASE;
import static io.outbox.source.cdc.CdcFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.testkit.Activation;
import io.outbox.testkit.Teardown;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What an activation of the CDC source must guarantee after a hand-over (soak findings F1 and F3):
 * the instance that lost the lease stops its engine for good, every thread of it, so that it never
 * takes the slot back; and the new active instance publishes every row pending before its stream,
 * even one its stored position has passed, ahead of the later streamed events of its key.
 */
class CdcActivationIT {

  @RegisterExtension final Teardown teardown = new Teardown();
  private CdcFixture fx;

  @Test
  void anInstanceThatLosesItsLeaseStopsItsEngineForGood() throws Exception {
    fx = teardown.add(new CdcFixture("cdc_engine_gone"));
    CdcSource a = fx.source(1, LEASE, new CopyOnWriteArrayList<>());
    a.activate();
    fx.commit(List.of(event("k", 1)));
    CdcFixture.claimAll(a, 1, 1, Duration.ofSeconds(30)).forEach(CdcFixture::publishAll);
    long streamer = fx.walsender();
    assertThat(streamer).as("A streams the slot").isPositive();
    assertThat(a.engineLeft()).as("A's engine runs").isNotEmpty();

    List<Role> bRoles = new CopyOnWriteArrayList<>();
    CdcSource b = fx.source(1, LEASE, bRoles);
    CompletableFuture<Void> bActive = Activation.inBackground(b);
    await().atMost(Duration.ofSeconds(10)).until(() -> bRoles.contains(Role.STANDBY));

    // A stops renewing, as a frozen process; nothing claims from it any more. B takes over and
    // ends A's replication connection: A's engine, left alone, would restart its connector and
    // retry the slot (Debezium's retriable-error path) for as long as it runs.
    a.stopRenewingLease();
    await().atMost(Duration.ofSeconds(30)).until(bActive::isDone);
    bActive.join();
    await()
        .alias(
            "A's engine is gone (run over, connector task stopped, walsender ended), without a"
                + " claim to notice the lost lease")
        .atMost(Duration.ofSeconds(40))
        .until(() -> a.engineLeft().isEmpty());
    await()
        .alias("B streams the slot")
        .atMost(Duration.ofSeconds(30))
        .until(() -> fx.walsender() > 0 && fx.walsender() != streamer);

    UUID next = fx.commit(List.of(event("k", 2))).get(0);
    List<UUID> published = new CopyOnWriteArrayList<>();
    await()
        .alias("B publishes what is committed now")
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              Claim c = b.claim(0, 100, Duration.ofMillis(200));
              if (c.events().isEmpty()) {
                c.release();
              } else {
                c.events().forEach(e -> published.add(e.eventId()));
                CdcFixture.publishAll(c);
              }
              return published.contains(next);
            });
    // And it stays so: B keeps the slot for 5 s in a row, so nothing of A's engine reached it
    // again (A's engine, once found gone, is not asked again: that answer is final by design).
    // B's server process is taken once B has published: in one run, taken at B's first look at
    // the slot, it differed for the whole window, with nothing in the log of either instance.
    long bStreamer = fx.walsender();
    await()
        .alias("for 5 s in a row, B alone streams the slot")
        .during(Duration.ofSeconds(5))
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () ->
                assertThat(fx.walsender())
                    .as("the server process streaming the slot")
                    .isEqualTo(bStreamer));
  }

  @Test
  void aRowPendingBehindTheStoredPositionIsPublishedAtTheNextActivationAheadOfItsKey()
      throws Exception {
    fx = teardown.add(new CdcFixture("cdc_behind_position"));
    CdcSource first = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    first.activate();
    UUID k1 = fx.commit(List.of(event("k", 1))).get(0);
    CdcFixture.claimAll(first, 1, 1, Duration.ofSeconds(30)).forEach(CdcFixture::publishAll);
    long before = fx.count("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");
    fx.commit(List.of(event("x", 1)));
    CdcFixture.claimAll(first, 1, 1, Duration.ofSeconds(30)).forEach(CdcFixture::publishAll);
    await()
        .alias("the stored position is past k1 and x1")
        .atMost(Duration.ofSeconds(30))
        .until(() -> fx.confirmedLsn() > before);
    first.close(Duration.ofSeconds(10));

    // k1's row is pending again behind the stored position: what an event the stream skipped, or
    // a position stored past a row that was not final, leaves behind.
    fx.execute("UPDATE outbox SET published_at = NULL WHERE aggregate_id = 'k'");
    UUID k2 = fx.commit(List.of(event("k", 2))).get(0);

    // reconcile-after is 5 minutes: the sweep cannot be what publishes k1 here.
    CdcSource second = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    second.activate();
    List<Claim> claims = CdcFixture.claimAll(second, 1, 2, Duration.ofSeconds(30));
    List<UUID> order =
        claims.stream().flatMap(c -> c.events().stream()).map(OutboxEvent::eventId).toList();
    assertThat(order).as("k1 ahead of k2, its key's next event").containsExactly(k1, k2);
    claims.forEach(CdcFixture::publishAll);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isZero();
  }
}
