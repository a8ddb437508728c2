package io.outbox.relay.pipeline;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.support.PipelineThreads;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pauses every lane of a pipeline while its sink is unavailable, and probes the sink with backoff
 * until it answers again. An outage costs no attempts: the events it caught are released, not
 * judged.
 */
final class SinkGate {
  private static final Logger log = LoggerFactory.getLogger(SinkGate.class);

  private final String pipeline;
  private final Sink sink;
  private final RetryPolicy backoff;
  private final Ticker ticker;
  private final Duration probeTimeout;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition opened = lock.newCondition();
  private boolean open = true;
  private volatile long reopenings; // written under lock
  private volatile boolean closed;
  private Thread prober;

  SinkGate(String pipeline, Sink sink, RetryPolicy backoff, Duration probeTimeout, Ticker ticker) {
    this.pipeline = pipeline;
    this.sink = sink;
    this.backoff = backoff;
    this.ticker = ticker;
    this.probeTimeout = probeTimeout;
  }

  /** How many times the gate opened again after an outage: it changes when the sink came back. */
  long reopenings() {
    return reopenings;
  }

  boolean isOpen() {
    lock.lock();
    try {
      return open;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Closes the gate and starts probing, unless that is already under way.
   *
   * @return whether this call closed the gate (a new outage)
   */
  boolean reportUnavailable(String error) {
    lock.lock();
    try {
      if (!open || closed) {
        return false;
      }
      open = false;
      log.warn("pipeline {}: sink unavailable, pausing publishing: {}", pipeline, error);
      prober =
          PipelineThreads.daemon(
              pipeline, "outbox-relay-" + pipeline + "-sink-probe", this::probeUntilAvailable);
      prober.start();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until the gate is open, or at most {@code max}.
   *
   * @return whether the gate is open
   */
  boolean awaitOpen(Duration max) throws InterruptedException {
    long nanos = max.toNanos();
    lock.lock();
    try {
      while (!open && !closed) {
        if (nanos <= 0) {
          return false;
        }
        nanos = opened.awaitNanos(nanos);
      }
      return open;
    } finally {
      lock.unlock();
    }
  }

  private void probeUntilAvailable() {
    Reconnect reconnect = new Reconnect(backoff, ticker);
    try {
      while (!closed) {
        reconnect.failed();
        sleepUntil(reconnect.due());
        boolean up;
        try {
          up = sink.probe(probeTimeout);
        } catch (RuntimeException e) {
          up = false;
        }
        if (up) {
          lock.lock();
          try {
            open = true;
            reopenings++;
            opened.signalAll();
          } finally {
            lock.unlock();
          }
          log.info(
              "pipeline {}: sink available again after {} probe(s), resuming",
              pipeline,
              reconnect.failures());
          return;
        }
        log.debug("pipeline {}: sink still unavailable (probe {})", pipeline, reconnect.failures());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleepUntil(Deadline due) throws InterruptedException {
    for (long left = due.nanosLeft(); left > 0; left = due.nanosLeft()) {
      TimeUnit.NANOSECONDS.sleep(left);
    }
  }

  /** Stops probing and wakes every waiting lane. */
  void close() {
    Thread p;
    lock.lock();
    try {
      closed = true;
      opened.signalAll();
      p = prober;
    } finally {
      lock.unlock();
    }
    if (p != null) {
      p.interrupt();
      try {
        p.join(TimeUnit.SECONDS.toMillis(1));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
