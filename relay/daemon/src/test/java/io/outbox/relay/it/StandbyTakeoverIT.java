package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.ACTIVE;
import static io.outbox.relay.it.RelayFixture.STANDING_BY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two relay processes on one pipeline: one publishes, the other stands by, and takes over within
 * seconds when the first dies, stops, or loses its leader lock. Each instance sets its own {@code
 * application_name}, so that {@link LockSampler} can tell from {@code pg_locks} which one holds
 * claims.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class StandbyTakeoverIT {
  private static final String NOW_ACTIVE = "pipeline it: this instance is now the active one";

  /** Longest wait for a relay process to start (a JVM start on a loaded machine). */
  private static final Duration STARTUP = Duration.ofSeconds(90);

  /** The fixture's standby-check-interval and leadership-check-interval. */
  private static final Duration CHECK_INTERVAL = Duration.ofMillis(250);

  /**
   * The take-over bound after {@code kill -9}: the dead instance's sessions end with its process,
   * and its leader lock with them, so the standby takes the lock at its next standby-check-interval
   * and starts, without waiting for the lease (10 s here) or for open claims; plus {@link
   * Leadership#BUSY_MACHINE} for the new leader's start on a busy machine. A standby that waited
   * for the lease to run out would miss it. After SIGTERM the bound starts when the stopped
   * instance has exited (see {@link #afterExit}). Also the bound on an instance noticing it lost
   * its leader session: its next renewal, every leadership-check-interval.
   */
  private static final Duration TAKE_OVER_BOUND = CHECK_INTERVAL.plus(Leadership.BUSY_MACHINE);

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;
  private OutboxLoad stream;
  private LockSampler locks;
  private RelayProcess a;
  private RelayProcess b;

  @AfterEach
  void tearDown() {
    if (stream != null) {
      stream.close();
    }
    if (locks != null) {
      locks.close();
    }
    relays.killAll();
    if (fx != null) {
      fx.close();
    }
  }

  @Test
  @Tag("quick")
  void secondInstanceStandsByAndTakesOverAfterKill9() throws Exception {
    startActiveAndStandbyUnderLoad("standby_takeover");
    assertThat(b.log()).doesNotContain(NOW_ACTIVE).doesNotContain(ACTIVE);

    long killNanos = System.nanoTime();
    Instant killedAt = Instant.now();
    a.kill9();
    Duration takeOver = awaitActive(b, killedAt, TAKE_OVER_BOUND);
    Set<UUID> committed = keepStreamingThenDrain();
    // Rows marked after B became active are B's (A may still commit a batch as the kill lands).
    Instant bActive = b.loggedAt(ACTIVE, killedAt).orElseThrow();
    Duration firstPublish = Duration.between(killedAt, fx.firstPublishedAfter(bActive));
    List<LockSampler.Sample> samples = locks.stop();

    assertThat(b.loggedAt(STANDING_BY).orElseThrow()).isBefore(killedAt);
    assertThat(b.loggedAt(NOW_ACTIVE).orElseThrow()).isAfter(killedAt);
    assertOnlyAClaimedThenOnlyB(samples, killNanos);
    Deliveries deliveries = assertDelivered(committed);
    System.out.printf(
        "StandbyTakeoverIT: take-over %d ms after kill -9 (first publication %d ms); %d events,"
            + " %d duplicate(s); %d lock samples; take-over bound %d ms%n",
        takeOver.toMillis(),
        firstPublish.toMillis(),
        committed.size(),
        deliveries.duplicates(),
        samples.size(),
        TAKE_OVER_BOUND.toMillis());
  }

  @Test
  void standbyTakesOverWithoutDuplicatesWhenTheActiveStopsGracefully() throws Exception {
    startActiveAndStandbyUnderLoad("standby_handover");

    long stopNanos = System.nanoTime();
    Instant stoppedAt = Instant.now();
    assertThat(a.terminate(Duration.ofSeconds(20))).as("exit code after SIGTERM").contains(0);
    Duration exit = Duration.between(stoppedAt, Instant.now());
    Duration bound = afterExit(exit);
    Duration takeOver = awaitActive(b, stoppedAt, bound);
    Set<UUID> committed = keepStreamingThenDrain();
    List<LockSampler.Sample> samples = locks.stop();

    assertOnlyAClaimedThenOnlyB(samples, stopNanos);
    Deliveries deliveries = assertDelivered(committed);
    assertThat(deliveries.duplicates()).as("a clean hand-over re-sends nothing").isZero();
    System.out.printf(
        "StandbyTakeoverIT: take-over %d ms after SIGTERM of the active one, which exited after %d"
            + " ms (bound %d ms); %d events%n",
        takeOver.toMillis(), exit.toMillis(), bound.toMillis(), committed.size());
  }

  @Test
  void activeThatLosesItsLeaderLockStopsClaimingAndCanBeActiveAgain() throws Exception {
    startActiveAndStandbyUnderLoad("leader_lock_lost");

    // A's leader session dies (an admin, a proxy, a network blip) while A keeps running, and the
    // test takes the leader lock itself, so that neither instance can be active for a while.
    Instant lostAt = Instant.now();
    long idleFrom;
    long idleUntil;
    Instant releasedAt;
    try (Connection holder = fx.db.connect()) {
      long key = takeLeaderLockFrom(holder, "relay-a");
      await()
          .atMost(TAKE_OVER_BOUND)
          .until(
              () -> a.loggedAt("pipeline it: no longer the active instance", lostAt).isPresent());
      Duration stoodDown =
          Duration.between(
              lostAt, a.loggedAt("pipeline it: no longer the active instance", lostAt).get());
      await().atMost(TAKE_OVER_BOUND).until(() -> a.loggedAt(STANDING_BY, lostAt).isPresent());
      System.out.printf(
          "StandbyTakeoverIT: A stood down %d ms after losing its leader session (bound %d ms)%n",
          stoodDown.toMillis(), TAKE_OVER_BOUND.toMillis());
      idleFrom = System.nanoTime();
      int samplesThen = locks.count();
      // A window of at least 25 samples (0.5 s at 20 ms; longer on a busy machine).
      await().atMost(Duration.ofSeconds(30)).until(() -> locks.count() >= samplesThen + 25);
      idleUntil = System.nanoTime();
      releasedAt = Instant.now();
      call(holder, "SELECT pg_advisory_unlock(?)", key);
    }
    await()
        .atMost(Duration.ofSeconds(15))
        .until(
            () ->
                a.loggedAt(ACTIVE, releasedAt)
                    .or(() -> b.loggedAt(ACTIVE, releasedAt))
                    .isPresent());
    RelayProcess winner = a.loggedAt(ACTIVE, releasedAt).isPresent() ? a : b;
    RelayProcess other = winner == a ? b : a;
    long committedThen = stream.committedCount();
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.published() >= committedThen + 500);
    Instant killedAt = Instant.now();
    winner.kill9();
    Duration takeOver = awaitActive(other, killedAt, TAKE_OVER_BOUND);
    Set<UUID> committed = keepStreamingThenDrain();
    List<LockSampler.Sample> samples = locks.stop();

    assertThat(samples)
        .as("nobody claims while the test holds the leader lock")
        .filteredOn(s -> s.nanos() > idleFrom && s.nanos() < idleUntil)
        .hasSizeGreaterThanOrEqualTo(20)
        .allSatisfy(s -> assertThat(s.claiming()).isEmpty());
    assertNeverTwoClaiming(samples);
    assertThat(a.log()).contains("pipeline it: lost the active role");
    Deliveries deliveries = assertDelivered(committed);
    System.out.printf(
        "StandbyTakeoverIT: after a lost leader lock %s became active, then %s took over %d ms"
            + " after kill -9 (bound %d ms); %d events, %d duplicate(s)%n",
        winner.name(),
        other.name(),
        takeOver.toMillis(),
        TAKE_OVER_BOUND.toMillis(),
        committed.size(),
        deliveries.duplicates());
  }

  /** A active, B standing by, a steady stream of events, and A has published some of them. */
  private void startActiveAndStandbyUnderLoad(String name) throws Exception {
    fx = new RelayFixture(name);
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    a = relays.start("a", config("relay-a"));
    await().atMost(STARTUP).until(() -> a.logContains(ACTIVE));
    b = relays.start("b", config("relay-b"));
    await().atMost(STARTUP).until(() -> b.logContains(STANDING_BY));
    locks = LockSampler.start(fx, Duration.ofMillis(20));
    stream = OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(10));
    await().atMost(STARTUP).until(() -> fx.published() >= 1_000);
  }

  /**
   * The take-over bound after a SIGTERM that took {@code exit} until the process exited: it hands
   * over its leader lock by ending its session at the latest as it exits (the in-flight batches
   * finish first), then as after {@code kill -9}.
   */
  private static Duration afterExit(Duration exit) {
    return exit.plus(TAKE_OVER_BOUND);
  }

  /**
   * Waits until {@code relay} became active after {@code t}, asserts it did within {@code bound};
   * returns how long that took.
   */
  private static Duration awaitActive(RelayProcess relay, Instant t, Duration bound) {
    await().atMost(Duration.ofSeconds(30)).until(() -> relay.loggedAt(ACTIVE, t).isPresent());
    Duration took = Duration.between(t, relay.loggedAt(ACTIVE, t).orElseThrow());
    assertThat(took).as("take-over time of " + relay).isLessThan(bound);
    return took;
  }

  /** Lets the stream run until 1,000 more events are published, stops it, waits for the rest. */
  private Set<UUID> keepStreamingThenDrain() throws Exception {
    long committedNow = stream.committedCount();
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.published() >= committedNow + 1_000);
    Set<UUID> committed = stream.stop();
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    return committed;
  }

  private Deliveries assertDelivered(Set<UUID> committed) throws Exception {
    Deliveries deliveries = Deliveries.readAll(fx.topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    RelayFixture.assertFirstDeliveriesInKeyOrder(deliveries.records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts <> 0")).isZero();
    return deliveries;
  }

  /**
   * What the database saw: while A was up, only A held the leader lock and only A had claims open
   * (a claim transaction holds the fence lock shared and its rows locked while its batch is
   * published), B had none; at no moment did both have claims open; afterwards B claimed.
   */
  private static void assertOnlyAClaimedThenOnlyB(List<LockSampler.Sample> samples, long end) {
    List<LockSampler.Sample> before = samples.stream().filter(s -> s.nanos() < end).toList();
    List<LockSampler.Sample> after = samples.stream().filter(s -> s.nanos() > end).toList();
    assertThat(before).allSatisfy(s -> assertThat(s.leader()).containsExactly("relay-a"));
    assertThat(before).allSatisfy(s -> assertThat(s.claiming()).isSubsetOf("relay-a"));
    assertThat(before)
        .as("samples that caught A publishing (else this check proves nothing)")
        .filteredOn(s -> s.claiming().contains("relay-a"))
        .hasSizeGreaterThan(5);
    assertNeverTwoClaiming(samples);
    assertThat(after).filteredOn(s -> s.claiming().contains("relay-b")).isNotEmpty();
    assertThat(after.get(after.size() - 1).leader()).containsExactly("relay-b");
  }

  private static void assertNeverTwoClaiming(List<LockSampler.Sample> samples) {
    assertThat(samples)
        .as("samples in which two instances had claims open")
        .filteredOn(s -> s.claiming().size() > 1)
        .isEmpty();
  }

  /**
   * Queues {@code holder} for the leader lock of {@code applicationName}'s session, then ends that
   * session: a waiter in the queue gets the lock before any {@code pg_try_advisory_lock} of the
   * relays can. Queued first and terminated after (from another session), so that a session that
   * ends at once cannot leave the lock free for a relay's try in between (on a busy machine, the
   * terminate-then-lock of one statement lost that race). Returns the lock key.
   */
  private long takeLeaderLockFrom(Connection holder, String applicationName) throws Exception {
    try (Connection admin = fx.db.connect()) {
      long key;
      int pid;
      try (PreparedStatement ps =
          admin.prepareStatement(
              "SELECT (l.classid::bigint << 32) | l.objid::bigint, l.pid"
                  + " FROM pg_locks l JOIN pg_stat_activity s USING (pid)"
                  + " WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted"
                  + " AND s.application_name = ?")) {
        ps.setString(1, applicationName);
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).as("the leader session of " + applicationName).isTrue();
          key = rs.getLong(1);
          pid = rs.getInt(2);
        }
      }
      int holderPid;
      try (Statement st = holder.createStatement();
          ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
        rs.next();
        holderPid = rs.getInt(1);
      }
      CompletableFuture<Void> locked =
          CompletableFuture.runAsync(
              () -> {
                try {
                  call(holder, "SELECT pg_advisory_lock(?)", key);
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> waitsForTheLock(admin, holderPid, key) || locked.isDone());
      try (PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(?)")) {
        ps.setInt(1, pid);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertThat(rs.getBoolean(1)).as("terminated the leader session").isTrue();
        }
      }
      locked.get(30, TimeUnit.SECONDS);
      return key;
    }
  }

  private static boolean waitsForTheLock(Connection admin, int pid, long key) throws Exception {
    try (PreparedStatement ps =
        admin.prepareStatement(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1"
                + " AND NOT granted AND pid = ? AND ((classid::bigint << 32) | objid::bigint) = ?")) {
      ps.setInt(1, pid);
      ps.setLong(2, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) > 0;
      }
    }
  }

  private static void call(Connection c, String sql, long key) throws Exception {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, key);
      ps.executeQuery().close();
    }
  }

  private String config(String applicationName) {
    return fx.config(
        "lanes = 4, batch-size = 100, database.properties { ApplicationName = \""
            + applicationName
            + "\" }");
  }
}
