package io.outbox.source.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.Ticker;
import io.outbox.schema.Migrator;
import io.outbox.schema.PartitionedLayout;
import io.outbox.source.postgres.RetentionJob.Round;
import io.outbox.testkit.Sql;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Retention of a partitioned outbox: a partition whose rows are all settled and old enough is
 * emptied at once, and nothing else is lost, not even a row that commits while it is checked.
 */
class PartitionRetentionIT {

  private static final OutboxTables TABLES = OutboxTables.of("outbox", "outbox_dead_letter");
  private static final DatabaseSettings.Retention POLICY =
      new DatabaseSettings.Retention(
          Duration.ofDays(7), Duration.ofDays(30), 1000, Duration.ofSeconds(1));
  private static TestDatabase db;

  @BeforeAll
  static void migrate() {
    db = TestDatabase.create("partition_retention");
    new Migrator(TABLES, new PartitionedLayout(2, 1000), true)
        .migrate(db.url(), db.user(), db.password());
  }

  @AfterAll
  static void dropDatabase() {
    db.close();
  }

  /**
   * p0 (ids 1-1000): 3 rows published 8 days ago. p1 (ids 1001-2000): one published 8 days ago, one
   * pending.
   */
  @BeforeEach
  void rows() throws SQLException {
    sql("TRUNCATE outbox, outbox_relay_position");
    sql("SELECT setval('outbox_id_seq', 1, false)");
    insert(3, "now() - interval '8 days'");
    sql("SELECT setval('outbox_id_seq', 1001, false)");
    insert(1, "now() - interval '8 days'");
    insert(1, "NULL");
  }

  @Test
  void aPartitionWhoseRowsAreAllPublishedLongAgoIsEmptiedAndNoRowIsDeleted() throws SQLException {
    Round round = round(POLICY);

    assertThat(round.emptied())
        .extracting(Retention.Emptied::partition)
        .containsExactly("public.outbox_p0");
    assertThat(round.published()).isZero();
    assertThat(Sql.strings(db::connect, "SELECT id::text FROM outbox ORDER BY id"))
        .containsExactly("1001", "1002");
    assertThat(Sql.strings(db::connect, "SELECT pg_relation_size('outbox_p0')::text"))
        .containsExactly("0");
    assertThat(round(POLICY).emptied()).isEmpty(); // nothing left to reclaim in p0
  }

  @Test
  void aRowCommittedWhileThePartitionIsCheckedKeepsIt() throws Exception {
    try (Connection late = db.connect();
        Statement s = late.createStatement()) {
      late.setAutoCommit(false);
      s.execute("SELECT setval('outbox_id_seq', 4, false)");
      insert(s, 1, "NULL"); // took id 4 in p0; not committed yet
      CompletableFuture<Void> commit =
          CompletableFuture.runAsync(
              () -> {
                try {
                  Thread.sleep(300); // while the round waits for p0's lock
                  late.commit();
                } catch (InterruptedException | SQLException e) {
                  throw new IllegalStateException(e);
                }
              });

      Round round = round(POLICY);
      commit.get(5, TimeUnit.SECONDS);

      assertThat(round.emptied()).isEmpty();
    }
    assertThat(Sql.strings(db::connect, "SELECT id::text FROM outbox ORDER BY id"))
        .containsExactlyInAnyOrder("1", "2", "3", "4", "1001", "1002");
  }

