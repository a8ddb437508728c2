package io.outbox.source.cdc;

import static io.outbox.source.cdc.CdcFixture.LEASE;
import static io.outbox.source.cdc.CdcFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.testkit.Activation;
import io.outbox.testkit.Teardown;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The application's inserts do not notify while a CDC source leads (the source holds the insert
 * trigger's wake gate on its leader session), so their commits do not queue on PostgreSQL's
 * notification lock; they notify again once no instance leads. Here a relay of another pipeline
 * listens on the same outbox (with nobody listening, inserts never notify).
 */
class CdcQuietInsertsIT {

  private static final int QUIET_MILLIS = 500;

  @RegisterExtension final Teardown teardown = new Teardown();
  private CdcFixture fx;

  @Test
  void insertsSkipTheirNotificationWhileTheSourceLeadsAndNotifyOnceItStops(TestInfo info)
      throws Exception {
    fx = teardown.add(new CdcFixture("cdc_" + info.getTestMethod().orElseThrow().getName()));
    try (Connection listener = listener()) {
      fx.commit(List.of(event("k", 0)));
      assertThat(notifications(listener, 5_000)).as("no relay yet").hasSize(1);

      CdcSource source = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
      source.activate();
      assertThat(fx.wakeGateHolder()).as("the leader session holds the gate").isPositive();
      fx.commit(List.of(event("k", 1), event("k", 2)));
      fx.commit(List.of(event("other", 1)));
      assertThat(notifications(listener, QUIET_MILLIS)).as("while the source leads").isEmpty();
      CdcFixture.claimAll(source, 1, 4, Duration.ofSeconds(30)).forEach(CdcFixture::publishAll);

      source.close(Duration.ofSeconds(10));
      await()
          .alias("released with the leadership")
          .atMost(Duration.ofSeconds(5))
          .until(() -> fx.wakeGateHolder() == 0);
      fx.commit(List.of(event("k", 3)));
      assertThat(notifications(listener, 5_000)).as("once it stopped").hasSize(1);
    }
  }

  @Test
  void aStandbyThatTakesOverFromAFrozenHolderQuietsInserts(TestInfo info) throws Exception {
    fx = teardown.add(new CdcFixture("cdc_" + info.getTestMethod().orElseThrow().getName()));
    CdcSource a = fx.source(1, LEASE, new CopyOnWriteArrayList<>());
    a.activate();
    long frozen = fx.wakeGateHolder();
    assertThat(frozen).as("A's leader session holds the gate").isPositive();

    List<Role> bRoles = new CopyOnWriteArrayList<>();
    CdcSource b = fx.source(1, LEASE, bRoles);
    CompletableFuture<Void> bActive = Activation.inBackground(b);
    await().atMost(Duration.ofSeconds(10)).until(() -> bRoles.contains(Role.STANDBY));
    a.stopRenewingLease(); // A's sessions stay open until B's take-over ends them
    await().atMost(Duration.ofSeconds(15)).until(bActive::isDone);
    bActive.join();
    await()
        .alias("B's leader session holds the gate")
        .atMost(Duration.ofSeconds(5))
        .until(() -> fx.wakeGateHolder() > 0 && fx.wakeGateHolder() != frozen);
    try (Connection listener = listener()) {
      fx.commit(List.of(event("k", 1)));
      assertThat(notifications(listener, QUIET_MILLIS)).as("B leads").isEmpty();
    }
  }

  /**
   * A session that listens as a polling relay's listener does: {@code LISTEN}, then the lock {@code
   * (key, 3)} without which inserts notify nobody (migration V7).
   */
  private Connection listener() throws SQLException {
    Connection c = fx.db.connect();
    try (Statement s = c.createStatement()) {
      s.execute("LISTEN " + OutboxTables.of("outbox").notifyChannel());
      s.execute("SELECT pg_advisory_lock(" + OutboxTables.of("outbox").wakeLockKey() + ", 3)");
    }
    return c;
  }

  private static List<PGNotification> notifications(Connection listener, int millis)
      throws SQLException {
    PGNotification[] received = listener.unwrap(PGConnection.class).getNotifications(millis);
    return received == null ? List.of() : Arrays.asList(received);
  }
}
