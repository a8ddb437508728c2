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
  void aClaimStillOpenOnTheOldLeaderKeepsItsLaneFromTheNewOne() throws Exception {
    long first = fx.insert("order", "1");
    long second = fx.insert("order", "1"); // same key: same lane
    a.activate();
    int lane = laneWith(a, first);
    Claim old = a.claim(lane, 1, Duration.ZERO);
    assertThat(ids(old)).containsExactly(first);
    CompletableFuture<Void> standby = CompletableFuture.runAsync(() -> activate(b));
    await().atMost(Duration.ofSeconds(5)).until(() -> rolesOfB.contains(Role.STANDBY));

    assertThat(fx.terminateLeader()).isEqualTo(1);
    await().atMost(Duration.ofSeconds(5)).until(standby::isDone);
    standby.join();

    // The overlap window: A's claim is still open, so B gets nothing from that lane...
    assertThat(b.claim(lane, 10, Duration.ZERO).events()).isEmpty();
    // ...until A settles it (its own transaction is alive), then B continues with the key.
    old.settle(List.of(new Settlement.Published(old.events().get(0))));
    Claim next = b.claim(lane, 10, Duration.ofSeconds(2));
    assertThat(ids(next)).containsExactly(second);
    next.release();
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
