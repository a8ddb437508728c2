package io.outbox.source.cdc;

import static io.outbox.source.cdc.CdcFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Settlement.DeadLetterReason;
import io.outbox.testkit.Teardown;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Events the CDC source holds twice in its life — streamed again after a restart from a stored
 * position behind them (issue #13.3), or delivered by the stream after the reconcile sweep
 * published them (a transaction open longer than {@code reconcile-after}, issue #13.7) — are sent
 * only while their rows say so, with the rows' attempts and retry times.
 */
class CdcRestreamIT {
  @RegisterExtension final Teardown teardown = new Teardown();
  private CdcFixture fx;

  @Test
  void aRestartStreamsAgainOnlyWhatTheRowsStillHold() throws Exception {
    fx = teardown.add(new CdcFixture("cdc_restream_rows"));
    CdcSource first = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    first.activate();
    fx.commit(List.of(event("a", 1), event("a", 2), event("b", 1), event("c", 1), event("d", 1)));
    Claim claim = CdcFixture.claimAll(first, 1, 5, Duration.ofSeconds(30)).get(0);
    List<OutboxEvent> e = claim.events();
    claim.settle(
        List.of(
            new Settlement.Retry(e.get(0), 1, Duration.ofSeconds(60), "broker said no"),
            new Settlement.Release(e.get(1)),
            new Settlement.Published(e.get(2)),
            new Settlement.Retry(e.get(3), 2, Duration.ofMillis(100), "broker said no"),
            new Settlement.DeadLetter(e.get(4), DeadLetterReason.PERMANENT, 0, "bad")));
    // a's retry holds the stored position before every one of them.
    first.close(Duration.ofSeconds(10));

    CdcSource second = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    second.activate();
    await().atMost(Duration.ofSeconds(30)).until(() -> second.inMemory() == 5);
    Claim again = second.claim(0, 100, Duration.ofSeconds(10));
    assertThat(again.events())
        .as("b published and d dead-lettered are not sent again; a waits for its retry")
        .extracting(OutboxEvent::id)
        .containsExactly(e.get(3).id());
    assertThat(again.events().get(0).attempts()).as("c's attempts, from its row").isEqualTo(2);
    CdcFixture.publishAll(again);

    Claim held = second.claim(0, 100, Duration.ofMillis(500));
    assertThat(held.events()).as("a is due in a minute, a2 waits behind it").isEmpty();
    held.release();
    assertThat(second.inMemory()).isEqualTo(2);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL")).isEqualTo(2);
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isEqualTo(1);
  }

  @Test
  void aTransactionOpenPastReconcileAfterIsPublishedOnce() throws Exception {
    fx = teardown.add(new CdcFixture("cdc_restream_long_tx"));
    CdcSource source =
        fx.source(
            1, Map.of("reconcile-after", "1s", "lane-buffer", 1), new CopyOnWriteArrayList<>());
    source.activate();
    List<Long> handedOut = new ArrayList<>();
    long lateCommitted;
    try (Connection tx = fx.db.connect()) {
      tx.setAutoCommit(false);
      fx.writer.writeAll(tx, List.of(event("late", 1)));
      Instant began = createdAt(tx);
      // Open past reconcile-after on the database clock, while heartbeats move the stream on.
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> Duration.between(began, databaseNow()).toMillis() > 2_500);
      // One event per lane buffer: the stream, held back by the lane, delivers late's INSERT
      // only after the sweep's copy of it was published.
      fx.commit(List.of(event("a", 1)));
      fx.commit(List.of(event("b", 1)));
      fx.commit(List.of(event("c", 1)));
      tx.commit();
      lateCommitted = fx.count("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> source.inMemory() == 2); // a + swept late
    for (int i = 0; i < 4; i++) {
      Claim c = source.claim(0, 100, Duration.ofSeconds(i < 3 ? 10 : 3));
      c.events().forEach(ev -> handedOut.add(ev.id()));
      CdcFixture.publishAll(c);
    }
    // The stream delivered late's INSERT too, and counted it final: the slot moved past it.
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.confirmedLsn() >= lateCommitted);
    assertThat(handedOut).as("every event handed out once").doesNotHaveDuplicates().hasSize(4);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isZero();
  }

  private Instant databaseNow() throws Exception {
    try (Connection c = fx.db.connect()) {
      return databaseNow(c);
    }
  }

  private static Instant databaseNow(Connection c) throws Exception {
    return instant(c, "SELECT clock_timestamp()");
  }

  /** The {@code created_at} of the row {@code tx} wrote: when the transaction began. */
  private static Instant createdAt(Connection tx) throws Exception {
    return instant(tx, "SELECT max(created_at) FROM outbox");
  }

  private static Instant instant(Connection c, String sql) throws Exception {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getTimestamp(1).toInstant();
    }
  }
}
