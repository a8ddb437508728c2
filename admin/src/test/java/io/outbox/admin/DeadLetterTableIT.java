package io.outbox.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.admin.DeadLetterTable.ReplayCount;
import io.outbox.client.OutboxTables;
import io.outbox.schema.Migrator;
import io.outbox.testkit.Sql;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** List, replay and purge of dead letters against the real PostgreSQL. */
class DeadLetterTableIT {

  static final OutboxTables TABLES = OutboxTables.of("app.outbox", "app.dead");
  private static final DeadLetterTable DEAD = DeadLetterTable.of(TABLES);
  static TestDatabase db;

  @BeforeAll
  static void migrate() {
    db = TestDatabase.create("schema_dead_letters");
    new Migrator(TABLES).migrate(db.url(), db.user(), db.password());
  }

  @AfterAll
  static void dropDatabase() {
    db.close();
  }

  @BeforeEach
  void empty() throws SQLException {
    sql("TRUNCATE app.outbox, app.dead");
  }

  @Test
  void listsWithEveryFilterOldestFirst() throws SQLException {
    UUID a = dead(1, "orders", "k1", "OrderCreated", "permanent", "2026-01-01T00:00:00Z");
    UUID b = dead(2, "orders", "k1", "OrderPaid", "max-attempts", "2026-01-02T00:00:00Z");
    UUID c = dead(3, "orders", "k2", "OrderPaid", "max-attempts", "2026-01-03T00:00:00Z");
    dead(4, "payments", "k3", "OrderPaid", "permanent", "2026-01-04T00:00:00Z");

    try (Connection conn = db.connect()) {
      assertThat(ids(DEAD.list(conn, DeadLetterFilter.all("orders"), 0))).containsExactly(a, b, c);
      assertThat(ids(DEAD.list(conn, DeadLetterFilter.all("orders"), 2))).containsExactly(a, b);
      assertThat(ids(DEAD.list(conn, filter(List.of(), "max-attempts", List.of(), null), 0)))
          .containsExactly(b, c);
      assertThat(ids(DEAD.list(conn, filter(List.of(), null, List.of("OrderCreated"), null), 0)))
          .containsExactly(a);
      assertThat(
              ids(
                  DEAD.list(
                      conn,
                      filter(List.of(), null, List.of(), Instant.parse("2026-01-02T00:00:00Z")),
                      0)))
          .containsExactly(b, c);
      assertThat(ids(DEAD.list(conn, filter(List.of(c, a), null, List.of(), null), 0)))
          .containsExactly(a, c);
      assertThat(DEAD.count(conn, filter(List.of(), "max-attempts", List.of("OrderPaid"), null)))
          .isEqualTo(2);
      DeadLetter first = DEAD.list(conn, DeadLetterFilter.all("orders"), 1).get(0);
      assertThat(first.aggregateType()).isEqualTo("order");
      assertThat(first.aggregateId()).isEqualTo("k1");
      assertThat(first.reason()).isEqualTo("permanent");
      assertThat(first.attempts()).isEqualTo(3);
      assertThat(first.lastError()).isEqualTo("boom 1");
      assertThat(first.deadLetteredAt()).isEqualTo(Instant.parse("2026-01-01T00:00:00Z"));
    }
  }

