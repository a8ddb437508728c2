package io.outbox.bench;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Application writers: threads that each commit one outbox event per transaction, as fast as they
 * can or paced to a total rate, and note when each commit returned.
 */
final class Writers {
  private Writers() {}

  /**
   * When an event's transaction committed.
   *
   * @param nanos {@link System#nanoTime} just after {@code commit()} returned
   * @param epochMicros the wall clock at the same moment, microseconds since the epoch (for
   *     comparing with database timestamps)
   */
  record Commit(long nanos, long epochMicros) {}

  /** What the writers did. */
  record Outcome(Map<UUID, Commit> commits, long nanos) {}

  /** Called once, when the writers' measured window begins. */
  @FunctionalInterface
  interface Start {
    void run() throws Exception;
  }

  /**
   * Runs {@code writers} threads for {@code duration}; with {@code rate > 0} events are scheduled
   * at fixed intervals so that all threads together commit {@code rate} per second (a late writer
   * catches up without waiting), otherwise each thread writes back to back.
   */
  static Outcome run(BenchDatabase db, Workload workload, int writers, int rate, Duration duration)
      throws Exception {
    return run(db, workload, writers, rate, Duration.ZERO, () -> {}, duration);
  }

  /**
   * As {@link #run(BenchDatabase, Workload, int, int, Duration)}, after {@code warmUp} of the same
   * writing that is not measured: the same threads, connections and schedule go on through the
   * start of the measured window (no pause, no new connections, no catch-up burst at its start),
   * {@code measuring} is called when it begins, and the outcome holds the commits scheduled in it.
   */
  static Outcome run(
      BenchDatabase db,
      Workload workload,
      int writers,
      int rate,
      Duration warmUp,
      Start measuring,
      Duration duration)
      throws Exception {
    Map<UUID, Commit> commits = new ConcurrentHashMap<>();
    AtomicLong sequence = new AtomicLong();
    // The writers connect, and without a warm-up the measuring starts, before the schedule does:
    // the time either takes would otherwise come back as a burst of late commits at its start.
    List<Connection> connections = new ArrayList<>(writers);
    try {
      for (int i = 0; i < writers; i++) {
        Connection c = db.connect();
        connections.add(c);
        c.setAutoCommit(false);
      }
      if (warmUp.isZero()) {
        measuring.run();
      }
      long start = System.nanoTime();
      long measured = start + warmUp.toNanos();
      long end = measured + duration.toNanos();
      AtomicReference<Exception> failed = new AtomicReference<>();
      Thread clock = warmUp.isZero() ? null : clock(measured, measuring, failed);
      Parallel.run(
          "bench-writer",
          writers,
          index -> {
            Connection c = connections.get(index);
            for (long k = 0; ; k++) {
              long due = rate > 0 ? start + (long) ((k * writers + index) * 1e9 / rate) : start;
              if (due >= end || System.nanoTime() >= end) {
                return;
              }
              long wait = due - System.nanoTime();
              if (wait > 0) {
                LockSupport.parkNanos(wait);
              }
              // Without a rate, a commit counts when it started in the measured window.
              boolean counted = (rate > 0 ? due : System.nanoTime()) >= measured;
              UUID id =
                  db.writer().write(c, BenchDatabase.message(workload, sequence.getAndIncrement()));
              c.commit();
              if (counted) {
                commits.put(
                    id,
                    new Commit(
                        System.nanoTime(),
                        ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now())));
              }
            }
          });
      if (clock != null) {
        clock.join();
      }
      if (failed.get() != null) {
        throw failed.get();
      }
      long nanos = System.nanoTime() - measured;
      return new Outcome(commits, nanos);
    } finally {
      for (Connection c : connections) {
        c.close();
      }
    }
  }

  /** A thread that calls {@code measuring} at {@code measured} (nanoTime), started. */
  private static Thread clock(long measured, Start measuring, AtomicReference<Exception> failed) {
    Thread clock =
        new Thread(
            () -> {
              for (long left; (left = measured - System.nanoTime()) > 0; ) {
                LockSupport.parkNanos(left); // may return early
              }
              try {
                measuring.run();
              } catch (Exception e) {
                failed.set(e);
              }
            },
            "bench-writers-clock");
    clock.setDaemon(true); // a writer's failure ends the run without waiting for it
    clock.start();
    return clock;
  }
}
