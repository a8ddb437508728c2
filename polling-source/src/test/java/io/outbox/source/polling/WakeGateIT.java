package io.outbox.source.polling;

import static io.outbox.source.polling.PollingFixture.ids;
import static io.outbox.source.polling.PollingFixture.insert;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.Settlement;
import io.outbox.schema.OutboxTables;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
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
 */
class WakeGateIT {

  private static final Map<String, String> SLOW_POLL = Map.of("poll-interval", "10s");
  private static final Duration FAST = Duration.ofSeconds(1);
  private static final int QUIET_MILLIS = 300;

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
    assertThat(notifications(QUIET_MILLIS)).as("while busy").isEmpty();

    publish(first);
    Claim second = source.claim(0, 10, Duration.ZERO); // the row of "2"
    publish(second);
    source.claim(0, 10, Duration.ZERO).release(); // empty: the lane is idle
    await().atMost(Duration.ofSeconds(5)).until(() -> !source.wakeGateHolding());
    insert(app, "order", "3", "{}", "{}", 0);
    app.commit();
    assertThat(notifications(5_000)).as("once idle").hasSize(1);
  }

  @Test
  void aRowCommittedWhileTheRelayTurnsIdleIsClaimedWithoutWaitingForThePollInterval()
      throws Exception {
    PollingSource source = activeSource(1);
    publish(busy(source, 0, "1"));
    // The application inserts while the lane is busy (no notification) and commits only after
    // the lane found nothing and the gate let go: the gate's barrier waits for this transaction.
    long late = insert(app, "order", "2", "{}", "{}", 0);
    Claim empty = source.claim(0, 10, Duration.ZERO);
    assertThat(empty.events()).as("uncommitted row").isEmpty();
    empty.release();
    CompletableFuture<Claim> waiting = claimAsync(source, 0);
    await().atMost(Duration.ofSeconds(5)).until(() -> source.waitingLanes() == 1);
    await().atMost(Duration.ofSeconds(5)).until(() -> !source.wakeGateHolding());

    long start = System.nanoTime();
    app.commit();
    Claim claim = waiting.get();

    assertThat(ids(claim)).containsExactly(late);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(FAST);
    assertThat(notifications(QUIET_MILLIS)).as("the barrier woke the lane, not a NOTIFY").isEmpty();
    claim.release();
  }

  @Test
  void aWaitingLaneIsWokenByAnotherLanesClaimWhileInsertsSkipTheirNotification() throws Exception {
    PollingSource source = activeSource(2);
    String key0 = keyOfLane(0);
    String key1 = keyOfLane(1);
    Claim busy = busy(source, 0, key0);
    CompletableFuture<Claim> waiting = claimAsync(source, 1);
    await().atMost(Duration.ofSeconds(5)).until(() -> source.waitingLanes() == 1);

    long forLane1 = insert(app, "order", key1, "{}", "{}", 0);
    insert(app, "order", key0, "{}", "{}", 0);
    app.commit();
    assertThat(notifications(QUIET_MILLIS)).isEmpty();
    long start = System.nanoTime();
    publish(busy);
    Claim next = source.claim(0, 10, Duration.ZERO); // lane 0 finds its row, wakes lane 1

    Claim claim = waiting.get();
    assertThat(ids(claim)).containsExactly(forLane1);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(FAST);
    claim.release();
    next.release();
  }

  @Test
  void insertsNotifyWhenTheGatesSessionDiesAndSkipAgainOnceItIsBack() throws Exception {
    PollingSource source = activeSource(1);
    Claim busy = busy(source, 0, "1");

    assertThat(fx.terminate("wake", null)).isEqualTo(1);
    await().atMost(Duration.ofSeconds(5)).until(() -> !source.wakeGateHolding());
    insert(app, "order", "2", "{}", "{}", 0);
    app.commit();
    assertThat(notifications(5_000)).as("the lock went with the session").hasSize(1);

    await().atMost(Duration.ofSeconds(10)).until(source::wakeGateHolding); // the lane is busy
    insert(app, "order", "3", "{}", "{}", 0);
    app.commit();
    assertThat(notifications(QUIET_MILLIS)).isEmpty();
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
      await().atMost(Duration.ofSeconds(5)).until(source::listening);
      fx.insert("order", "1");
      Claim claim = source.claim(0, 10, Duration.ofSeconds(2));

      await().atMost(Duration.ofSeconds(10)).until(source::wakeGateHolding);
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
      await().atMost(Duration.ofSeconds(5)).until(source::listening);
      fx.insert("order", "1");
      Claim claim = source.claim(0, 10, Duration.ofSeconds(2));
      assertThat(claim.events()).hasSize(1);
      Thread.sleep(1_500);
      assertThat(other.isValid(2)).as("the other pipeline's gate session").isTrue();
      claim.release();
    }
  }

  /** Inserts a row of {@code key}, claims it on {@code lane} and waits until the gate holds. */
  private Claim busy(PollingSource source, int lane, String key) throws Exception {
    fx.insert("order", key);
    Claim claim = source.claim(lane, 10, Duration.ofSeconds(2));
    assertThat(claim.events()).hasSize(1);
    await().atMost(Duration.ofSeconds(5)).until(source::wakeGateHolding);
    notifications(QUIET_MILLIS); // the one that woke nobody, from the insert above
    return claim;
  }

  private PollingSource activeSource(int lanes) throws Exception {
    PollingSource source =
        fx.source(lanes, OnPublish.MARK, SLOW_POLL, new CopyOnWriteArrayList<>());
    source.activate();
    await().atMost(Duration.ofSeconds(5)).until(source::listening);
    return source;
  }

  private static void publish(Claim claim) {
    claim.settle(
        claim.events().stream().map(e -> (Settlement) new Settlement.Published(e)).toList());
  }

  private static CompletableFuture<Claim> claimAsync(PollingSource source, int lane) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return source.claim(lane, 10, Duration.ofSeconds(5));
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

  private List<PGNotification> notifications(int millis) throws SQLException {
    PGNotification[] received = listener.unwrap(PGConnection.class).getNotifications(millis);
    return received == null ? List.of() : Arrays.asList(received);
  }
}
