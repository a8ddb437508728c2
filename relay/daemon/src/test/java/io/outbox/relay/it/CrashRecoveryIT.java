package io.outbox.relay.it;

import io.outbox.testkit.KafkaTestSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code kill -9} of the relay process in the middle of a backlog: nothing committed is lost, a
 * re-sent event is the same message again, and no key's first deliveries go backwards.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@Tag("quick")
class CrashRecoveryIT {
  private static final int EVENTS = 30_000;
  private static final int KEYS = 300;

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;

  @Test
  void killDashNineMidBacklogLosesNothing() throws Exception {
    killTwiceMidBacklog(new RelayFixture("crash_recovery"), "lanes = 4, batch-size = 500");
  }

  /**
   * Settling by position, a kill between a batch's publish and its position's commit leaves the
   * position where it was: the batch is claimed and sent again, nothing is skipped.
   */
  @Test
  void killDashNineMidBacklogSettlingByPositionLosesNothing() throws Exception {
    killTwiceMidBacklog(
        RelayFixture.byPosition("crash_recovery_position"),
        "lanes = 4, batch-size = 500, on-publish = position");
  }

  private void killTwiceMidBacklog(RelayFixture fixture, String pipeline) throws Exception {
    fx = relays.closeAfter(fixture);
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    List<UUID> committed = OutboxLoad.backlog(fx, EVENTS, KEYS);
    String config = fx.config(pipeline);

    // Two crashes, at about 30 % and 60 % of the backlog, then a relay that finishes it.
    List<String> kills = new ArrayList<>();
    for (int threshold : new int[] {EVENTS * 3 / 10, EVENTS * 6 / 10}) {
      String name = "crashing-" + kills.size();
      long atKill = relays.killMidBacklog(name, config, fx, threshold, EVENTS / 20, EVENTS);
      kills.add(name + " killed at " + atKill + " published");
    }
    relays.finish("finishing", config, fx);

    Deliveries deliveries = fx.assertDeliveredInKeyOrder(committed);
    System.out.printf(
        "CrashRecoveryIT (%s): %s; %d records for %d events, %d duplicate(s)%n",
        pipeline, kills, deliveries.records.size(), EVENTS, deliveries.duplicates());
  }
}
