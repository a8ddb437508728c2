package io.outbox.source.cdc;

import static io.outbox.source.cdc.CdcFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxMessage;
import io.outbox.relay.spi.Claim;
import io.outbox.source.cdc.stream.ChangeStream;
import io.outbox.testkit.Sql;
import io.outbox.testkit.Teardown;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * After an activation's catch-up published a backlog from the table, the stream still delivers the
 * backlog's INSERTs; those of rows the catch-up published only move the stream's position, they do
 * not go through a lane (the stall after every activation that found a backlog, issue #15). A row
 * committed after the catch-up read the table, with a lower id than its last (its id was taken
 * before the commit), is still streamed and published.
 */
class CdcCatchUpRestreamIT {
  @RegisterExtension final Teardown teardown = new Teardown();

  private static final int BACKLOG = 3_000;

  @Test
  void theStreamSkipsWhatTheCatchUpPublishedAndKeepsALaterCommitWithALowerId() throws Exception {
    CdcFixture fx = teardown.add(new CdcFixture("cdc_catch_up_restream"));
    CdcSource first = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    first.activate();
    fx.commit(List.of(event("warm", 1)));
    CdcFixture.publishAll(CdcFixture.claimAll(first, 1, 1, Duration.ofSeconds(30)).get(0));
    long warmCommitted = fx.count("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.confirmedLsn() >= warmCommitted);
    first.close(Duration.ofSeconds(10));

    try (Connection late = fx.db.connect()) {
      late.setAutoCommit(false);
      fx.writer.writeAll(late, List.of(event("late", 1)));
      long lateId = Sql.number(late, "SELECT max(id) FROM outbox");
      // The backlog, committed while no instance streams: ids above late's.
      List<OutboxMessage> backlog = new ArrayList<>();
      for (int i = 0; i < BACKLOG; i++) {
        backlog.add(event("k" + (i % 50), i));
      }
      fx.commit(backlog);
      long highest = fx.count("SELECT max(id) FROM outbox");
      assertThat(lateId).isLessThan(highest);

      CdcSource second = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
      second.activate();
      List<Long> handedOut = new ArrayList<>();
      Claim claim = second.claim(0, 500, Duration.ofSeconds(30));
      claim.events().forEach(e -> handedOut.add(e.id()));
      CdcFixture.publishAll(claim);
      // Committed while the catch-up is under way, after it fixed its bound and read its first
      // page: invisible to it, with an id below the bound.
      late.commit();
      long lateCommitted = fx.count("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");

      drain(fx, second, handedOut);
      // Every INSERT up to late's commit went through the stream and was counted final.
      await().atMost(Duration.ofSeconds(60)).until(() -> fx.confirmedLsn() >= lateCommitted);

      assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isZero();
      assertThat(handedOut)
          .as("the backlog and the late row, each handed out once")
          .doesNotHaveDuplicates()
          .hasSize(BACKLOG + 1)
          .contains(lateId);
      ChangeStream<?> stream = second.activeStream();
      assertThat(stream.staleInLanes())
          .as("streamed INSERTs of rows already published that reached a lane")
          .isZero();
      assertThat(stream.staleSkipped())
          .as("the backlog's INSERTs kept from the lanes")
          .isPositive();
      assertThat(second.inMemory()).isZero();
    }
  }

  /**
   * Issue #29 point 1: the catch-up reads the table page by page while the application commits. Two
   * events of one key, their ids taken before the activation fixed its bound, commit in order after
   * the first page was read: the earlier one falls in the page already read, the later one in a
   * page still to come. The earlier event reaches the relay only by the stream, which waits behind
   * the catch-up; the later one must not be handed out ahead of it.
   */
  @Test
  void aKeyCommittingBetweenTheCatchUpsPagesKeepsItsOrder() throws Exception {
    keyCommittingBetweenPages("cdc_catch_up_pages", false);
  }

  /** The same, with the catch-up's connection ended while it waits: it reads again, in order. */
  @Test
  void aCatchUpWhoseConnectionEndsMidwayReadsAgainInOrderWithoutRepeating() throws Exception {
    keyCommittingBetweenPages("cdc_catch_up_pages_retry", true);
  }

  private void keyCommittingBetweenPages(String purpose, boolean endTheCatchUpsConnection)
      throws Exception {
    CdcFixture fx = teardown.add(new CdcFixture(purpose));
    CdcSource first = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    first.activate();
    fx.commit(List.of(event("warm", 1)));
    CdcFixture.publishAll(CdcFixture.claimAll(first, 1, 1, Duration.ofSeconds(30)).get(0));
    first.close(Duration.ofSeconds(10));

    try (Connection earlier = fx.db.connect();
        Connection later = fx.db.connect()) {
      earlier.setAutoCommit(false);
      later.setAutoCommit(false);
      fx.writer.writeAll(earlier, List.of(event("held", 1)));
      long earlierId = Sql.number(earlier, "SELECT max(id) FROM outbox");
      List<OutboxMessage> backlog = new ArrayList<>();
      for (int i = 0; i < 600; i++) {
        backlog.add(event("k" + (i % 50), i));
      }
      fx.commit(backlog); // more than a page of the catch-up, ids above the earlier event's
      fx.writer.writeAll(later, List.of(event("held", 2)));
      long laterId = Sql.number(later, "SELECT max(id) FROM outbox");
      fx.commit(List.of(event("after", 1))); // the bound is above the later event's id

      // A lane holds fewer rows than a page: the catch-up waits in its first page.
      CdcSource second = fx.source(1, Map.of("lane-buffer", 100), new CopyOnWriteArrayList<>());
      second.activate();
      List<Long> handedOut = new ArrayList<>();
      Claim claim = second.claim(0, 100, Duration.ofSeconds(30));
      claim.events().forEach(e -> handedOut.add(e.id()));
      assertThat(handedOut).as("the first page is read").isNotEmpty();
      if (endTheCatchUpsConnection) {
        assertThat(
                fx.count(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                        + " WHERE application_name LIKE '% cdc catch-up'"))
            .isEqualTo(1);
      }
      // Both commit, in the key's order, while the catch-up waits for the lane to take its page.
      earlier.commit();
      later.commit();
      // While the catch-up waits for the lane, it holds no lock on the table: a schema change (an
      // exclusive lock) goes through instead of queueing the lanes' claims behind it.
      try (Connection ddl = fx.db.connect()) {
        ddl.setAutoCommit(false);
        try (Statement st = ddl.createStatement()) {
          st.execute("SET LOCAL lock_timeout = '2s'");
          st.execute("LOCK TABLE outbox IN ACCESS EXCLUSIVE MODE");
        }
        ddl.rollback();
      }
      CdcFixture.publishAll(claim);

      drain(fx, second, handedOut);
      assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isZero();
      assertThat(handedOut).contains(earlierId, laterId).doesNotHaveDuplicates();
      assertThat(handedOut.indexOf(earlierId))
          .as(
              "the key's earlier event (id %d) is handed out before its later one (id %d)",
              earlierId, laterId)
          .isLessThan(handedOut.indexOf(laterId));
    }
  }

  /**
   * Claims and publishes until no row is unpublished (2 minutes at most), noting what is handed.
   */
  private static void drain(CdcFixture fx, CdcSource source, List<Long> handedOut)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL") > 0
        && System.nanoTime() < deadline) {
      Claim c = source.claim(0, 500, Duration.ofSeconds(1));
      c.events().forEach(e -> handedOut.add(e.id()));
      CdcFixture.publishAll(c);
    }
  }
}
