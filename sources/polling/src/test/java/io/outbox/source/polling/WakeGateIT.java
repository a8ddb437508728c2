package io.outbox.source.polling;

import static io.outbox.source.polling.PollingFixture.ids;
import static io.outbox.source.polling.PollingFixture.insert;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.Settlement;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The wake gate's races, driven step by step with real sessions: inserts skip their notification
 * while a lane is busy, and a row committed around the moment the relay goes idle is still claimed
 * long before the poll interval (10 s here).
 *
 * <p>Which notifications arrived is read up to a sentinel notification sent after the step
 * (notifications arrive in commit order), not for a fixed time: exact however busy the machine.
 */
class WakeGateIT {

  private static final Duration POLL_INTERVAL = Duration.ofSeconds(10);
  private static final Map<String, String> SLOW_POLL =
      Map.of("poll-interval", POLL_INTERVAL.toMillis() + "ms");

  /**
   * A row that woke a waiting lane is claimed within half the poll interval after its commit, and
   * before the lane's own poll (a poll interval after it went idle) could have found it: a lane
   * that nobody woke finds it only then.
   */
  private static final Duration WOKEN_BOUND = POLL_INTERVAL.dividedBy(2);

  /** Longest wait for a step's precondition (it takes milliseconds; more on a busy machine). */
  private static final Duration STEP = Duration.ofSeconds(30);

  /** How often to look for the gate's lock request, which waits lock-timeout (300 ms there). */
  private static final Duration ASK_POLL = Duration.ofMillis(20);

  private PollingFixture fx;
  private Connection listener;
  private Connection app;

  @BeforeEach
  void setUp() throws Exception {
    fx = PollingFixture.create("wake");
    listener = fx.db.connect();
    try (Statement s = listener.createStatement()) {
      s.execute("LISTEN " + OutboxTables.of("outbox").notifyChannel());
    }
    app = fx.db.connect();
    app.setAutoCommit(false);
  }

  @AfterEach
  void tearDown() throws Exception {
    app.close();
    listener.close();
    fx.close();
  }

  @Test
  void insertsSkipTheNotificationWhileALaneIsBusyAndNotifyAgainOnceItIsIdle() throws Exception {
    PollingSource source = activeSource(1);
    Claim first = busy(source, 0, "1");

    insert(app, "order", "2", "{}", "{}", 0);
    app.commit();
    assertThat(notificationsSoFar()).as("while busy").isEmpty();

    publish(first);
    Claim second = source.claim(0, 10, Duration.ZERO); // the row of "2"
    publish(second);
    source.claim(0, 10, Duration.ZERO).release(); // empty: the lane is idle
    await().atMost(STEP).until(() -> !source.wakeGateHolding());
    insert(app, "order", "3", "{}", "{}", 0);
    app.commit();
    assertThat(notificationsSoFar()).as("once idle").hasSize(1);
  }

  @Test
  void aRowCommittedWhileTheRelayTurnsIdleIsClaimedWithoutWaitingForThePollInterval()
      throws Exception {
    PollingSource source = activeSource(1);
    publish(busy(source, 0, "1"));
    // The application inserts while the lane is busy (no notification) and commits only after
    // the lane found nothing and the gate let go: the gate's barrier waits for this transaction.
    long late = insert(app, "order", "2", "{}", "{}", 0);
    long idle = System.nanoTime();
    Claim empty = source.claim(0, 10, Duration.ZERO);
    assertThat(empty.events()).as("uncommitted row").isEmpty();
    empty.release();
    CompletableFuture<Claim> waiting = claimAsync(source, 0);
    await().atMost(STEP).until(() -> source.waitingLanes() == 1);
    await().atMost(STEP).until(() -> !source.wakeGateHolding());

    long start = System.nanoTime();
    app.commit();
    Claim claim = waiting.get();

    assertThat(ids(claim)).containsExactly(late);
    assertWokenPromptly("the barrier", idle, start);
    assertThat(notificationsSoFar()).as("the barrier woke the lane, not a NOTIFY").isEmpty();
    claim.release();
  }

  @Test
  void aWaitingLaneIsWokenByAnotherLanesClaimWhileInsertsSkipTheirNotification() throws Exception {
    PollingSource source = activeSource(2);
    String key0 = keyOfLane(0);
    String key1 = keyOfLane(1);
    Claim busy = busy(source, 0, key0);
    long idle = System.nanoTime();
    CompletableFuture<Claim> waiting = claimAsync(source, 1);
    await().atMost(STEP).until(() -> source.waitingLanes() == 1);

    long forLane1 = insert(app, "order", key1, "{}", "{}", 0);
    insert(app, "order", key0, "{}", "{}", 0);
    app.commit();
    assertThat(notificationsSoFar()).isEmpty();
    long start = System.nanoTime();
    publish(busy);
    Claim next = source.claim(0, 10, Duration.ZERO); // lane 0 finds its row, wakes lane 1

    Claim claim = waiting.get();
    assertThat(ids(claim)).containsExactly(forLane1);
    assertWokenPromptly("lane 0's claim", idle, start);
    claim.release();
    next.release();
  }

