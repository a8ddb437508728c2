package io.outbox.relay.pipeline;

import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.LedgerException;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.support.PipelineThreads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pipeline's supervisor thread: waits (standby) until the source makes this instance active,
 * exactly-once settles from the ledger what the instance before committed without settling, then
 * runs the lanes, one thread each, until they stop claiming; again, until the pipeline stops or
 * fails.
 */
final class Supervisor implements Runnable {
  // The pipeline's logger: these lines were Pipeline's and operators' log settings name it.
  private static final Logger log = LoggerFactory.getLogger(Pipeline.class);

  private final String pipeline;
  private final int laneCount;
  private final LaneContext lanes;
  private final PipelineState state;
  private final StallWatch stallWatch;

  Supervisor(int laneCount, Duration stallTimeout, LaneContext lanes, PipelineState state) {
    this.pipeline = lanes.pipeline();
    this.laneCount = laneCount;
    this.lanes = lanes;
    this.state = state;
    this.stallWatch =
        new StallWatch(pipeline, stallTimeout, lanes.source(), lanes.gate(), state, lanes.ticker());
  }

  @Override
  public void run() {
    try {
      superviseUntilStopped();
    } catch (Error e) {
      state.fatal("supervisor", e);
    }
  }

  private void superviseUntilStopped() {
    Reconnect reconnect = new Reconnect(lanes.errorBackoff(), lanes.ticker());
    while (!state.stopping() && state.failure() == null) {
      try {
        log.info("pipeline {}: waiting to become the active instance", pipeline);
        lanes.source().activate();
        state.sourceAnswered(true);
        reconnect.succeeded();
      } catch (InterruptedException e) {
        return;
      } catch (SourceException e) {
        if (state.stopping()) {
          // stop() interrupts a standby's activate(); a JDBC call it cut short fails this way.
          return;
        }
        state.sourceAnswered(false);
        Duration pause = reconnect.failed();
        log.warn(
            "pipeline {}: cannot start reading, retrying in {} ms: {}",
            pipeline,
            pause.toMillis(),
            Lane.oneLine(e));
        if (!state.sleepUnlessStopping(reconnect.due())) {
          return;
        }
        continue;
      }
      if (state.stopping()) {
        return;
      }
      if (lanes.recovery() != null && !settleInDoubt()) {
        continue;
      }
      runLanes();
    }
  }

  /**
   * Exactly-once, on activation: fences the instance before this one in the broker and settles what
   * it committed without settling, before any lane claims. Retries with backoff while the broker
   * cannot be reached.
   *
   * @return {@code true} when the lanes may run; {@code false} when the role was lost, the ledger
   *     cannot be trusted (the pipeline fails), or the pipeline stops
   */
  private boolean settleInDoubt() {
    Set<Integer> all = new TreeSet<>();
    for (int i = 0; i < laneCount; i++) {
      all.add(i);
    }
    Reconnect reconnect = new Reconnect(lanes.errorBackoff(), lanes.ticker());
    while (!state.stopping()) {
      try {
        lanes.recovery().recover(all, true);
        return true;
      } catch (LeadershipLostException e) {
        log.warn(
            "pipeline {}: lost the active role while settling the ledger: {}",
            pipeline,
            e.getMessage());
        return false;
      } catch (LedgerException e) {
        state.fatal("the ledger", e);
        return false;
      } catch (RuntimeException e) {
        Duration pause = reconnect.failed();
        log.warn(
            "pipeline {}: cannot fence the earlier instance or read the ledger, retrying in {} ms:"
                + " {}",
            pipeline,
            pause.toMillis(),
            Lane.oneLine(e));
        if (!state.sleepUnlessStopping(reconnect.due())) {
          return false;
        }
      }
    }
    return false;
  }

  private void runLanes() {
    state.active();
    log.info(
        "pipeline {}: active, {} lane(s), batches of up to {} events",
        pipeline,
        laneCount,
        lanes.batchSize());
    List<Thread> threads = new ArrayList<>();
    List<LaneProgress> running = new ArrayList<>();
    for (int i = 0; i < laneCount; i++) {
      Lane lane = new Lane(i, state, lanes);
      Thread t = PipelineThreads.lane(pipeline, i, "outbox-relay-" + pipeline + "-lane-" + i, lane);
      threads.add(t);
      running.add(lane.progress());
      t.start();
    }
    stallWatch.watch(threads, running);
    for (Thread t : threads) {
      joinUninterruptibly(t);
    }
    state.standBy();
  }

  private static void joinUninterruptibly(Thread t) {
    boolean interrupted = false;
    while (t.isAlive()) {
      try {
        t.join();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
