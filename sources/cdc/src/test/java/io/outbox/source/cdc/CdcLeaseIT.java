package io.outbox.source.cdc;

import static io.outbox.source.cdc.CdcFixture.LEASE;
import static io.outbox.source.cdc.CdcFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.SourceException;
import io.outbox.testkit.Activation;
import io.outbox.testkit.Teardown;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The CDC source's lease: a holder that stops renewing is replaced and fenced. */
class CdcLeaseIT {

  @RegisterExtension final Teardown teardown = new Teardown();
  private CdcFixture fx;

  @Test
  void standbyTakesOverFromAFrozenHolderAndFencesItsSettlement(TestInfo info) throws Exception {
    fx = teardown.add(new CdcFixture("cdc_" + info.getTestMethod().orElseThrow().getName()));
    CdcSource a = fx.source(1, LEASE, new CopyOnWriteArrayList<>());
    a.activate();
    List<UUID> ids = fx.commit(List.of(event("k", 1), event("k", 2)));
    List<Claim> held = CdcFixture.claimAll(a, 1, 2, Duration.ofSeconds(30));
    assertThat(held).hasSize(1);
    long streamer = fx.walsender();
    assertThat(streamer).as("A streams the slot").isPositive();

    List<Role> bRoles = new CopyOnWriteArrayList<>();
    CdcSource b = fx.source(1, LEASE, bRoles);
    CompletableFuture<Void> bActive = Activation.inBackground(b);
    await().atMost(Duration.ofSeconds(10)).until(() -> bRoles.contains(Role.STANDBY));

    long frozenAt = System.nanoTime();
    a.stopRenewingLease(); // A's sessions, its replication connection too, stay open
    await().atMost(Duration.ofSeconds(3 + 12)).until(bActive::isDone);
    bActive.join();
    long tookOverMs = (System.nanoTime() - frozenAt) / 1_000_000;
    assertThat(bRoles).containsExactly(Role.STANDBY, Role.ACTIVE);
    assertThat(held.get(0).owned()).as("A's claim is no longer owned").isFalse();

    // A wakes up: its settlement fails and changes nothing, its offset commits are refused.
    assertThatThrownBy(() -> CdcFixture.publishAll(held.get(0)))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("no longer current");
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL")).isZero();
    try (Connection c = fx.db.connect()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> a.fence().check(c))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("no longer current");
      c.rollback();
    }
    // Its next claim finds the lease lost and stops its stream (in one JVM, that also frees the
    // engine's metrics names B's engine waits for).
    assertThatThrownBy(() -> a.claim(0, 10, Duration.ofMillis(100)))
        .isInstanceOf(LeadershipLostException.class);
    await()
        .alias("B streams the slot now")
        .atMost(Duration.ofSeconds(30))
        .until(() -> fx.walsender() > 0 && fx.walsender() != streamer);

    // B streams the rows A could not settle, and what comes next.
    UUID next = fx.commit(List.of(event("k", 3))).get(0);
    List<Claim> claims = CdcFixture.claimAll(b, 1, 3, Duration.ofSeconds(30));
    List<UUID> order =
        claims.stream().flatMap(c -> c.events().stream()).map(OutboxEvent::eventId).toList();
    assertThat(order).containsExactly(ids.get(0), ids.get(1), next);
    claims.forEach(CdcFixture::publishAll);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isZero();
    assertThat(tookOverMs).as("take-over time, ms").isLessThan(3_000 + 12_000);
    System.out.println("CdcLeaseIT: take-over after " + tookOverMs + " ms");
  }
}