  @Test
  void replayKeepsTheEventAndResetsItsAttempts() throws SQLException {
    UUID a = dead(10, "orders", "k1", "OrderCreated", "max-attempts", "2026-01-01T00:00:00Z");
    UUID b = dead(11, "orders", "k1", "OrderPaid", "permanent", "2026-01-02T00:00:00Z");
    UUID other = dead(12, "orders", "k2", "OrderPaid", "permanent", "2026-01-03T00:00:00Z");
    UUID pending = UUID.randomUUID();
    sql(
        "INSERT INTO app.outbox (event_id, aggregate_type, aggregate_id, event_type, payload)"
            + " VALUES ('"
            + pending
            + "', 'order', 'k1', 'Later', '{}')");

    ReplayCount count;
    try (Connection conn = db.connect()) {
      count = DEAD.replay(conn, filter(List.of(b, a), null, List.of(), null), false);
    }

    assertThat(count).isEqualTo(new ReplayCount(2, 0));
    assertThat(
            strings(
                "SELECT event_id || ' ' || aggregate_type || ' ' || aggregate_id || ' '"
                    + " || event_type || ' ' || coalesce(destination, '-') || ' ' || payload::text"
                    + " || ' ' || headers::text || ' ' || created_at::text || ' ' || attempts"
                    + " || ' ' || coalesce(next_attempt_at::text, '-')"
                    + " || ' ' || coalesce(last_error, '-') || ' ' || coalesce(published_at::text,"
                    + " '-') FROM app.outbox WHERE event_type <> 'Later' ORDER BY id"))
        .containsExactly(
            a
                + " order k1 OrderCreated topic-10 {\"n\": 10} {\"h\": \"10\"}"
                + " 2025-12-01 00:00:00+00 0 - - -",
            b
                + " order k1 OrderPaid topic-11 {\"n\": 11} {\"h\": \"11\"}"
                + " 2025-12-01 00:00:00+00 0 - - -");
    assertThat(strings("SELECT event_id::text FROM app.dead")).containsExactly(other.toString());
    assertThat(strings("SELECT event_id::text FROM app.outbox ORDER BY id"))
        .as("new ids: after the key's events already in the outbox, in their original order")
        .containsExactly(pending.toString(), a.toString(), b.toString());
  }

  @Test
  void replaySkipsEventsAlreadyInTheOutboxAndLeavesThemDeadLettered() throws SQLException {
    UUID a = dead(20, "orders", "k1", "OrderCreated", "permanent", "2026-01-01T00:00:00Z");
    UUID b = dead(21, "orders", "k2", "OrderCreated", "permanent", "2026-01-01T00:00:00Z");
    sql(
        "INSERT INTO app.outbox (event_id, aggregate_type, aggregate_id, event_type, payload)"
            + " VALUES ('"
            + b
            + "', 'order', 'k2', 'Again', '{}')");

    ReplayCount dry;
    ReplayCount real;
    try (Connection conn = db.connect()) {
      dry = DEAD.replay(conn, DeadLetterFilter.all("orders"), true);
      assertThat(strings("SELECT count(*)::text FROM app.dead")).containsExactly("2");
      real = DEAD.replay(conn, DeadLetterFilter.all("orders"), false);
    }

    assertThat(dry).isEqualTo(new ReplayCount(1, 1));
    assertThat(real).isEqualTo(new ReplayCount(1, 1));
    assertThat(strings("SELECT event_id::text FROM app.dead")).containsExactly(b.toString());
    assertThat(strings("SELECT event_id || ' ' || event_type FROM app.outbox ORDER BY id"))
        .containsExactly(b + " Again", a + " OrderCreated");
  }

  @Test
  void dryRunsChangeNothing() throws SQLException {
    dead(30, "orders", "k1", "OrderCreated", "permanent", "2026-01-01T00:00:00Z");
    dead(31, "orders", "k1", "OrderCreated", "max-attempts", "2026-01-01T00:00:00Z");
    List<String> before = strings("SELECT d::text FROM app.dead d ORDER BY id");
    long identityBefore = identity();

    try (Connection conn = db.connect()) {
      assertThat(DEAD.replay(conn, DeadLetterFilter.all("orders"), true))
          .isEqualTo(new ReplayCount(2, 0));
      assertThat(DEAD.purge(conn, DeadLetterFilter.all("orders"), true)).isEqualTo(2);
    }

    assertThat(strings("SELECT d::text FROM app.dead d ORDER BY id")).isEqualTo(before);
    assertThat(strings("SELECT count(*)::text FROM app.outbox")).containsExactly("0");
    assertThat(identity()).as("no outbox id consumed").isEqualTo(identityBefore);
  }

