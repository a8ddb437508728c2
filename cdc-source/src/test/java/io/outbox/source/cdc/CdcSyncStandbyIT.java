package io.outbox.source.cdc;

import static io.outbox.source.cdc.CdcFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Claim;
import io.outbox.testkit.Sql;
import io.outbox.testkit.Teardown;
import java.sql.Connection;
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

    fx.execute("ALTER SYSTEM SET synchronous_commit = 'local'");
    fx.execute("ALTER SYSTEM SET synchronous_standby_names = 'outbox_relay_it_absent_standby'");
    fx.execute("SELECT pg_reload_conf()");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                fx.count("SELECT count(*) WHERE current_setting('synchronous_standby_names') <> ''")
                    == 1);

    Connection app = fx.db.connect();
    teardown.add(app::close);
    app.setAutoCommit(false);
    execute(app, "SET synchronous_commit = on");
    fx.writer.writeAll(app, List.of(event("sync", 1)));
    long waitingId = Sql.number(app, "SELECT max(id) FROM outbox");
    int appPid = (int) Sql.number(app, "SELECT pg_backend_pid()");
    CompletableFuture<Void> commit =
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
                            + appPid
                            + " AND wait_event = 'SyncRep'")
                    == 1);

    // Well past the grace a row not found gets: the commit still waits for its standby.
    List<Long> handedOut = new ArrayList<>();
    long until = System.nanoTime() + 3 * UnseenRows.GRACE.toNanos();
    while (System.nanoTime() < until) {
      claimAndPublish(source, handedOut);
    }
    assertThat(handedOut).as("nothing to publish while the row is invisible").isEmpty();

    // The operator gives up on the standby: the commit completes and the row is visible.
    fx.execute("SELECT pg_cancel_backend(" + appPid + ")");
    commit.get(10, TimeUnit.SECONDS);
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
