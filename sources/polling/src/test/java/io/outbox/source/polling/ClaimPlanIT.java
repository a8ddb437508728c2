package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.PayloadFormat;
import io.outbox.source.postgres.OutboxVerdicts;
import io.outbox.source.postgres.Retention;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plans of the hot statements on a large outbox that keeps its published rows (on-publish =
 * mark): 1,000,000 rows, 99% published, 1,000 pending rows waiting for a retry.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS) // one large table for every test
class ClaimPlanIT {

  private static final Logger log = LoggerFactory.getLogger(ClaimPlanIT.class);
  private static final TableNames TABLES = TableNames.of("outbox", "outbox_dead_letter");
  private PollingFixture fx;

  @BeforeAll
  void setUp() throws Exception {
    fx = PollingFixture.create("plan");
    fx.execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, published_at)"
            + " SELECT 'order', (g % 50000)::text, 'Created', '{\"n\": 1}'::jsonb,"
            + " CASE WHEN g % 100 = 0 THEN NULL ELSE now() END"
            + " FROM generate_series(1, 1000000) g");
    fx.execute(
        "UPDATE outbox SET attempts = 1, next_attempt_at = now() + interval '1 hour'"
            + " WHERE published_at IS NULL AND id % 1000 = 0");
    // The claim reads only while its epoch is the pipeline's current one.
    fx.execute(
        "INSERT INTO outbox_relay_leader (pipeline, epoch, holder, holder_pid, acquired_at,"
            + " expires_at) VALUES ('plan', 7, 'test', pg_backend_pid(), now(), now())");
    fx.execute("VACUUM ANALYZE outbox");
  }

  @AfterAll
  void tearDown() throws Exception {
    fx.close();
  }

  @Test
  void theClaimScansThePendingIndexAndReadsTheRetryingIndexOnce() throws Exception {
    for (int lanes : new int[] {1, 4}) {
      OutboxSql sql = new OutboxSql(TABLES, PayloadFormat.JSON, lanes);
      Binder binder =
          ps -> {
            int i = 1;
            if (lanes > 1) {
              ps.setInt(i++, 1);
            }
            ps.setString(i++, "plan");
            ps.setLong(i++, 7);
            ps.setInt(i, 500);
          };
      String cold = explain(sql.claim, binder);
      String plan = explain(sql.claim, binder);
      log.info("claim of 500 rows, {} lane(s), first run:\n{}", lanes, cold);
      log.info("claim of 500 rows, {} lane(s), second run:\n{}", lanes, plan);
      assertThat(plan)
          .contains("Index Scan using outbox_pending_idx on outbox o")
          .containsPattern("Index Scan using outbox_retrying_idx on outbox b .*loops=1\\)")
          .contains("CTE held")
          .doesNotContain("Seq Scan on outbox")
          .doesNotContain("Anti Join")
          // The epoch check runs once per claim, not per row.
          .contains("InitPlan")
          .contains("rows=500 loops=1");
    }
  }

  @Test
  void settlementsFindTheirRowsByPrimaryKey() throws Exception {
    OutboxVerdicts verdicts = new OutboxVerdicts(TABLES.outboxTables());
    List<Long> ids =
        fx.column("SELECT id FROM outbox WHERE published_at IS NULL LIMIT 500").stream()
            .map(Long.class::cast)
            .toList();
    Connection c = fx.sql();
    Object[] idArray = ids.toArray();
    String mark =
        explain(
            verdicts.markPublishedStatement(),
            ps -> ps.setArray(1, c.createArrayOf("bigint", idArray)));
    String retry =
        explain(
            verdicts.retryStatement(),
            ps -> {
              ps.setArray(1, c.createArrayOf("bigint", idArray));
              ps.setArray(2, c.createArrayOf("int", ids.stream().map(x -> 1).toArray()));
              ps.setArray(3, c.createArrayOf("text", ids.stream().map(x -> "e").toArray()));
              ps.setArray(4, c.createArrayOf("bigint", ids.stream().map(x -> 1000L).toArray()));
            });
    String dead =
        explain(
            verdicts.deadLetterStatement(),
            ps -> {
              ps.setArray(1, c.createArrayOf("bigint", idArray));
              ps.setArray(2, c.createArrayOf("text", ids.stream().map(x -> "permanent").toArray()));
              ps.setArray(3, c.createArrayOf("int", ids.stream().map(x -> 1).toArray()));
              ps.setArray(4, c.createArrayOf("text", ids.stream().map(x -> "e").toArray()));
              ps.setString(5, "orders");
            });
    log.info("mark 500:\n{}\nretry 500:\n{}\ndead-letter 500:\n{}", mark, retry, dead);
    for (String plan : List.of(mark, retry, dead)) {
      assertThat(plan)
          .contains("Index Scan using outbox_pkey")
          .doesNotContain("Seq Scan on outbox");
    }
  }

  @Test
  void retentionFindsOldPublishedRowsThroughItsPartialIndex() throws Exception {
    Retention retention = Retention.of(TABLES.outboxTables());
    // Every published row is older than 1 ms: a full batch of 1,000 to delete.
    Binder binder =
        ps -> {
          ps.setLong(1, 1);
          ps.setInt(2, 1000);
        };
    explain(retention.deletePublishedSql(), binder);
    String plan = explain(retention.deletePublishedSql(), binder);
    log.info("retention delete of 1000 published rows:\n{}", plan);
    assertThat(plan)
        .contains("Index Scan using outbox_published_idx on outbox")
        .contains("Index Scan using outbox_pkey on outbox")
        .contains("LockRows")
        .doesNotContain("Seq Scan on outbox");
  }

  /** Binds the statement's parameters. */
  private interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  /** EXPLAIN ANALYZE in a transaction that is rolled back (it takes locks and writes). */
  private String explain(String statement, Binder binder) throws Exception {
    Connection c = fx.sql();
    c.setAutoCommit(false);
    try (PreparedStatement ps = c.prepareStatement("EXPLAIN (ANALYZE, BUFFERS) " + statement)) {
      binder.bind(ps);
      List<String> lines = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          lines.add(rs.getString(1));
        }
      }
      return String.join("\n", lines);
    } finally {
      c.rollback();
      c.setAutoCommit(true);
    }
  }
}