  @Test
  void purgeDeletesOnlyWhatMatchesAndCountsIt() throws SQLException {
    dead(40, "orders", "k1", "OrderCreated", "permanent", "2026-01-01T00:00:00Z");
    UUID keep = dead(41, "orders", "k1", "OrderPaid", "max-attempts", "2026-01-01T00:00:00Z");
    dead(42, "orders", "k2", "OrderCreated", "permanent", "2026-01-05T00:00:00Z");
    UUID otherPipeline = dead(43, "payments", "k2", "OrderCreated", "permanent", "2026-01-01Z");

    int purged;
    int again;
    try (Connection conn = db.connect()) {
      purged = DEAD.purge(conn, filter(List.of(), "permanent", List.of(), null), false);
      again = DEAD.purge(conn, filter(List.of(), "permanent", List.of(), null), false);
    }

    assertThat(purged).isEqualTo(2);
    assertThat(again).isZero();
    assertThat(strings("SELECT event_id::text FROM app.dead ORDER BY id"))
        .containsExactly(keep.toString(), otherPipeline.toString());
  }

  @Test
  void aFailingReplayRollsBackEveryRow() throws SQLException {
    dead(50, "orders", "k1", "OrderCreated", "permanent", "2026-01-01T00:00:00Z");
    dead(51, "orders", "k1", "OrderPaid", "permanent", "2026-01-01T00:00:00Z");
    // The second row cannot go back: its aggregate_type violates a constraint of the outbox.
    sql("ALTER TABLE app.outbox ADD CONSTRAINT no_paid CHECK (event_type <> 'OrderPaid')");
    try (Connection conn = db.connect()) {
      try {
        DEAD.replay(conn, DeadLetterFilter.all("orders"), false);
        throw new AssertionError("the replay should have failed");
      } catch (SQLException expected) {
        assertThat(expected.getMessage()).contains("no_paid");
      }
      assertThat(conn.getAutoCommit()).isTrue();
    } finally {
      sql("ALTER TABLE app.outbox DROP CONSTRAINT no_paid");
    }
    assertThat(strings("SELECT count(*)::text FROM app.outbox")).containsExactly("0");
    assertThat(strings("SELECT count(*)::text FROM app.dead")).containsExactly("2");
  }

  private static DeadLetterFilter filter(
      List<UUID> ids, String reason, List<String> types, Instant since) {
    return new DeadLetterFilter("orders", ids, reason, types, since, null);
  }

  private static List<UUID> ids(List<DeadLetter> rows) {
    return rows.stream().map(DeadLetter::eventId).toList();
  }

  /** A dead letter with id {@code id}, created 2025-12-01, dead-lettered at {@code at}. */
  private static UUID dead(
      long id, String pipeline, String key, String type, String reason, String at)
      throws SQLException {
    UUID eventId = UUID.randomUUID();
    try (Connection c = db.connect();
        PreparedStatement s =
            c.prepareStatement(
                "INSERT INTO app.dead (id, event_id, aggregate_type, aggregate_id, event_type,"
                    + " destination, payload, headers, created_at, available_at, attempts,"
                    + " next_attempt_at, last_error, dead_lettered_at, reason, pipeline)"
                    + " VALUES (?, ?, 'order', ?, ?, ?, ?::jsonb, ?::jsonb,"
                    + " '2025-12-01T00:00:00Z', '2025-12-01T00:00:00Z', 3,"
                    + " '2025-12-02T00:00:00Z', ?, ?::timestamptz, ?, ?)")) {
      s.setLong(1, id);
      s.setObject(2, eventId);
      s.setString(3, key);
      s.setString(4, type);
      s.setString(5, "topic-" + id);
      s.setString(6, "{\"n\": " + id + "}");
      s.setString(7, "{\"h\": \"" + id + "\"}");
      s.setString(8, "boom " + (id % 10));
      s.setString(9, at);
      s.setString(10, reason);
      s.setString(11, pipeline);
      s.executeUpdate();
    }
    return eventId;
  }

  private static long identity() throws SQLException {
    return Long.parseLong(
        strings("SELECT coalesce(last_value, 0)::text FROM pg_sequences WHERE schemaname = 'app'")
            .get(0));
  }

  private static void sql(String sql) throws SQLException {
    Sql.execute(db::connect, "SET TIME ZONE 'UTC'", sql);
  }

  private static List<String> strings(String sql) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("SET TIME ZONE 'UTC'");
      List<String> out = new ArrayList<>();
      try (ResultSet rs = s.executeQuery(sql)) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
      return out;
    }
  }
}
