package io.outbox.source.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.Ticker;
import io.outbox.schema.Migrator;
import io.outbox.source.postgres.RetentionJob.Round;
import io.outbox.testkit.Sql;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Retention against the real PostgreSQL: only rows old enough go, in batches, never waiting. */
class RetentionIT {

  private static final OutboxTables TABLES = OutboxTables.of("app.outbox", "app.dead");
  private static final Retention RETENTION = Retention.of(TABLES);
  private static final DatabaseSettings.Retention POLICY =
      new DatabaseSettings.Retention(
          Duration.ofDays(7), Duration.ofDays(30), 2, Duration.ofMillis(100));
  private static TestDatabase db;

  @BeforeAll
  static void migrate() {
    db = TestDatabase.create("schema_retention");
    new Migrator(TABLES).migrate(db.url(), db.user(), db.password());
  }

  @AfterAll
  static void dropDatabase() {
    db.close();
  }

  /**
   * Outbox: 5 rows published 8-12 days ago (old), 2 published 6 days ago, 2 pending created 60 days
   * ago. Dead letters of orders: 3 from 31-33 days ago (old), 1 from 29 days ago; 1 old one of
   * another pipeline.
   */
  @BeforeEach
  void rows() throws SQLException {
    sql("TRUNCATE app.outbox, app.dead");
    sql(
        "INSERT INTO app.outbox (aggregate_type, aggregate_id, event_type, payload, created_at,"
            + " published_at) SELECT 'order', 'old-' || g, 'E', '{}', now() - interval '60 days',"
            + " now() - (7 + g) * interval '1 day' FROM generate_series(1, 5) g");
    sql(
        "INSERT INTO app.outbox (aggregate_type, aggregate_id, event_type, payload, published_at)"
            + " SELECT 'order', 'young-' || g, 'E', '{}', now() - interval '6 days'"
            + " FROM generate_series(1, 2) g");
    sql(
        "INSERT INTO app.outbox (aggregate_type, aggregate_id, event_type, payload, created_at,"
            + " available_at) SELECT 'order', 'pending-' || g, 'E', '{}',"
            + " now() - interval '60 days', now() - interval '60 days' FROM generate_series(1, 2) g");
    sql(
        "INSERT INTO app.dead (id, event_id, aggregate_type, aggregate_id, event_type, payload,"
            + " created_at, available_at, attempts, dead_lettered_at, reason, pipeline)"
            + " SELECT g, gen_random_uuid(), 'order', 'k' || g, 'E', '{}', now(), now(), 1,"
            + " now() - (CASE WHEN g <= 3 THEN 30 + g WHEN g = 4 THEN 29 ELSE 40 END)"
            + " * interval '1 day', 'permanent', CASE WHEN g = 5 THEN 'payments' ELSE 'orders' END"
            + " FROM generate_series(1, 5) g");
  }

  @Test
  void deletesOnlyRowsOlderThanTheirAgeInBatches() throws SQLException {
    List<Integer> published = new ArrayList<>();
    List<Integer> dead = new ArrayList<>();
    try (Connection c = db.connect()) {
      for (int i = 0; i < 4; i++) {
        published.add(RETENTION.deletePublished(c, Duration.ofDays(7), 2));
        dead.add(RETENTION.deleteDeadLetters(c, "orders", Duration.ofDays(30), 2));
      }
    }

    assertThat(published).containsExactly(2, 2, 1, 0);
    assertThat(dead).containsExactly(2, 1, 0, 0);
    assertThat(strings("SELECT aggregate_id FROM app.outbox ORDER BY id"))
        .containsExactly("young-1", "young-2", "pending-1", "pending-2");
    assertThat(strings("SELECT id::text FROM app.dead ORDER BY id")).containsExactly("4", "5");
  }

  @Test
  void oldestGoFirst() throws SQLException {
    try (Connection c = db.connect()) {
      assertThat(RETENTION.deletePublished(c, Duration.ofDays(7), 2)).isEqualTo(2);
    }

    assertThat(strings("SELECT aggregate_id FROM app.outbox WHERE aggregate_id LIKE 'old-%'"))
        .containsExactlyInAnyOrder("old-1", "old-2", "old-3");
  }

