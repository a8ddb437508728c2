package io.outbox.source.polling;

import static io.outbox.source.polling.PollingFixture.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.SourceException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class LeadershipIT {

  private PollingFixture fx;
  private final List<Role> rolesOfA = new CopyOnWriteArrayList<>();
  private final List<Role> rolesOfB = new CopyOnWriteArrayList<>();
  private PollingSource a;
  private PollingSource b;

  @BeforeEach
  void setUp() throws Exception {
    fx = PollingFixture.create("leader");
    a = fx.source(2, OnPublish.MARK, Map.of(), rolesOfA);
    b = fx.source(2, OnPublish.MARK, Map.of(), rolesOfB);
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  @Test
  void onlyOneInstanceIsActiveAndTheOtherTakesOverWhenItCloses() throws Exception {
    a.activate();
    assertThat(rolesOfA).containsExactly(Role.ACTIVE);

    CompletableFuture<Void> standby = CompletableFuture.runAsync(() -> activate(b));
    await().atMost(Duration.ofSeconds(5)).until(() -> rolesOfB.equals(List.of(Role.STANDBY)));
    assertThat(standby).isNotDone();

    a.close(Duration.ofSeconds(5));

    await().atMost(Duration.ofSeconds(5)).until(standby::isDone);
    standby.join();
    assertThat(rolesOfB).containsExactly(Role.STANDBY, Role.ACTIVE);
    long id = fx.insert("order", "1");
    assertThat(claimedAnywhere(b)).containsExactly(id);
  }

  @Test
  void whenTheLeaderSessionDiesTheStandbyTakesOverAndTheOldOneStopsClaiming() throws Exception {
    a.activate();
    CompletableFuture<Void> standby = CompletableFuture.runAsync(() -> activate(b));
    await().atMost(Duration.ofSeconds(5)).until(() -> rolesOfB.contains(Role.STANDBY));

    assertThat(fx.terminateLeader()).isEqualTo(1);

    await().atMost(Duration.ofSeconds(5)).until(standby::isDone);
    standby.join();
    assertThat(rolesOfB).containsExactly(Role.STANDBY, Role.ACTIVE);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> rolesOfA.equals(List.of(Role.ACTIVE, Role.STANDBY)));
    assertThatThrownBy(() -> a.claim(0, 10, Duration.ZERO))
        .isInstanceOf(LeadershipLostException.class);
  }

  @Test
  void aTakeOverWaitsForTheOldLeadersOpenClaimToSettle() throws Exception {
    long first = fx.insert("order", "1");
    long second = fx.insert("order", "1"); // same key: same lane
    a.activate();
    int lane = laneWith(a, first);
    Claim old = a.claim(lane, 1, Duration.ZERO);
    assertThat(ids(old)).containsExactly(first);
    CompletableFuture<Void> standby = CompletableFuture.runAsync(() -> activate(b));
    await().atMost(Duration.ofSeconds(5)).until(() -> rolesOfB.contains(Role.STANDBY));

    assertThat(fx.terminateLeader()).isEqualTo(1);
    // B holds the leader lock now, but starts only once A's claim ended (the fence):
    // A's own transaction is alive and settles.
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(1)).until(() -> true);
    assertThat(standby).isNotDone();
    old.settle(List.of(new Settlement.Published(old.events().get(0))));

    await().atMost(Duration.ofSeconds(5)).until(standby::isDone);
    standby.join();
    Claim next = b.claim(lane, 10, Duration.ofSeconds(2));
    assertThat(ids(next)).containsExactly(second);
    next.release();
  }

  @Test
  void aTakeOverEndsAClaimTheOldLeaderLeftOpenAndClaimsItsRowsAgain() throws Exception {
    long first = fx.insert("order", "1");
    a.activate();
    int lane = laneWith(a, first);
    Claim old = a.claim(lane, 1, Duration.ZERO);
    CompletableFuture<Void> standby = CompletableFuture.runAsync(() -> activate(b));
    await().atMost(Duration.ofSeconds(5)).until(() -> rolesOfB.contains(Role.STANDBY));

    assertThat(fx.terminateLeader()).isEqualTo(1);

    // A is frozen with its claim open: after the fence wait B ends that claim's session.
    await().atMost(Duration.ofSeconds(15)).until(standby::isDone);
    standby.join();
    assertThatThrownBy(() -> old.settle(List.of(new Settlement.Published(old.events().get(0)))))
        .isInstanceOf(SourceException.class);
    Claim again = b.claim(lane, 10, Duration.ofSeconds(2));
    assertThat(ids(again)).containsExactly(first);
    again.release();
  }

  /**
   * Issue #12, point 3: the old active publishes a batch claimed ahead (its lane's lock went with
   * the batch before it) and has claimed the next one ahead; its leader session ends; the new
   * active must not publish e6 before e5, which the old one settles as a retry meanwhile.
   */
  @Test
  void aTakeOverNeverClaimsALaterEventAheadOfAnEarlierOneSetToRetry() throws Exception {
    long e4 = fx.insert("order", "1");
    long e5 = fx.insert("order", "1");
    long e6 = fx.insert("order", "1");
    a.activate();
    int lane = laneWith(a, e4);
    Claim first = a.claim(lane, 1, Duration.ZERO);
    assertThat(ids(first)).containsExactly(e4);
    Claim inFlight = a.claimAhead(lane, 1, first);
    assertThat(ids(inFlight)).containsExactly(e5);
    first.settle(List.of(new Settlement.Published(first.events().get(0)))); // lane lock released
    Claim ahead = a.claimAhead(lane, 1, inFlight);
    assertThat(ids(ahead)).containsExactly(e6);
    CompletableFuture<Void> standby = CompletableFuture.runAsync(() -> activate(b));
    await().atMost(Duration.ofSeconds(5)).until(() -> rolesOfB.contains(Role.STANDBY));

    assertThat(fx.terminateLeader()).isEqualTo(1);
    CompletableFuture<Claim> newClaim =
        standby.thenApply(
            done -> {
              try {
                return b.claim(lane, 10, Duration.ZERO);
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    // The old active settles e5 as a retry and gives e6 back, as its lane does on a retry.
    inFlight.settle(
        List.of(new Settlement.Retry(inFlight.events().get(0), 1, Duration.ofMinutes(1), "boom")));
    ahead.release();

    Claim claimed = newClaim.get(15, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(ids(claimed)).doesNotContain(e6).isEmpty();
    claimed.release();
  }

  /** The lane whose claim returns the row (the source and the database agree on lanes). */
  private static int laneWith(PollingSource source, long id) throws Exception {
    for (int lane = 0; lane < 2; lane++) {
      Claim c = source.claim(lane, 100, Duration.ZERO);
      boolean found = ids(c).contains(id);
      c.release();
      if (found) {
        return lane;
      }
    }
    throw new AssertionError("row " + id + " in no lane");
  }

  private static List<Long> claimedAnywhere(PollingSource source) throws Exception {
    List<Long> ids = new java.util.ArrayList<>();
    for (int lane = 0; lane < 2; lane++) {
      Claim c = source.claim(lane, 100, Duration.ZERO);
      ids.addAll(ids(c));
      c.release();
    }
    return ids;
  }

  private static void activate(PollingSource source) {
    try {
      source.activate();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