  @Test
  void aPartitionAnotherSessionReadsIsLeftForTheNextRound() throws Exception {
    try (Connection claim = db.connect();
        Statement s = claim.createStatement()) {
      claim.setAutoCommit(false);
      // As another pipeline's claim does (this source's own are paused first).
      s.execute("SELECT id FROM outbox WHERE published_at IS NULL FOR UPDATE");
      long started = System.nanoTime();

      Round busy = round(POLICY);

      assertThat(busy.emptied()).isEmpty();
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started))
          .isBetween(400L, 5_000L); // Retention.PARTITION_LOCK_TIMEOUT, then on
      claim.rollback();
    }
    assertThat(round(POLICY).emptied())
        .extracting(Retention.Emptied::partition)
        .containsExactly("public.outbox_p0");
  }

  @Test
  void withPublishedRowsKeptForeverOnlyAPartitionWithoutRowsIsEmptied() throws SQLException {
    DatabaseSettings.Retention keep =
        new DatabaseSettings.Retention(
            Duration.ZERO, Duration.ofDays(30), 1000, Duration.ofSeconds(1));

    assertThat(round(keep).emptied()).isEmpty();
    sql("DELETE FROM outbox WHERE id <= 3"); // on-publish = delete leaves dead rows

    assertThat(round(keep).emptied())
        .extracting(Retention.Emptied::partition)
        .containsExactly("public.outbox_p0");
    assertThat(Sql.strings(db::connect, "SELECT count(*)::text FROM outbox")).containsExactly("2");
  }

  @Test
  void aLayoutOtherThanTheSettingsOneIsWarnedAboutAndStillRead() throws SQLException {
    OutboxTables plain = OutboxTables.of("plain_outbox");
    new Migrator(plain).migrate(db.url(), db.user(), db.password());
    Logger logger = (Logger) LoggerFactory.getLogger(OutboxTableCheck.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    logger.addAppender(lines);
    Level level = logger.getLevel();
    logger.setLevel(Level.WARN);
    try (Connection c = db.connect()) {
      OutboxTableCheck.checkLayout(c, TABLES, new DatabaseSettings.Partitions(2, 1000), "orders");
      OutboxTableCheck.checkLayout(c, plain, DatabaseSettings.Partitions.PLAIN, "orders");
      assertThat(lines.list).isEmpty();

      OutboxTableCheck.checkLayout(c, TABLES, DatabaseSettings.Partitions.PLAIN, "orders");
      OutboxTableCheck.checkLayout(c, plain, new DatabaseSettings.Partitions(2, 1000), "orders");
    } finally {
      logger.detachAppender(lines);
      logger.setLevel(level);
    }

    assertThat(lines.list)
        .extracting(ILoggingEvent::getFormattedMessage)
        .containsExactly(
            "pipeline orders: public.outbox is partitioned, but layout = plain: retention empties"
                + " its partitions all the same, but claims are planned as for one table, which"
                + " can read a whole partition each; set layout = partitioned to say so (migrate"
                + " does not turn it back)",
            "pipeline orders: layout = partitioned, but public.plain_outbox is one plain table:"
                + " run `outbox-relay migrate` to partition it; until then retention deletes"
                + " published rows one by one");
  }

  /**
   * Settling by position (nothing written to a published row), a partition is emptied once every
   * row in it is below the pipeline's positions or published, and old enough by its created_at; a
   * row the positions do not cover yet, a pending exception or a young row keeps it.
   */
  @Test
  void settledByPositionAPartitionIsEmptiedOnceThePositionsCoverItsRows() throws SQLException {
    sql("TRUNCATE outbox");
    sql("SELECT setval('outbox_id_seq', 1, false)");
    insertCreated(3, "now() - interval '8 days'"); // p0
    sql("SELECT setval('outbox_id_seq', 1001, false)");
    insertCreated(1, "now() - interval '8 days'"); // p1
    settleUpToNow();
    insertCreated(1, "now() - interval '8 days'"); // p1, id 1002: after the position

    Round first = round(POLICY);

    assertThat(first.emptied())
        .extracting(Retention.Emptied::partition)
        .containsExactly("public.outbox_p0");
    assertThat(Sql.strings(db::connect, "SELECT id::text FROM outbox ORDER BY id"))
        .containsExactly("1001", "1002");
    sql("SELECT setval('outbox_id_seq', 3001, false)"); // the ids come round to p1
    insertCreated(1, "now()");
    assertThat(round(POLICY).earlierRound())
        .as("of p1's earlier round, 1002 alone is not settled")
        .isEqualTo(new Retention.EarlierRound("public.outbox_p1", 3001, 2, 1));

    sql("DELETE FROM outbox WHERE id = 3001");
    sql("UPDATE outbox SET next_attempt_at = now() WHERE id = 1002"); // an exception, pending
    settleUpToNow();
    assertThat(round(POLICY).emptied()).as("a pending exception keeps p1").isEmpty();
    sql("UPDATE outbox SET published_at = now() - interval '8 days' WHERE id = 1002");
    sql("SELECT setval('outbox_id_seq', 1, false)");
    insertCreated(1, "now()"); // p0, young
    settleUpToNow();
    assertThat(round(POLICY).emptied())
        .extracting(Retention.Emptied::partition)
        .as("p0 holds a row settled an instant ago, p1 none pending nor young")
        .containsExactly("public.outbox_p1");
    assertThat(Sql.strings(db::connect, "SELECT id::text FROM outbox ORDER BY id"))
        .containsExactly("1");
  }

  /** Pipeline orders' one lane settled every transaction committed so far. */
  private static void settleUpToNow() throws SQLException {
    sql(
        "INSERT INTO outbox_relay_position (pipeline, lane, settled, window_snapshot, after_id,"
            + " last_id) VALUES ('orders', 0, pg_current_snapshot(), pg_current_snapshot(), 0, 0)"
            + " ON CONFLICT (pipeline, lane) DO UPDATE SET settled = excluded.settled,"
            + " window_snapshot = excluded.window_snapshot");
  }

  /** Rows nobody wrote after the insert, created at {@code createdAt}. */
  private static void insertCreated(int rows, String createdAt) throws SQLException {
    sql(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, created_at)"
            + " SELECT 'order', 'k' || g, 'E', '{}', "
            + createdAt
            + " FROM generate_series(1, "
            + rows
            + ") g");
  }

  @Test
  void idsThatComeRoundToAPartitionStillHoldingRowsAreReportedOnce() throws SQLException {
    assertThat(round(POLICY).earlierRound()).isNull(); // p1 takes ids 1001-1002: its first round

    // p0 (ids 1-3) was published an hour ago: within the 7 days retention keeps, so it stays.
    sql("TRUNCATE outbox");
    sql("SELECT setval('outbox_id_seq', 1, false)");
    insert(2, "now() - interval '1 hour'");
    insert(1, "NULL");
    sql("SELECT setval('outbox_id_seq', 1001, false)");
    insert(2, "now() - interval '1 hour'");
    sql("SELECT setval('outbox_id_seq', 2001, false)"); // the ids come round to p0
    insert(1, "NULL");
    Logger logger = (Logger) LoggerFactory.getLogger(RetentionJob.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    logger.addAppender(lines);
    Round first;
    Round second;
    try (RetentionJob job = job(POLICY)) {
      assertThat(job.earlierRoundRows()).isEmpty(); // not counted before its first round
      first = job.round();
      second = job.round();
      assertThat(job.earlierRoundRows()).hasValue(3);
    } finally {
      logger.detachAppender(lines);
    }

    assertThat(first.earlierRound())
        .isEqualTo(new Retention.EarlierRound("public.outbox_p0", 2001, 3, 1));
    assertThat(second.earlierRound()).isEqualTo(first.earlierRound());
    assertThat(first.emptied()).isEmpty();
    assertThat(lines.list)
        .filteredOn(e -> e.getLevel() == Level.WARN)
        .extracting(ILoggingEvent::getFormattedMessage)
        .containsExactly(
            "pipeline orders: the ids came round to partition public.outbox_p0 again (id 2001)"
                + " while it still holds 3 row(s) of an earlier round, 1 of them unpublished, that"
                + " retention cannot empty yet (retention.published = 7d): new rows go in beside"
                + " them, and the partition grows as a plain table would until every one is"
                + " published and that old; give the partitions more ids (partitions.size,"
                + " partitions.count) or keep published rows for less time"
                + " (docs/maintenance.md#the-partitioned-layout)");
  }

  private static Round round(DatabaseSettings.Retention policy) throws SQLException {
    try (RetentionJob job = job(policy)) {
      return job.round();
    }
  }

  private static RetentionJob job(DatabaseSettings.Retention policy) {
    return new RetentionJob(
        TABLES,
        "orders",
        policy,
        new DatabaseSettings.Partitions(2, 1000),
        db::connect,
        () -> true,
        null,
        Ticker.SYSTEM);
  }

  private static void insert(int rows, String publishedAt) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      insert(s, rows, publishedAt);
    }
  }

  private static void insert(Statement s, int rows, String publishedAt) throws SQLException {
    s.execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, published_at)"
            + " SELECT 'order', 'k' || g, 'E', '{}', "
            + publishedAt
            + " FROM generate_series(1, "
            + rows
            + ") g");
  }

  private static void sql(String statement) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }
}