  @Test
  void insertsNotifyWhenTheGatesSessionDiesAndSkipAgainOnceItIsBack() throws Exception {
    PollingSource source = activeSource(1);
    Claim busy = busy(source, 0, "1");

    assertThat(fx.terminate("wake", null)).isEqualTo(1);
    await().atMost(STEP).until(() -> !source.wakeGateHolding());
    insert(app, "order", "2", "{}", "{}", 0);
    app.commit();
    assertThat(notificationsSoFar()).as("the lock went with the session").hasSize(1);

    await().atMost(STEP).until(source::wakeGateHolding); // the lane is busy
    insert(app, "order", "3", "{}", "{}", 0);
    app.commit();
    assertThat(notificationsSoFar()).isEmpty();
    busy.release();
  }

  @Test
  void anEarlierInstancesSessionStillHoldingTheGateIsEnded() throws Exception {
    int key = OutboxTables.of("outbox").wakeLockKey();
    try (Connection stale = fx.db.connect()) {
      try (Statement s = stale.createStatement()) {
        // As the gate session of an earlier instance of the same pipeline names itself.
        s.execute("SET application_name = 'outbox-relay " + PollingFixture.PIPELINE + " wake'");
        s.execute("SELECT pg_advisory_lock(" + key + ", 1)");
      }
      PollingSource source =
          fx.source(
              1, OnPublish.MARK, Map.of("poll-interval", "300ms"), new CopyOnWriteArrayList<>());
      source.activate();
      await().atMost(STEP).until(source::listening);
      fx.insert("order", "1");
      Claim claim = source.claim(0, 10, Duration.ofSeconds(2));

      await().atMost(STEP).until(source::wakeGateHolding);
      assertThat(stale.isValid(2)).as("the stale holder's session").isFalse();
      claim.release();
    }
  }

  @Test
  void anotherPipelinesGateOnTheSameTableIsLeftAlone() throws Exception {
    int key = OutboxTables.of("outbox").wakeLockKey();
    try (Connection other = fx.db.connect()) {
      try (Statement s = other.createStatement()) {
        s.execute("SET application_name = 'outbox-relay another-pipeline wake'");
        s.execute("SELECT pg_advisory_lock(" + key + ", 1)");
      }
      PollingSource source =
          fx.source(
              1, OnPublish.MARK, Map.of("poll-interval", "300ms"), new CopyOnWriteArrayList<>());
      source.activate();
      await().atMost(STEP).until(source::listening);
      fx.insert("order", "1");
      Claim claim = source.claim(0, 10, Duration.ofSeconds(2));
      assertThat(claim.events()).hasSize(1);
      // The busy lane makes the gate ask for the lock; it times out, the gate looks for stale
      // holders of its own pipeline (and must find none), pauses, asks again. Once it asks again,
      // the first look is over.
      Timestamp firstAsk =
          await().pollInterval(ASK_POLL).atMost(STEP).until(this::gateAskingSince, t -> t != null);
      await()
          .pollInterval(ASK_POLL)
          .atMost(STEP)
          .until(this::gateAskingSince, t -> t != null && t.after(firstAsk));
      assertThat(other.isValid(2)).as("the other pipeline's gate session").isTrue();
      claim.release();
    }
  }

  @Test
  void insertsSkipTheNotificationWhileNoRelayListensAndNotifyOnceOneDoes() throws Exception {
    insert(app, "order", "1", "{}", "{}", 0);
    app.commit();
    assertThat(notificationsSoFar()).as("no relay").isEmpty();

    PollingSource source = activeSource(1);
    insert(app, "order", "2", "{}", "{}", 0);
    app.commit();
    assertThat(notificationsSoFar()).as("a relay listens, its lane idle").hasSize(1);

    source.close(STEP);
    insert(app, "order", "3", "{}", "{}", 0);
    app.commit();
    assertThat(notificationsSoFar()).as("the relay stopped").isEmpty();
  }

