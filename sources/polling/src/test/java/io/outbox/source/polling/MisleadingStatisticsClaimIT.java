package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.Settlement;
import io.outbox.schema.PartitionedLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The claims and settlements of the polling source read the outbox through its indexes, whatever
 * its statistics say. An outbox is a queue: the share of pending rows swings between none and all,
 * and the statistics of the last ANALYZE are rarely those of now. Two states that the bench met:
 *
 * <ul>
 *   <li>A plain table analyzed while every row was pending (a backlog), and drained since: the
 *       planner takes most rows for pending, and a claim scanned the whole table and sorted it (38
 *       ms per claim on 50,000 rows, growing with the table).
 *   <li>A partitioned table whose next partition was analyzed while empty: once the ids reach it, a
 *       plan made for an empty partition scanned it in full, for the claim's hold-back and for each
 *       settlement (claim p50 21 ms, commit-to-ack p99 300-480 ms at 1,000 events/s, until
 *       autovacuum analyzed the partition).
 * </ul>
 *
 * <p>Each test claims and settles what is pending, round after round, enough times for PostgreSQL
 * to use both its custom and its generic plans, and counts the sequential scans of the outbox's
 * tables.
 */
class MisleadingStatisticsClaimIT {

  private static final int PENDING = 10;
  private static final int ROUNDS = 12;
  private PollingFixture fx;

  @AfterEach
  void tearDown() throws Exception {
    if (fx != null) {
      fx.close();
    }
  }

  @Test
  void aPlainTableAnalyzedWhileEverythingWasPendingIsReadByItsIndexes() throws Exception {
    fx = PollingFixture.create("misstat");
    fx.execute("ALTER TABLE outbox SET (autovacuum_enabled = false)");
    insert(20_000, false);
    fx.execute("ANALYZE outbox"); // every row pending
    fx.execute("UPDATE outbox SET published_at = now()");
    insert(30_000, true);
    insert(PENDING, false);

    assertClaimsReadNoTableInFull();
  }

  @Test
  void aPartitionAnalyzedWhileEmptyIsReadByItsIndexesOnceIdsReachIt() throws Exception {
    fx = PollingFixture.create("misstatp", new PartitionedLayout(4, 20_000));
    for (String partition : partitions()) {
      fx.execute("ALTER TABLE " + partition + " SET (autovacuum_enabled = false)");
    }
    insert(19_000, true);
    fx.execute("VACUUM ANALYZE outbox"); // the partitions after the first: empty
    insert(20_000, true); // 1,000 more in the first partition, 19,000 in the second
    insert(PENDING, false);

    assertClaimsReadNoTableInFull();
  }

  private void assertClaimsReadNoTableInFull() throws Exception {
    long before = sequentialScans();
    // Two lanes, as by default: the lane predicate is one the planner cannot estimate. Claims of
    // up to 500 events, as the default batch: with a LIMIT that the planner thinks most pending
    // rows of the lane, reading the table and sorting it looks cheaper than the index.
    PollingSource source = fx.activeSource(2, OnPublish.MARK);
    int settled = 0;
    for (int round = 0; round < ROUNDS; round++) {
      if (round > 0) {
        insert(PENDING, false);
      }
      for (int lane = 0; lane < 2; lane++) {
        Claim claim = source.claim(lane, 500, Duration.ZERO);
        claim.settle(
            claim.events().stream().map(e -> (Settlement) new Settlement.Published(e)).toList());
        settled += claim.events().size();
      }
    }
    source.close(Duration.ofSeconds(5));
    // A session's counters reach the statistics when it ends.
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                ((Number)
                            fx.value(
                                "SELECT count(*) FROM pg_stat_activity WHERE datname ="
                                    + " current_database() AND application_name LIKE"
                                    + " 'outbox-relay%'"))
                        .longValue()
                    == 0);
    long scans = sequentialScans() - before;

    assertThat(settled).isEqualTo(ROUNDS * PENDING);
    assertThat(fx.value("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isEqualTo(0L);
    assertThat(scans)
        .as("sequential scans of the outbox's tables by %d claims and settlements", 2 * ROUNDS)
        .isZero();
  }

  private void insert(int rows, boolean published) throws Exception {
    fx.execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, published_at)"
            + " SELECT 'order', 'k' || (g % 1000), 'Created', '{\"n\": 1}', "
            + (published ? "now()" : "NULL")
            + " FROM generate_series(1, "
            + rows
            + ") g");
  }

  private List<String> partitions() throws Exception {
    List<String> names = new ArrayList<>();
    for (Object name :
        fx.column("SELECT relid::regclass::text FROM pg_partition_tree('outbox') WHERE isleaf")) {
      names.add((String) name);
    }
    return names;
  }

  /** Sequential scans of the outbox and its partitions so far, this test's own flushed first. */
  private long sequentialScans() throws Exception {
    fx.value("SELECT pg_stat_force_next_flush()");
    fx.value("SELECT 1"); // the flush happens as the session goes idle
    Thread.sleep(200);
    fx.value("SELECT pg_stat_clear_snapshot()");
    return ((Number)
            fx.value(
                "SELECT coalesce(sum(seq_scan), 0) FROM pg_stat_user_tables WHERE relid IN"
                    + " (SELECT relid FROM pg_partition_tree('outbox'))"))
        .longValue();
  }
}
