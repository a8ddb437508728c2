package io.outbox.source.cdc.engine;

import io.outbox.relay.spi.Deadline;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What is left of a {@link StreamSession}'s engine once it is stopped, and the wait until nothing
 * is: the engine's run (a future on the session's own executor), the calls into its connector task
 * ({@link TaskGate}) and the server processes that streamed the slot to it ({@link Walsenders}).
 * Answered from what the session owns, never from thread names.
 */
final class EngineRemains {

  private static final Logger log = LoggerFactory.getLogger(StreamSession.class);

  private final TaskGate gate;
  private final Walsenders walsenders;
  private final BooleanSupplier stopping;
  private final IntSupplier abortConnections;
  private final String pipeline;
  private final String slotName;
  private volatile Future<?> running; // the engine's run(), on the session's own executor
  private volatile boolean gone; // confirmed once: stays so

  /**
   * @param stopping whether the session was stopped: only then is an engine with nothing left gone
   *     for good
   * @param abortConnections closes the engine's network connections ({@link EngineSockets}),
   *     returning how many were open
   */
  EngineRemains(
      TaskGate gate,
      Walsenders walsenders,
      BooleanSupplier stopping,
      IntSupplier abortConnections,
      String pipeline,
      String slotName) {
    this.gate = gate;
    this.walsenders = walsenders;
    this.stopping = stopping;
    this.abortConnections = abortConnections;
    this.pipeline = pipeline;
    this.slotName = slotName;
  }

  /** The engine's run, once submitted. */
  void running(Future<?> run) {
    this.running = run;
  }

  /**
   * Waits until the engine is gone ({@link #left} empty); past half the time left, closes the
   * engine's connections (a call blocked on one that no longer answers) and interrupts the calls
   * into the connector still in flight (a task restarting its connector or retrying its replication
   * connection) and the engine's run.
   */
  boolean awaitGone(Deadline deadline) {
    Deadline half = deadline.ticker().deadline(deadline.left().dividedBy(2));
    try {
      if (!awaitStopped(half)) {
        log.warn(
            "pipeline {}: the change stream's engine is slow to stop; closing its {} connection(s)"
                + " and interrupting {}",
            pipeline,
            abortConnections.getAsInt(),
            left());
        gate.interruptCalls();
        if (running != null) {
          running.cancel(true);
        }
        awaitStopped(deadline);
      }
      endWalsenders();
      while (true) {
        List<String> left = left();
        if (left.isEmpty()) {
          return true;
        }
        if (deadline.passed()) {
          log.error("pipeline {}: the change stream's engine did not stop: {}", pipeline, left);
          return false;
        }
        TimeUnit.MILLISECONDS.sleep(100); // the server ends the walsender: no event to wait for
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return left().isEmpty();
    }
  }

  /**
   * Once the engine's side is stopped, ends the server processes that streamed to it and are still
   * connected (a client gone without a word), as an activation would end them anyway.
   */
  private void endWalsenders() {
    if (running != null && !running.isDone() || !gate.quiet()) {
      return; // the engine could still use them
    }
    try {
      int ended = walsenders.endStillConnected();
      if (ended > 0) {
        log.warn(
            "pipeline {}: ended {} server process(es) still streaming slot {} to this instance's"
                + " stopped engine",
            pipeline,
            ended,
            slotName);
      }
    } catch (SQLException e) {
      log.warn(
          "pipeline {}: cannot end the replication connection of the stopped engine: {}",
          pipeline,
          e.getMessage());
    }
  }

  /** Waits until the engine's run is over and its connector task quiet, or the deadline. */
  private boolean awaitStopped(Deadline deadline) throws InterruptedException {
    if (running != null) {
      try {
        running.get(deadline.nanosLeft(), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        return false;
      } catch (ExecutionException | java.util.concurrent.CancellationException e) {
        // over: runEngine logs its own failures
      }
    }
    return gate.awaitQuiet(deadline);
  }

  /**
   * What of this session's engine is still running or connected, for messages; empty once it is
   * gone for good: the engine's run is over, its connector task was stopped with no call in flight
   * ({@link TaskGate}), and no server process that streamed the slot to it is left ({@link
   * Walsenders}). Asks the database once the first two hold; when it cannot, says so.
   */
  List<String> left() {
    if (gone) {
      return List.of();
    }
    List<String> left = new ArrayList<>();
    if (running != null && !running.isDone()) {
      left.add("the engine's run");
    }
    left.addAll(gate.running());
    if (!left.isEmpty()) {
      return left;
    }
    try {
      walsenders.stillConnected().forEach(w -> left.add("its replication connection, " + w));
    } catch (SQLException e) {
      left.add("its replication connection, which cannot be checked: " + e.getMessage());
    }
    if (left.isEmpty() && stopping.getAsBoolean()) {
      gone = true;
    }
    return left;
  }
}
