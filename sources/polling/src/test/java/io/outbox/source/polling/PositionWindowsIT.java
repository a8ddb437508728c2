package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.client.OutboxColumns;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.Settlement;
import io.outbox.source.polling.PositionWindows.LanePosition;
import io.outbox.source.postgres.OutboxVerdicts;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The windows of settlement by position on a real PostgreSQL: rows committed out of id order, open
 * and rolled-back transactions, subtransactions, a window larger than a claim, and a settlement
 * from a position that is no longer the lane's.
 */
class PositionWindowsIT {

  private static final String PIPELINE = "orders";
  private static final int LIMIT = 1000;
  private static final TableNames TABLES = TableNames.of("outbox", "outbox_dead_letter");

  private TestDb db;
  private Connection relay;
  private PositionWindows windows;

  @BeforeEach
  void setUp() throws Exception {
    db = TestDb.create("position");
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      // The tx column and the position table are migration V8's; the index on tx will be
      // created by migrate for a pipeline that settles by position.
      s.execute("CREATE INDEX outbox_tx_idx ON outbox (tx)");
    }
    execute(
        "INSERT INTO outbox_relay_leader (pipeline, epoch, holder, holder_pid, acquired_at,"
            + " expires_at) VALUES ('"
            + PIPELINE
            + "', "
            + EPOCH
            + ", 'test', pg_backend_pid(), now(), now())");
    relay = db.connect();
    relay.setAutoCommit(false);
    windows = new PositionWindows(TABLES.outboxTables(), 1);
  }

  @AfterEach
  void tearDown() throws Exception {
    relay.close();
    db.close();
  }

  @Test
  void aRowCommittedLateWithASmallerIdIsReadInTheWindowOfItsCommit() throws Exception {
    LanePosition position = started();
    try (Connection late = db.connect()) {
      late.setAutoCommit(false);
      long a = insert(late, "a"); // takes the smaller id, commits last
      long b = insertCommitted("b");
      assertThat(a).isLessThan(b);

      Claimed first = claim(position);
      assertThat(first.ids).containsExactly(b);
      position = settle(position, first);
      assertThat(claim(position).ids).isEmpty(); // a's transaction is still open

      late.commit();
      Claimed second = claim(position);
      assertThat(second.ids).containsExactly(a);
      position = settle(position, second);
      assertThat(claim(position).ids).isEmpty();
    }
  }

  @Test
  void aLongOpenTransactionHidesOnlyItsOwnRows() throws Exception {
    LanePosition position = started();
    try (Connection open = db.connect()) {
      open.setAutoCommit(false);
      long held = insert(open, "held");
      List<Long> read = new ArrayList<>();
      for (int round = 0; round < 3; round++) {
        long id = insertCommitted("k" + round);
        Claimed claimed = claim(position);
        assertThat(claimed.ids).as("round %d", round).containsExactly(id);
        position = settle(position, claimed);
        read.add(id);
      }
      open.commit();
      Claimed last = claim(position);
      assertThat(last.ids).containsExactly(held);
      settle(position, last);
      assertThat(read).doesNotContain(held);
    }
  }

  @Test
  void rolledBackRowsAreNeverReadAndASubtransactionsRowsGoWithTheirTransaction() throws Exception {
    LanePosition position = started();
    List<Long> kept = new ArrayList<>();
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      insert(c, "gone");
      c.rollback();
      try (Statement s = c.createStatement()) {
        s.execute("SAVEPOINT one");
        kept.add(insert(c, "sub"));
        s.execute("RELEASE SAVEPOINT one");
        s.execute("SAVEPOINT two");
        insert(c, "undone");
        s.execute("ROLLBACK TO SAVEPOINT two");
        kept.add(insert(c, "top"));
      }
      c.commit();
    }
    Claimed claimed = claim(position);
    assertThat(claimed.ids).containsExactly(kept.get(0), kept.get(1));
    position = settle(position, claimed);
    assertThat(claim(position).ids).isEmpty();
  }

  @Test
  void aWindowLargerThanAClaimIsReadInIdOrderEachRowOnce() throws Exception {
    LanePosition position = started();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      for (int t = 0; t < 5; t++) {
        s.execute(
            "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)"
                + " SELECT 'order', (g % 7)::text, 'Created', '{}' FROM generate_series(1, 500) g");
      }
    }
    List<Long> read = new ArrayList<>();
    List<Integer> sizes = new ArrayList<>();
    for (Claimed claimed = claim(position); claimed.ids.length > 0; claimed = claim(position)) {
      sizes.add(claimed.ids.length);
      for (long id : claimed.ids) {
        read.add(id);
      }
      position = settle(position, claimed);
    }
    assertThat(sizes).containsExactly(1000, 1000, 500);
    assertThat(read).hasSize(2500).isSorted().doesNotHaveDuplicates();
  }

  @Test
  void aFirstStartReadsThePendingRowsInItsFirstWindowsAndRowsWithoutTxBecomeExceptions()
      throws Exception {
    long published = insertCommitted("published");
    execute("UPDATE outbox SET published_at = now() WHERE id = " + published);
    long before = insertCommitted("before");
    execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, tx)"
            + " VALUES ('order', 'untracked', 'Created', '{}', NULL)");
    try (Connection open = db.connect()) {
      open.setAutoCommit(false);
      long during = insert(open, "during");
      LanePosition position = started();
      try (Statement s = relay.createStatement();
          ResultSet rs =
              s.executeQuery("SELECT aggregate_id FROM outbox WHERE next_attempt_at IS NOT NULL")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).as("no window reads a row without tx").isEqualTo("untracked");
        assertThat(rs.next()).isFalse();
      }
      relay.commit();
      Claimed first = claim(position);
      assertThat(first.ids)
          .as("the pending row, read by a window, not written")
          .containsExactly(before);
      position = settle(position, first);
      open.commit();
      assertThat(claim(position).ids)
          .as("the row of a transaction open at the start")
          .containsExactly(during);
    }
  }

  @Test
  void aSettlementFromAPositionNoLongerTheLanesChangesNothing() throws Exception {
    LanePosition start = started();
    for (int i = 0; i < 3; i++) {
      insertCommitted("k" + i);
    }
    Claimed first = claim(start, 2);
    Claimed ahead = claim(first.end, 2); // made ahead, before the first was settled
    assertThat(ahead.ids).hasSize(1);

    assertThat(windows.advance(relay, PIPELINE, 0, EPOCH, first.end, ahead.end)).isFalse();
    assertThat(windows.advance(relay, PIPELINE, 0, EPOCH, first.from, first.end)).isTrue();
    assertThat(windows.advance(relay, PIPELINE, 0, EPOCH, first.from, first.end))
        .as("the same settlement again")
        .isFalse();
    assertThat(windows.advance(relay, PIPELINE, 0, EPOCH, ahead.from, ahead.end)).isTrue();
    relay.commit();
    assertThat(windows.read(relay, PIPELINE, 0)).isEqualTo(ahead.end);
    assertThat(claim(ahead.end).ids).isEmpty();
  }

  @Test
  void aWindowIsTurnedOnlyOnceReadToItsEnd() throws Exception {
    LanePosition start = started();
    insertCommitted("a");
    insertCommitted("b");
    LanePosition window = windows.turn(relay, start);
    assertThatThrownBy(() -> windows.turn(relay, window.readTo(window.after() + 1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("not read to its end");
  }

  @Test
  void eachLaneReadsItsOwnRowsFromItsOwnPosition() throws Exception {
    PositionWindows two = new PositionWindows(TABLES.outboxTables(), 2);
    assertThat(two.start(relay, PIPELINE)).isTrue();
    relay.commit();
    LanePosition zero = two.read(relay, PIPELINE, 0);
    LanePosition one = two.read(relay, PIPELINE, 1);
    List<Long> all = new ArrayList<>();
    for (int k = 0; k < 20; k++) {
      all.add(insertCommitted("k" + k));
    }
    long[] ofZero = windowIds(2, two.turn(relay, zero), 0, LIMIT);
    long[] ofOne = windowIds(2, two.turn(relay, one), 1, LIMIT);
    assertThat(ofZero).isNotEmpty();
    assertThat(ofOne).isNotEmpty();
    List<Long> both = new ArrayList<>();
    for (long id : ofZero) {
      both.add(id);
    }
    for (long id : ofOne) {
      both.add(id);
    }
    assertThat(both).containsExactlyInAnyOrderElementsOf(all);
  }

  @Test
  void theClaimMergesDueExceptionsWithTheWindowInIdOrder() throws Exception {
    long pendingAtStart = insertCommitted("e");
    LanePosition position = started();
    exception(pendingAtStart);
    long w1 = insertCommitted("w1");
    long w2 = insertCommitted("w2");
    assertThat(claimed(position, LIMIT, EPOCH))
        .containsExactly(
            row(pendingAtStart, false, false), row(w1, true, false), row(w2, true, false));
    assertThat(claimed(position, 2, EPOCH))
        .as("one limit over both")
        .containsExactly(row(pendingAtStart, false, false), row(w1, true, false));
  }

  @Test
  void aHeldKeysWindowRowsArePassedAndItsWaitingRowLeftOut() throws Exception {
    LanePosition position = started();
    long first = insertCommitted("h");
    execute(
        "UPDATE outbox SET attempts = 1, next_attempt_at = now() + interval '1 hour' WHERE id = "
            + first);
    long later = insertCommitted("h");
    long other = insertCommitted("x");
    assertThat(claimed(position, LIMIT, EPOCH))
        .containsExactly(row(later, true, true), row(other, true, false));

    execute("UPDATE outbox SET next_attempt_at = now() WHERE id = " + first); // its retry is due
    assertThat(claimed(position, LIMIT, EPOCH))
        .containsExactly(
            row(first, false, false), row(later, true, false), row(other, true, false));
  }

  @Test
  void aWindowRowNotYetAvailableIsPassedAndAnExceptionNotYetAvailableLeftOut() throws Exception {
    long exception = insertCommitted("e");
    LanePosition position = started();
    exception(exception);
    execute("UPDATE outbox SET available_at = now() + interval '1 hour' WHERE id = " + exception);
    long later = insertCommitted("later");
    execute("UPDATE outbox SET available_at = now() + interval '1 hour' WHERE id = " + later);
    long now = insertCommitted("now");
    assertThat(claimed(position, LIMIT, EPOCH))
        .containsExactly(row(later, true, true), row(now, true, false));
  }

  /**
   * A row whose transaction began after the claim's (its {@code available_at} defaults to that
   * later start) and committed before the window was cut is due: not passed to become an exception
   * (the full suite's concurrent writers made 28 of 10,000 rows exceptions so).
   */
  @Test
  void aRowWhoseTransactionBeganAfterTheClaimsIsNotTakenForDelayed() throws Exception {
    LanePosition position = started();
    try (Statement s = relay.createStatement()) {
      s.execute("SELECT now()"); // the claim's transaction has begun
    }
    Thread.sleep(20);
    long late = insertCommitted("late");
    assertThat(claimed(position, LIMIT, EPOCH)).containsExactly(row(late, true, false));
  }

  @Test
  void theClaimsRowsAreReadAsEvents() throws Exception {
    LanePosition position = started();
    long id = insertCommitted("k");
    List<OutboxEvent> events = new ArrayList<>();
    positionClaim(
        position, LIMIT, EPOCH, rs -> events.addAll(EventRows.read(rs, PayloadFormat.JSON)));
    assertThat(events)
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.id()).isEqualTo(id);
              assertThat(e.aggregateId()).isEqualTo("k");
              assertThat(e.attempts()).isZero();
            });
  }

  @Test
  void aFencedInstanceClaimsNothing() throws Exception {
    insertCommitted("e");
    LanePosition position = started();
    insertCommitted("w");
    assertThat(claimed(position, LIMIT, EPOCH)).hasSize(2);
    assertThat(claimed(position, LIMIT, EPOCH - 1)).isEmpty();
  }

  /**
   * A fenced instance's claim reads no row, which looks like a window read to its end: moving the
   * position there would pass the window's rows unpublished (found by a soak: an instance thawed
   * after a freeze, its role not yet known lost, stored an empty turn past 21 events).
   */
  @Test
  void aFencedInstanceMovesNoPosition() throws Exception {
    LanePosition from = started();
    long id = insertCommitted("k");
    LanePosition window = windows.turn(relay, from);
    relay.commit();
    assertThat(claimed(window, LIMIT, EPOCH - 1)).as("fenced: reads nothing").isEmpty();

    assertThat(windows.advance(relay, PIPELINE, 0, EPOCH - 1, from, window.readToEnd()))
        .as("fenced: moves nothing")
        .isFalse();
    relay.commit();

    assertThat(windows.read(relay, PIPELINE, 0)).isEqualTo(from);
    relay.commit();
    assertThat(claimed(window, LIMIT, EPOCH)).containsExactly(row(id, true, false));
  }

  @Test
  void aSettlementWritesOnlyWhatThePositionCannotSettle() throws Exception {
    long exception = insertCommitted("e");
    LanePosition from = started();
    exception(exception);
    long published = insertCommitted("w1");
    long retried = insertCommitted("w2");
    long unsettled = insertCommitted("w3");
    long later = insertCommitted("w4");
    execute("UPDATE outbox SET available_at = now() + interval '1 hour' WHERE id = " + later);
    LanePosition window = windows.turn(relay, from);
    relay.commit();
    assertThat(claimed(window, LIMIT, EPOCH))
        .containsExactly(
            row(exception, false, false),
            row(published, true, false),
            row(retried, true, false),
            row(unsettled, true, false),
            row(later, true, true));
    List<OutboxEvent> events = new ArrayList<>();
    positionClaim(
        window, LIMIT, EPOCH, rs -> events.addAll(EventRows.read(rs, PayloadFormat.JSON)));
    LanePosition to = window.readToEnd();

    settle(
        events,
        Set.of(published, retried, unsettled, later),
        List.of(later),
        List.of(
            new Settlement.Published(event(events, exception)),
            new Settlement.Published(event(events, published)),
            new Settlement.Retry(event(events, retried), 1, Duration.ofHours(1), "refused")),
        from,
        to);
    relay.commit();

    assertThat(state(exception)).isEqualTo("published");
    assertThat(state(published)).as("settled by the position: no write").isEqualTo("untouched");
    assertThat(state(retried)).isEqualTo("retry 1");
    assertThat(state(unsettled)).isEqualTo("exception 0");
    assertThat(state(later)).isEqualTo("exception 0");
    assertThat(windows.read(relay, PIPELINE, 0)).isEqualTo(to);
    relay.commit();
    assertThat(claimed(to, LIMIT, EPOCH))
        .as("the row left without a verdict, as an exception; the others not again")
        .containsExactly(row(unsettled, false, false));
  }

  @Test
  void aSettlementFromAPositionThatMovedWritesNothing() throws Exception {
    LanePosition from = started();
    long id = insertCommitted("k");
    LanePosition window = windows.turn(relay, from);
    relay.commit();
    List<OutboxEvent> events = new ArrayList<>();
    positionClaim(
        window, LIMIT, EPOCH, rs -> events.addAll(EventRows.read(rs, PayloadFormat.JSON)));
    LanePosition stale = new LanePosition(from.settled(), from.window(), 1, 1);

    assertThatThrownBy(
            () ->
                settle(
                    events,
                    Set.of(id),
                    List.of(),
                    List.of(
                        new Settlement.Retry(event(events, id), 1, Duration.ofHours(1), "refused")),
                    stale,
                    window.readToEnd()))
        .isInstanceOf(PositionSettlement.PositionMoved.class)
        .hasMessageContaining("no longer the one this claim was made from");
    relay.rollback();
    assertThat(state(id)).isEqualTo("untouched");
    assertThat(windows.read(relay, PIPELINE, 0)).isEqualTo(from);
    relay.commit();
  }

  /** Settles a claim of lane 0 ({@code on-publish = mark}) in the relay's transaction. */
  private void settle(
      List<OutboxEvent> events,
      Set<Long> window,
      List<Long> passed,
      List<Settlement> settlements,
      LanePosition from,
      LanePosition to)
      throws SQLException, PositionSettlement.PositionMoved {
    new PositionSettlement(
            windows,
            new OutboxVerdicts(io.outbox.client.OutboxTables.of("outbox")),
            "\"public\".\"outbox\"",
            OutboxColumns.DEFAULT)
        .settle(relay, PIPELINE, 0, EPOCH, events, window, passed, settlements, from, to);
  }

  private static OutboxEvent event(List<OutboxEvent> events, long id) {
    return events.stream().filter(e -> e.id() == id).findFirst().orElseThrow();
  }

  /** published, retry N, exception N (next_attempt_at set, attempts N) or untouched. */
  private String state(long id) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT published_at IS NOT NULL, next_attempt_at > now() + interval '1 minute',"
                    + " next_attempt_at IS NOT NULL, attempts FROM outbox WHERE id = "
                    + id)) {
      assertThat(rs.next()).isTrue();
      if (rs.getBoolean(1)) {
        return "published";
      }
      if (rs.getBoolean(2)) {
        return "retry " + rs.getInt(4);
      }
      return rs.getBoolean(3) ? "exception " + rs.getInt(4) : "untouched";
    }
  }

  @Test
  void aWindowsBoundsAreFoundThroughTheTxIndexNotPastEverySettledRow() throws Exception {
    execute(
        "DO $$ BEGIN FOR i IN 1..100 LOOP"
            + " INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)"
            + " SELECT 'order', (g % 100)::text, 'E', '{}' FROM generate_series(1, 1000) g;"
            + " COMMIT; END LOOP; END $$");
    String settled;
    try (Statement s = relay.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_current_snapshot()::text")) {
      rs.next();
      settled = rs.getString(1);
    }
    relay.commit();
    long first = insertCommitted("w1");
    long last = insertCommitted("w2");
    execute("VACUUM ANALYZE outbox");
    try (Statement s = relay.createStatement()) {
      // As the claim's sessions start (ClaimSessionPlans).
      s.execute("SET enable_seqscan = off");
      s.execute("SET enable_sort = off");
      s.execute("SET jit = off");
    }
    List<String> plan = new ArrayList<>();
    try (PreparedStatement ps =
        relay.prepareStatement("EXPLAIN (COSTS OFF) " + windows.turnStatement())) {
      ps.setString(1, settled);
      ps.setString(2, settled);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          plan.add(rs.getString(1));
        }
      }
    }
    assertThat(String.join("\n", plan))
        .as("the window's rows read through the index on tx")
        .contains("outbox_tx_idx")
        .doesNotContain("outbox_pkey");
    LanePosition window = windows.turn(relay, new LanePosition(settled, settled, 0, 0));
    relay.commit();
    assertThat(window.after()).isEqualTo(first - 1);
    assertThat(window.last()).isEqualTo(last);
  }

  /** What a claim read and the positions it goes from and to. */
  private record Claimed(long[] ids, LanePosition from, LanePosition end) {}

  private static final long EPOCH = 7;

  private static List<Long> row(long id, boolean inWindow, boolean passed) {
    return List.of(id, inWindow ? 1L : 0L, passed ? 1L : 0L);
  }

  /** The position claim's rows from {@code from}'s window (turned when read to its end). */
  private List<List<Long>> claimed(LanePosition from, int limit, long epoch) throws SQLException {
    List<List<Long>> rows = new ArrayList<>();
    positionClaim(
        from,
        limit,
        epoch,
        rs -> {
          while (rs.next()) {
            rows.add(
                List.of(
                    rs.getLong("id"),
                    rs.getBoolean("in_window") ? 1L : 0L,
                    rs.getBoolean("passed") ? 1L : 0L));
          }
        });
    return rows;
  }

  private interface Rows {
    void read(ResultSet rs) throws SQLException;
  }

  private void positionClaim(LanePosition from, int limit, long epoch, Rows rows)
      throws SQLException {
    LanePosition window = from.exhausted() ? windows.turn(relay, from) : from;
    positionClaim(1, window, 0, limit, epoch, rows);
  }

  /** Runs the position claim of {@code lane} (of {@code lanes}) on {@code window} as it is. */
  private void positionClaim(
      int lanes, LanePosition window, int lane, int limit, long epoch, Rows rows)
      throws SQLException {
    String sql = new OutboxSql(TABLES, PayloadFormat.JSON, lanes).positionClaim;
    try (PreparedStatement ps = relay.prepareStatement(sql)) {
      int i = 1;
      if (lanes > 1) {
        ps.setInt(i++, lane);
      }
      ps.setInt(i++, limit);
      ps.setLong(i++, window.after());
      ps.setLong(i++, window.last());
      ps.setString(i++, window.window());
      ps.setString(i++, window.settled());
      if (lanes > 1) {
        ps.setInt(i++, lane);
      }
      ps.setInt(i++, limit);
      ps.setString(i++, PIPELINE);
      ps.setLong(i++, epoch);
      ps.setInt(i, limit);
      try (ResultSet rs = ps.executeQuery()) {
        rows.read(rs);
      }
    }
    relay.commit();
  }

  /** The ids of the window rows the position claim of {@code lane} reads from {@code window}. */
  private long[] windowIds(int lanes, LanePosition window, int lane, int limit)
      throws SQLException {
    List<Long> ids = new ArrayList<>();
    positionClaim(
        lanes,
        window,
        lane,
        limit,
        EPOCH,
        rs -> {
          while (rs.next()) {
            if (rs.getBoolean("in_window")) {
              ids.add(rs.getLong("id"));
            }
          }
        });
    return ids.stream().mapToLong(Long::longValue).toArray();
  }

  /** Makes row {@code id} an exception, due now, as a release or a passed window row would. */
  private void exception(long id) throws SQLException {
    execute("UPDATE outbox SET next_attempt_at = now() WHERE id = " + id);
  }

  private void execute(String statement) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }

  private LanePosition started() throws SQLException {
    assertThat(windows.start(relay, PIPELINE)).isTrue();
    relay.commit();
    LanePosition position = windows.read(relay, PIPELINE, 0);
    assertThat(position).isNotNull();
    assertThat(windows.read(relay, PIPELINE, 0)).isEqualTo(position);
    relay.commit();
    return position;
  }

  private Claimed claim(LanePosition from) throws SQLException {
    return claim(from, LIMIT);
  }

  /** A claim as the polling source will make it: the window's rest, or the next window's start. */
  private Claimed claim(LanePosition from, int limit) throws SQLException {
    LanePosition window = from.exhausted() ? windows.turn(relay, from) : from;
    long[] ids = windowIds(1, window, 0, limit);
    LanePosition end = ids.length < limit ? window.readToEnd() : window.readTo(ids[ids.length - 1]);
    return new Claimed(ids, from, end);
  }

  private LanePosition settle(LanePosition from, Claimed claimed) throws SQLException {
    assertThat(claimed.from).isEqualTo(from);
    if (claimed.ids.length == 0) {
      return from; // nothing read: nothing stored
    }
    assertThat(windows.advance(relay, PIPELINE, 0, EPOCH, from, claimed.end)).isTrue();
    relay.commit();
    return claimed.end;
  }

  private long insertCommitted(String key) throws SQLException {
    try (Connection c = db.connect()) {
      return insert(c, key);
    }
  }

  private static long insert(Connection c, String key) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)"
                    + " VALUES ('order', '"
                    + key
                    + "', 'Created', '{}') RETURNING id")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
