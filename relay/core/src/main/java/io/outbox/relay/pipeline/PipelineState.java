package io.outbox.relay.pipeline;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.PluginContext.Role;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a pipeline stands, as its supervisor, its lanes and {@link Pipeline#stop} share it: standby
 * or active, stopping or demoted (lanes claim only while neither), the stop deadline past which
 * batches in flight are given up, why it failed, and whether its source answers. Lanes see it
 * through {@link LaneHost}.
 */
final class PipelineState implements LaneHost {
  // The pipeline's logger: these lines were Pipeline's and operators' log settings name it.
  private static final Logger log = LoggerFactory.getLogger(Pipeline.class);

  private final String pipeline;
  private final Object monitor = new Object();
  private volatile boolean stopping;
  private volatile Deadline abandonAt; // null until stop()
  private volatile boolean demoted;
  private volatile Role role = Role.STANDBY;
  private volatile boolean sourceConnected;
  private volatile String failure;
  private volatile Pipeline.FatalListener fatalListener = (pipeline, error) -> {};

  PipelineState(String pipeline) {
    this.pipeline = pipeline;
  }

  Role role() {
    return role;
  }

  boolean stopping() {
    return stopping;
  }

  /** Why the pipeline died, or {@code null} while it is healthy. */
  String failure() {
    return failure;
  }

  boolean sourceConnected() {
    return sourceConnected;
  }

  void onFatal(Pipeline.FatalListener listener) {
    this.fatalListener = listener;
  }

  /** The lanes are about to start. */
  void active() {
    role = Role.ACTIVE;
    demoted = false;
  }

  /** The lanes are gone: standing by until the source makes this instance active again. */
  void standBy() {
    role = Role.STANDBY;
    if (demoted && !stopping) {
      log.warn("pipeline {}: no longer the active instance, standing by", pipeline);
    }
    // A lost lead must not read as "stop" to the supervisor's retries (sleepUnlessStopping),
    // which would end it for good at its first failed activation.
    demoted = false;
  }

  /**
   * Stops claiming, wakes whoever sleeps or watches, and gives batches in flight until {@code
   * abandonAt}.
   */
  void stop(Deadline abandonAt) {
    this.abandonAt = abandonAt;
    stopping = true;
    synchronized (monitor) {
      monitor.notifyAll();
    }
  }

  @Override
  public boolean keepClaiming() {
    return !stopping && !demoted;
  }

  @Override
  public boolean abandonInFlight() {
    Deadline at = abandonAt;
    return at != null && at.passed();
  }

  @Override
  public void sourceAnswered(boolean answered) {
    sourceConnected = answered;
  }

  @Override
  public void leadershipLost(String why) {
    synchronized (monitor) {
      if (!demoted) {
        log.warn("pipeline {}: lost the active role: {}", pipeline, why);
      }
      demoted = true;
      monitor.notifyAll();
    }
  }

  /**
   * An {@link Error} ended a lane or the supervisor: the pipeline stops claiming (its claims in
   * flight roll back and are claimed again), readiness turns false, and the fatal listener decides
   * the process's fate.
   */
  @Override
  public void fatal(String where, Throwable error) {
    boolean first;
    synchronized (monitor) {
      first = failure == null;
      if (first) {
        failure = where + ": " + Lane.oneLine(error);
      }
      demoted = true;
      monitor.notifyAll();
    }
    if (first) {
      log.error("pipeline {}: fatal failure in {}; the pipeline stops", pipeline, where, error);
      fatalListener.failed(pipeline, error);
    }
  }

  @Override
  public boolean sleepUnlessStopping(Deadline until) {
    synchronized (monitor) {
      while (!stopping && !demoted) {
        long left = until.nanosLeft();
        if (left <= 0) {
          return true;
        }
        try {
          monitor.wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
    return false;
  }

  /**
   * Waits up to {@code millis}, less when the pipeline stops or is demoted meanwhile.
   *
   * @return {@code false} when lanes had already stopped claiming, or the wait was interrupted
   */
  boolean awaitWhileClaiming(long millis) {
    synchronized (monitor) {
      if (!keepClaiming()) {
        return false;
      }
      try {
        monitor.wait(millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return true;
  }
}