  @Test
  void aRoundDeletesEverythingOldInBatchesAndNothingElse() throws SQLException {
    Round round;
    try (RetentionJob job =
        new RetentionJob(
            TABLES,
            "orders",
            POLICY,
            DatabaseSettings.Partitions.PLAIN,
            db::connect,
            () -> true,
            null,
            Ticker.SYSTEM)) {
      round = job.round();
    }

    assertThat(round).isEqualTo(new Round(5, 3));
    assertThat(strings("SELECT count(*)::text FROM app.outbox")).containsExactly("4");
    assertThat(strings("SELECT count(*)::text FROM app.dead")).containsExactly("2");
  }

  @Test
  void zeroKeepsThatKindForever() throws SQLException {
    DatabaseSettings.Retention deadOnly =
        new DatabaseSettings.Retention(
            Duration.ZERO, Duration.ofDays(30), 100, Duration.ofMinutes(1));
    try (RetentionJob job =
        new RetentionJob(
            TABLES,
            "orders",
            deadOnly,
            DatabaseSettings.Partitions.PLAIN,
            db::connect,
            () -> true,
            null,
            Ticker.SYSTEM)) {
      assertThat(job.round()).isEqualTo(new Round(0, 3));
    }
    assertThat(strings("SELECT count(*)::text FROM app.outbox")).containsExactly("9");
  }

  @Test
  void aRowLockedByAnotherTransactionIsSkippedWithoutWaiting() throws SQLException {
    try (Connection holder = db.connect();
        Statement s = holder.createStatement()) {
      holder.setAutoCommit(false);
      s.executeQuery("SELECT id FROM app.outbox WHERE aggregate_id = 'old-5' FOR UPDATE").close();
      try (Connection c = db.connect();
          Statement timeout = c.createStatement()) {
        timeout.execute("SET lock_timeout = '2s'"); // fails the test instead of hanging it
        assertThat(RETENTION.deletePublished(c, Duration.ofDays(7), 100)).isEqualTo(4);
      }
      holder.rollback();
    }
    assertThat(strings("SELECT aggregate_id FROM app.outbox WHERE aggregate_id LIKE 'old-%'"))
        .containsExactly("old-5");
  }

  @Test
  void theJobRunsRoundsOnlyWhileActiveAndStopsOnClose() throws SQLException {
    AtomicBoolean active = new AtomicBoolean(false);
    AtomicInteger asked = new AtomicInteger();
    RetentionJob job =
        RetentionJob.start(
            TABLES,
            "orders",
            POLICY,
            DatabaseSettings.Partitions.PLAIN,
            db::connect,
            () -> {
              asked.incrementAndGet();
              return active.get();
            },
            new OutstandingClaims(1, "orders"),
            Ticker.SYSTEM);
    try {
      await().atMost(Duration.ofSeconds(10)).until(() -> asked.get() >= 3);
      assertThat(strings("SELECT count(*)::text FROM app.outbox")).containsExactly("9");

      active.set(true);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> strings("SELECT count(*)::text FROM app.outbox").equals(List.of("4")));
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> strings("SELECT count(*)::text FROM app.dead").equals(List.of("2")));
    } finally {
      job.close(Duration.ofSeconds(5));
    }
    assertThat(job.running()).isFalse();
  }

  @Test
  void ageIsWrittenInTheLargestWholeUnit() {
    assertThat(RetentionJob.age(Duration.ofDays(7))).isEqualTo("7d");
    assertThat(RetentionJob.age(Duration.ofHours(36))).isEqualTo("36h");
    assertThat(RetentionJob.age(Duration.ofMillis(1500))).isEqualTo("1500ms");
    assertThat(RetentionJob.age(Duration.ZERO)).isEqualTo("never");
  }

  private static void sql(String sql) throws SQLException {
    Sql.execute(db::connect, sql);
  }

  private static List<String> strings(String sql) throws SQLException {
    return Sql.strings(db::connect, sql);
  }
}
