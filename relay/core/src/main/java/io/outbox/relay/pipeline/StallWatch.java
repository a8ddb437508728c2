package io.outbox.relay.pipeline;

import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.Ticker;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * While the lanes run: a lane that made no progress for {@code stall-timeout} (stuck in a database
 * call, or paused by a sink this instance cannot reach) makes the pipeline offer the active role to
 * a standby ({@link Source#yieldLeadership}), again every {@code stall-timeout} while the stall
 * lasts (a standby may connect meanwhile).
 *
 * <p>A sink stall is offered once per outage of this instance's sink: when the standby it was
 * handed to cannot reach the broker either, it hands the role back, and this instance keeps it
 * until its sink has come back (or ten stall timeouts passed) instead of handing it to and fro.
 * Runs on the supervisor's thread.
 */
final class StallWatch {
  // The pipeline's logger: these lines were Pipeline's and operators' log settings name it.
  private static final Logger log = LoggerFactory.getLogger(Pipeline.class);

  private final String pipeline;
  private final Duration stallTimeout;
  private final Source source;
  private final SinkGate gate;
  private final PipelineState state;
  private final Ticker ticker;
  // Whether the role was offered for the stall in progress, and when.
  private boolean offered;
  private long offeredAt;
  // The sink gate's reopenings when this instance last gave the role up for a sink stall, and when.
  private long sinkYieldReopenings = -1;
  private long sinkYieldNanos;

  StallWatch(
      String pipeline,
      Duration stallTimeout,
      Source source,
      SinkGate gate,
      PipelineState state,
      Ticker ticker) {
    this.pipeline = pipeline;
    this.ticker = ticker;
    this.stallTimeout = stallTimeout;
    this.source = source;
    this.gate = gate;
    this.state = state;
  }

  /** Watches {@code lanes} until they stop claiming or their threads all ended. */
  void watch(List<Thread> threads, List<LaneProgress> lanes) {
    long limit = stallTimeout.toNanos();
    offered = false;
    while (state.keepClaiming() && threads.stream().anyMatch(Thread::isAlive)) {
      if (check(lanes)) {
        return;
      }
      if (!state.awaitWhileClaiming(Math.max(1, Math.min(1000, limit / 4_000_000)))) {
        return;
      }
    }
  }

  /**
   * Looks at the lanes once, as of the ticker's now: offers the active role for a lane stalled
   * {@code stall-timeout}, once per stall-timeout while the stall lasts.
   *
   * @return whether the role was given up (the watch ends)
   */
  boolean check(List<LaneProgress> lanes) {
    long limit = stallTimeout.toNanos();
    long now = ticker.nanoTime();
    LaneProgress stalled = null;
    for (LaneProgress lane : lanes) {
      if (lane.stalledFor(now) >= limit) {
        stalled = lane;
        break;
      }
    }
    if (stalled == null) {
      offered = false;
      return false;
    }
    if (offered && now - offeredAt < limit) {
      return false;
    }
    offered = true;
    offeredAt = now;
    return offerActiveRole(lanes.indexOf(stalled), stalled, now);
  }

  /** Offers the active role to a standby for a stalled lane; whether it was given up. */
  private boolean offerActiveRole(int index, LaneProgress stalled, long now) {
    String step = stalled.step();
    String why =
        "lane " + index + " made no progress for " + stallTimeout.toMillis() + " ms (" + step + ")";
    boolean sinkStall = !gate.isOpen() || LaneProgress.PUBLISHING.equals(step);
    if (sinkStall
        && sinkYieldReopenings == gate.reopenings()
        && now - sinkYieldNanos < 10 * stallTimeout.toNanos()) {
      log.warn(
          "pipeline {}: {}; the role was handed over once already for this sink outage and came"
              + " back (no instance reaches the broker), carrying on",
          pipeline,
          why);
      return false;
    }
    if (source.yieldLeadership(stallTimeout, why)) {
      if (sinkStall) {
        sinkYieldReopenings = gate.reopenings();
        sinkYieldNanos = now;
      }
      state.leadershipLost("gave the active role up: " + why);
      return true;
    }
    log.warn("pipeline {}: {}; no standby to hand over to, carrying on", pipeline, why);
    return false;
  }
}
