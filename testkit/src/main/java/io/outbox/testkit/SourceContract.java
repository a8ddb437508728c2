package io.outbox.testkit;

import static io.outbox.testkit.ContractClaims.ids;
import static io.outbox.testkit.ContractClaims.publishAll;
import static io.outbox.testkit.ContractClaims.settle;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Source;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What docs/design.md's failure classes and the {@link Source} and {@link Claim} javadoc require of
 * every source, as one suite each source's integration tests extend with a small subclass that
 * makes a fresh outbox database per test and sources on it. The tests are {@code final}: a source
 * passes them as they are; where a source legitimately behaves otherwise it says so through a hook
 * below, never by skipping a test.
 *
 * <p>Where sources differ, and how the suite allows for it: a source that streams rows (the CDC
 * source) may hand a lane's rows over in several claims as they arrive, and refuses a second claim
 * on a lane whose claim is still open; the suite therefore collects rows over as many claims as
 * they take, and where it needs them all at once ({@link ContractClaims#round}) it releases
 * incomplete rounds and claims again. The time a row takes to become claimable, how long "nothing
 * comes" is watched, and how soon a standby takes over are the hooks {@link #appearWithin()},
 * {@link #quietFor()} and {@link #takeOverWithin()}; activation itself (a CDC source waits for its
 * replication slot) is not bounded by the suite. The polling and the CDC source both pass every
 * test with the default hooks.
 *
 * <p>The suite writes rows with plain SQL on {@link #connect()} ({@link #insert}) and settles
 * claims as the pipeline would.
 */
public abstract class SourceContract {

  /** The lanes of every source the suite makes. */
  protected static final int LANES = 2;

  private final List<Source> sources = new CopyOnWriteArrayList<>();
  private final ExecutorService background =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "source-contract");
            t.setDaemon(true);
            return t;
          });

  /**
   * A new, not yet activated source of the test's pipeline on the test's database (each test gets
   * an empty outbox), with {@code lanes} lanes and short intervals. Every call is another instance
   * of the same pipeline; the suite closes them.
   */
  protected abstract Source newSource(int lanes) throws Exception;

  /** A new connection to the test's database; the suite closes it. */
  protected abstract Connection connect() throws SQLException;

  /** The outbox table the sources read. */
  protected String outboxTable() {
    return "outbox";
  }

  /** The dead-letter table the sources move dead letters to. */
  protected String deadLetterTable() {
    return "outbox_dead_letter";
  }

  /** The bound within which a committed or due row can be claimed. */
  protected Duration appearWithin() {
    return Duration.ofSeconds(10);
  }

  /** How long a test watches claims to see that something does not come. */
  protected Duration quietFor() {
    return Duration.ofSeconds(1);
  }

  /** The bound within which a standby becomes active once the active instance closed. */
  protected Duration takeOverWithin() {
    return Duration.ofSeconds(30);
  }

  /** Called after each test, once its sources are closed: drop the test's database. */
  protected void cleanUp() throws Exception {}

  @AfterEach
  final void closeSourcesAndCleanUp() throws Exception {
    background.shutdownNow();
    for (Source s : sources) {
      s.close(Duration.ofSeconds(10));
    }
    cleanUp();
  }

  // ---- the contract ----

  @Test
  final void claimsCommittedRowsOnlyAndARowCommittedLateStillComes() throws Exception {
    Source source = activeSource();
    try (Connection open = connect();
        Connection rolledBack = connect()) {
      open.setAutoCommit(false);
      long late = insert(open, "late", 1); // a smaller id than "now"'s, committed after it
      rolledBack.setAutoCommit(false);
      insert(rolledBack, "rolled-back", 1);
      rolledBack.rollback();
      List<Long> now = commit("now", 1);

      assertThat(ids(claims(source).collect(1))).isEqualTo(now);
      assertThat(quiet(source)).as("an uncommitted row is not claimed").isEmpty();

      open.commit();
      List<OutboxEvent> after = claims(source).collect(1);
      assertThat(ids(after)).as("no id high-water mark skips it").containsExactly(late);
    }
    assertThat(quiet(source)).as("a rolled-back row is never claimed").isEmpty();
  }

  @Test
  final void keepsKeyOrderWithinAndAcrossClaimsAndLanesNeverShareAnEvent() throws Exception {
    Source source = activeSource();
    Map<String, List<Long>> written = new LinkedHashMap<>();
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      for (int seq = 1; seq <= 6; seq++) {
        for (String key : List.of("a", "b", "c")) {
          written.computeIfAbsent(key, k -> new ArrayList<>()).add(insert(c, key, seq));
        }
      }
      c.commit();
    }
    Map<String, Integer> laneOfKey = new HashMap<>();
    List<OutboxEvent> delivered = new ArrayList<>();
    long deadline = System.nanoTime() + appearWithin().toNanos();
    while (delivered.size() < 18 && System.nanoTime() < deadline) {
      for (int lane = 0; lane < LANES; lane++) {
        Claim claim = source.claim(lane, 4, Duration.ofMillis(200));
        List<OutboxEvent> events = claim.events();
        assertThat(events.size()).as("maxEvents").isLessThanOrEqualTo(4);
        assertThat(ids(events)).as("a claim is in id order").isSorted();
        for (OutboxEvent e : events) {
          Integer first = laneOfKey.putIfAbsent(e.aggregateId(), lane);
          assertThat(first == null ? lane : first)
              .as("key %s stays on one lane", e.aggregateId())
              .isEqualTo(lane);
        }
        delivered.addAll(events);
        publishAll(claim);
      }
    }
    assertThat(ids(delivered)).as("each event once").doesNotHaveDuplicates().hasSize(18);
    for (Map.Entry<String, List<Long>> key : written.entrySet()) {
      assertThat(ids(delivered.stream().filter(e -> e.aggregateId().equals(key.getKey())).toList()))
          .as("key %s in id order across claims", key.getKey())
          .containsExactlyElementsOf(key.getValue());
    }
  }

  @Test
  final void aReleasedClaimComesBackWhole() throws Exception {
    Source source = activeSource();
    List<Long> ids = commit("a", 1, 2, 3);
    ids.addAll(commit("b", 1));
    List<Claim> first = claims(source).round(ids);
    first.forEach(Claim::release);

    List<OutboxEvent> again = claims(source).collect(4);
    assertThat(ids(again)).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(ids(again.stream().filter(e -> e.aggregateId().equals("a")).toList()))
        .isEqualTo(ids.subList(0, 3));
    assertThat(again).allSatisfy(e -> assertThat(e.attempts()).isZero());
  }

  @Test
  final void settledEventsNeverComeBackNotEvenToTheNextInstance() throws Exception {
    Source source = activeSource();
    commit("a", 1, 2);
    commit("b", 1);
    assertThat(claims(source).collect(3)).hasSize(3);
    assertThat(quiet(source)).isEmpty();
    assertThat(pending()).isZero();

    source.close(Duration.ofSeconds(10));
    Source next = activeSource();
    assertThat(quiet(next)).as("after a hand-over").isEmpty();
  }

  @Test
  final void aRetryComesBackAfterItsDueTimeAndHoldsItsKeyUntilThen() throws Exception {
    Source source = activeSource();
    List<Long> k = commit("k", 1, 2);
    List<Long> other = commit("other", 1);
    Duration delay = Duration.ofSeconds(1);
    List<Claim> round = claims(source).round(List.of(k.get(0), k.get(1), other.get(0)));
    long settledAt = System.nanoTime();
    for (Claim claim : round) {
      claim.settle(
          settle(
              claim,
              e ->
                  e.id() == k.get(0)
                      ? new Settlement.Retry(e, 1, delay, "contract: try again")
                      : e.id() == k.get(1)
                          ? new Settlement.Release(e)
                          : new Settlement.Published(e)));
    }
    assertThat(attempts(k.get(0))).isEqualTo(1);

    List<OutboxEvent> early = claims(source).quiet(Duration.ofMillis(300));
    assertThat(early).as("k's later event waits behind its retry").isEmpty();
    List<OutboxEvent> back = claims(source).collect(2);
    long waited = System.nanoTime() - settledAt;
    assertThat(ids(back)).as("the retry first, then k's next").isEqualTo(k);
    assertThat(back.get(0).attempts()).isEqualTo(1);
    assertThat(Duration.ofNanos(waited)).as("not before it is due").isGreaterThanOrEqualTo(delay);
    assertThat(ids(back)).doesNotContainAnyElementsOf(other);
  }

  @Test
  final void aDeadLetterLeavesTheOutboxAndReleasesItsKey() throws Exception {
    Source source = activeSource();
    List<Long> d = commit("d", 1, 2);
    Object eventId = value("SELECT event_id FROM " + outboxTable() + " WHERE id = ?", d.get(0));
    for (Claim claim : claims(source).round(d)) {
      claim.settle(
          settle(
              claim,
              e ->
                  e.id() == d.get(0)
                      ? new Settlement.DeadLetter(
                          e, Settlement.DeadLetterReason.PERMANENT, 1, "contract: refused")
                      : new Settlement.Release(e)));
    }
    assertThat(count("SELECT count(*) FROM " + outboxTable() + " WHERE id = ?", d.get(0))).isZero();
    assertThat(
            count(
                "SELECT count(*) FROM "
                    + deadLetterTable()
                    + " WHERE event_id = ? AND reason = 'permanent'",
                eventId))
        .as("moved to the dead-letter table")
        .isEqualTo(1);

    assertThat(ids(claims(source).collect(1))).containsExactly(d.get(1));
    assertThat(quiet(source)).isEmpty();
  }

  @Test
  final void aStandbyGetsNothingWhileTheActiveOwnsItsClaimsAndCloseReleasesThem() throws Exception {
    Source active = activeSource();
    List<Long> ids = commit("a", 1, 2);
    ids.addAll(commit("b", 1, 2));
    claims(active).round(ids); // held open

    Source standby = newSource(LANES);
    sources.add(standby);
    Future<?> activation =
        background.submit(
            () -> {
              standby.activate();
              return null;
            });
    assertThatThrownBy(() -> activation.get(quietFor().toMillis(), TimeUnit.MILLISECONDS))
        .as("a second instance stays standby while the first is active")
        .isInstanceOf(TimeoutException.class);

    active.close(Duration.ofSeconds(10)); // its claims are still open: close releases them
    activation.get(takeOverWithin().toMillis(), TimeUnit.MILLISECONDS);
    List<OutboxEvent> taken = claims(standby).collect(4);
    assertThat(ids(taken)).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(ids(taken.stream().filter(e -> e.aggregateId().equals("a")).toList()))
        .isEqualTo(ids.subList(0, 2));
    assertThat(pending()).isZero();
  }

  // ---- what subclasses may change ----

  /**
   * Inserts one row of key {@code key} on {@code c} (in its transaction, if any) and returns its
   * id. The default writes the columns of the relay's migration.
   */
  protected long insert(Connection c, String key, int seq) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO "
                + outboxTable()
                + " (aggregate_type, aggregate_id, event_type, payload)"
                + " VALUES ('contract', ?, 'Happened', ?::jsonb) RETURNING id")) {
      ps.setString(1, key);
      ps.setString(2, "{\"seq\": " + seq + "}");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Rows not yet settled as published (nor dead-lettered). */
  protected long pending() throws SQLException {
    return count("SELECT count(*) FROM " + outboxTable() + " WHERE published_at IS NULL");
  }

  // ---- helpers ----

  private Source activeSource() throws Exception {
    Source s = newSource(LANES);
    sources.add(s);
    s.activate();
    return s;
  }

  /** Commits one row per {@code seq} of {@code key} in one transaction; their ids, in order. */
  private List<Long> commit(String key, int... seqs) throws SQLException {
    List<Long> ids = new ArrayList<>();
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      for (int seq : seqs) {
        ids.add(insert(c, key, seq));
      }
      c.commit();
    }
    return ids;
  }

  /** Claims from {@code source} as the suite does, within {@link #appearWithin()}. */
  private ContractClaims claims(Source source) {
    return new ContractClaims(source, LANES, appearWithin());
  }

  /** What {@code source}'s lanes hand over for {@link #quietFor()}: what must not come. */
  private List<OutboxEvent> quiet(Source source) throws InterruptedException {
    return claims(source).quiet(quietFor());
  }

  private int attempts(long id) throws SQLException {
    return (int) count("SELECT attempts FROM " + outboxTable() + " WHERE id = ?", id);
  }

  private long count(String sql, Object... params) throws SQLException {
    return ((Number) value(sql, params)).longValue();
  }

  private Object value(String sql, Object... params) throws SQLException {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getObject(1);
      }
    }
  }
}