  @Test
  void aRowCommittedWhileTheRelayStartsListeningIsClaimedWithoutWaitingForThePollInterval()
      throws Exception {
    // Nobody listens: the insert skips its notification, and its transaction stays open while
    // the relay starts, listens and asks for the listener's lock, which waits for it.
    long skipped = insert(app, "order", "1", "{}", "{}", 0);
    PollingSource source = fx.source(1, OnPublish.MARK, SLOW_POLL, new CopyOnWriteArrayList<>());
    source.activate();
    long idle = System.nanoTime();
    CompletableFuture<Claim> waiting = claimAsync(source, 0);
    await().atMost(STEP).until(() -> source.waitingLanes() == 1);

    long start = System.nanoTime();
    app.commit();
    Claim claim = waiting.get();

    assertThat(ids(claim)).containsExactly(skipped);
    assertWokenPromptly("the listener taking its lock", idle, start);
    await().atMost(STEP).until(source::listening);
    assertThat(notificationsSoFar()).as("the row woke the lane without a NOTIFY").isEmpty();
    claim.release();
  }

  /** Inserts a row of {@code key}, claims it on {@code lane} and waits until the gate holds. */
  private Claim busy(PollingSource source, int lane, String key) throws Exception {
    fx.insert("order", key);
    Claim claim = source.claim(lane, 10, Duration.ofSeconds(2));
    assertThat(claim.events()).hasSize(1);
    await().atMost(STEP).until(source::wakeGateHolding);
    notificationsSoFar(); // the one that woke nobody, from the insert above
    return claim;
  }

  private PollingSource activeSource(int lanes) throws Exception {
    PollingSource source =
        fx.source(lanes, OnPublish.MARK, SLOW_POLL, new CopyOnWriteArrayList<>());
    source.activate();
    await().atMost(STEP).until(source::listening);
    return source;
  }

  /**
   * Asserts that the claim of a lane that went idle at {@code idleNanos} was woken by {@code
   * waker}, triggered at {@code startNanos}: within {@link #WOKEN_BOUND} of it, and before the
   * lane's own poll could have found the row. Prints the figures.
   */
  private static void assertWokenPromptly(String waker, long idleNanos, long startNanos) {
    long now = System.nanoTime();
    Duration latency = Duration.ofNanos(now - startNanos);
    Duration sinceIdle = Duration.ofNanos(now - idleNanos);
    System.out.printf(
        "WakeGateIT: woken by %s, claimed %d ms after it (bound %d ms), %d ms after the lane went"
            + " idle (its poll: %d ms)%n",
        waker,
        latency.toMillis(),
        WOKEN_BOUND.toMillis(),
        sinceIdle.toMillis(),
        POLL_INTERVAL.toMillis());
    assertThat(sinceIdle).as("claimed before the lane's own poll").isLessThan(POLL_INTERVAL);
    assertThat(latency).as("claimed after " + waker).isLessThan(WOKEN_BOUND);
  }

  private static void publish(Claim claim) {
    claim.settle(
        claim.events().stream().map(e -> (Settlement) new Settlement.Published(e)).toList());
  }

  private static CompletableFuture<Claim> claimAsync(PollingSource source, int lane) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            // Waits past the poll interval: a lane nobody woke finds the row by polling.
            return source.claim(lane, 10, POLL_INTERVAL.plus(STEP));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
          }
        });
  }

  /** An aggregate id of type {@code order} that the claim puts in {@code lane} of two. */
  private String keyOfLane(int lane) throws SQLException {
    for (int i = 0; ; i++) {
      Object l = fx.value("SELECT (hashtext('order' || chr(31) || ?) & 2147483647) % 2", "k" + i);
      if (((Number) l).intValue() == lane) {
        return "k" + i;
      }
    }
  }

  /**
   * The notifications of every transaction committed so far: those that arrive before a sentinel
   * notification this sends now.
   */
  private List<PGNotification> notificationsSoFar() throws SQLException {
    String channel = OutboxTables.of("outbox").notifyChannel();
    String sentinel = "sentinel " + UUID.randomUUID();
    fx.value("SELECT 1 FROM (SELECT pg_notify(?, ?)) sent", channel, sentinel);
    List<PGNotification> received = new ArrayList<>();
    long deadline = System.nanoTime() + STEP.toNanos();
    while (System.nanoTime() < deadline) {
      int millis = (int) Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
      PGNotification[] batch = listener.unwrap(PGConnection.class).getNotifications(millis);
      for (PGNotification n : batch == null ? new PGNotification[0] : batch) {
        if (sentinel.equals(n.getParameter())) {
          return received;
        }
        received.add(n);
      }
    }
    throw new AssertionError("the sentinel notification did not arrive within " + STEP);
  }

  /**
   * Since when this pipeline's wake gate session waits for the gate lock {@code (key, 1)}; {@code
   * null} while it does not.
   */
  private Timestamp gateAskingSince() throws SQLException {
    return (Timestamp)
        fx.value(
            "SELECT a.query_start FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
                + " WHERE l.locktype = 'advisory' AND NOT l.granted"
                + " AND l.objid = 1 AND l.objsubid = 2"
                + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                + " AND a.application_name = ?",
            "outbox-relay " + PollingFixture.PIPELINE + " wake");
  }
}
