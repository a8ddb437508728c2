package io.outbox.source.cdc;

import static io.outbox.source.cdc.CdcFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxMessage;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.Settlement;
import io.outbox.source.cdc.claim.UnseenRows;
import io.outbox.testkit.Sql;
import io.outbox.testkit.Teardown;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue #29 point 3: with {@code synchronous_standby_names} set, a committing session waits for the
 * standby after its commit record is flushed; logical decoding streams the transaction at once, and
 * its rows stay invisible to every other session until the standby answers. Such a row is not a
 * deleted one, however long the standby takes: the source holds its key until the row is visible,
 * and publishes it ahead of the next event of its key.
 *
 * <p>The standby here never answers (a name no walsender has); the cluster's default {@code
 * synchronous_commit} is {@code local} meanwhile, so that only the application's session, which
 * asks for {@code on}, waits, and no other test. Cancelling that wait (what an operator does when a
 * standby is gone) makes the commit visible.
 */
class CdcSyncStandbyIT {

  @RegisterExtension final Teardown teardown = new Teardown();

  private CdcFixture fx;

  @Test
  void aCommitWaitingForASynchronousStandbyIsHeldNotTakenForDeleted() throws Exception {
    fx = teardown.add(new CdcFixture("cdc_sync_standby"));
    CdcSource source = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    source.activate();
    fx.commit(List.of(event("warm", 1)));
    CdcFixture.publishAll(CdcFixture.claimAll(source, 1, 1, Duration.ofSeconds(30)).get(0));

    requireAStandbyThatNeverAnswers();
    AppTransaction waiting = new AppTransaction(event("sync", 1)).commitWaitingForTheStandby();
    long waitingId = waiting.id();

    // Well past the grace a row not found gets: the commit still waits for its standby.
    List<Long> handedOut = new ArrayList<>();
    long until = System.nanoTime() + 3 * UnseenRows.GRACE.toNanos();
    while (System.nanoTime() < until) {
      claimAndPublish(source, handedOut);
    }
    assertThat(handedOut).as("nothing to publish while the row is invisible").isEmpty();

    // The operator gives up on the standby: the commit completes and the row is visible.
    waiting.cancelTheWait();
    fx.commit(List.of(event("sync", 2))); // the key's next event, once the first one's commit ended
    long nextId = fx.count("SELECT max(id) FROM outbox");

    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL") > 0
        && System.nanoTime() < deadline) {
      claimAndPublish(source, handedOut);
    }
    assertThat(handedOut)
        .as("both events published by the stream, not left to the sweep (reconcile-after 5m)")
        .containsExactly(waitingId, nextId);
  }

  /**
   * A parked event whose commit waits for the standby: key {@code h} is held by a retry (6 s) while
   * its later events fill the lane ({@code lane-buffer} 5), so they leave memory and only their
   * range of ids and transactions is kept; one of them is the waiting commit. When the retry is
   * published the range is read back from the table, whose read does not see the waiting row. On
   * the code before, the read skipped it and ended the range: the key's later events were handed
   * out and the waiting one was left to the sweep.
   */
  @Test
  void aParkedEventWhoseCommitWaitsForTheStandbyIsNotSkippedWhenItsKeyIsReadBack()
      throws Exception {
    fx = teardown.add(new CdcFixture("cdc_sync_parked"));
    CdcSource source = fx.source(1, Map.of("lane-buffer", 5), new CopyOnWriteArrayList<>());
    source.activate();
    fx.commit(List.of(event("h", 1)));
    Claim first = CdcFixture.claimAll(source, 1, 1, Duration.ofSeconds(30)).get(0);
    long retried = first.events().get(0).id();
    first.settle(
        List.of(
            new Settlement.Retry(
                first.events().get(0), 1, Duration.ofSeconds(6), "broker said no")));

    requireAStandbyThatNeverAnswers();
    // h's second event is written first and committed last: the events after it fill the lane,
    // so it arrives at a full lane and is parked.
    AppTransaction waiting = new AppTransaction(event("h", 2));
    List<OutboxMessage> later = new ArrayList<>();
    for (int seq = 3; seq <= 20; seq++) {
      later.add(event("h", seq));
    }
    fx.commit(later);
    Thread.sleep(1_000); // streamed meanwhile: the lane is full and h's newer events parked
    waiting.commitWaitingForTheStandby();

    // The retry comes due and is published; the parked range waits for the invisible row.
    List<Long> handedOut = new ArrayList<>();
    long until = System.nanoTime() + Duration.ofSeconds(6).plus(UnseenRows.GRACE).toNanos();
    while (System.nanoTime() < until || handedOut.isEmpty()) {
      claimAndPublish(source, handedOut);
    }
    assertThat(handedOut)
        .as("only the retry while the parked row is invisible")
        .containsExactly(retried);

    waiting.cancelTheWait();
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL") > 0
        && System.nanoTime() < deadline) {
      claimAndPublish(source, handedOut);
    }
    List<Long> ids = new ArrayList<>();
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT id FROM outbox WHERE aggregate_id = 'h' ORDER BY id")) {
      while (rs.next()) {
        ids.add(rs.getLong(1));
      }
    }
    assertThat(ids).hasSize(20).contains(waiting.id());
    assertThat(handedOut)
        .as("every event of h, in id order, the waiting one included (not left to the sweep)")
        .containsExactlyElementsOf(ids);
  }

  /**
   * {@code synchronous_standby_names} names a standby no walsender has; the cluster's default
   * {@code synchronous_commit} is {@code local} meanwhile, so that only a session that asks for
   * {@code on} waits.
   */
  private void requireAStandbyThatNeverAnswers() throws Exception {
    fx.execute("ALTER SYSTEM SET synchronous_commit = 'local'");
    fx.execute("ALTER SYSTEM SET synchronous_standby_names = 'outbox_relay_it_absent_standby'");
    fx.execute("SELECT pg_reload_conf()");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                fx.count("SELECT count(*) WHERE current_setting('synchronous_standby_names') <> ''")
                    == 1);
  }

  /** An application's transaction that wrote one event: its row id and session. */
  private final class AppTransaction {
    private final Connection app;
    private final long id;
    private final int pid;
    private CompletableFuture<Void> commit;

    AppTransaction(OutboxMessage event) throws Exception {
      app = fx.db.connect();
      teardown.add(app::close);
      app.setAutoCommit(false);
      execute(app, "SET synchronous_commit = on");
      fx.writer.writeAll(app, List.of(event));
      id = Sql.number(app, "SELECT max(id) FROM outbox");
      pid = (int) Sql.number(app, "SELECT pg_backend_pid()");
    }

    long id() {
      return id;
    }

    /** Commits; returns once the commit waits for the standby (flushed locally, streamed). */
    AppTransaction commitWaitingForTheStandby() {
      commit =
          CompletableFuture.runAsync(
              () -> {
                try {
                  app.commit();
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  fx.count(
                          "SELECT count(*) FROM pg_stat_activity WHERE pid = "
                              + pid
                              + " AND wait_event = 'SyncRep'")
                      == 1);
      return this;
    }

    /** What an operator does when the standby is gone: the commit completes, the row is visible. */
    void cancelTheWait() throws Exception {
      fx.execute("SELECT pg_cancel_backend(" + pid + ")");
      commit.get(10, TimeUnit.SECONDS);
    }
  }

  @AfterEach
  void resetTheCluster() throws Exception {
    if (fx != null) {
      fx.execute("ALTER SYSTEM RESET synchronous_standby_names");
      fx.execute("ALTER SYSTEM RESET synchronous_commit");
      fx.execute("SELECT pg_reload_conf()");
    }
  }

  private static void claimAndPublish(CdcSource source, List<Long> handedOut) throws Exception {
    Claim c = source.claim(0, 100, Duration.ofMillis(200));
    c.events().forEach(e -> handedOut.add(e.id()));
    CdcFixture.publishAll(c);
  }

  private static void execute(Connection c, String sql) throws Exception {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
