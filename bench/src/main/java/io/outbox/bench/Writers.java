package io.outbox.bench;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
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

  /**
   * Runs {@code writers} threads for {@code duration}; with {@code rate > 0} events are scheduled
   * at fixed intervals so that all threads together commit {@code rate} per second (a late writer
   * catches up without waiting), otherwise each thread writes back to back.
   */
  static Outcome run(BenchDatabase db, Workload workload, int writers, int rate, Duration duration)
      throws Exception {
    Map<UUID, Commit> commits = new ConcurrentHashMap<>();
    AtomicLong sequence = new AtomicLong();
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    Parallel.run(
        "bench-writer",
        writers,
        index -> {
          try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            for (long k = 0; ; k++) {
              long due = rate > 0 ? start + (long) ((k * writers + index) * 1e9 / rate) : start;
              if (due >= end || System.nanoTime() >= end) {
                return;
              }
              long wait = due - System.nanoTime();
              if (wait > 0) {
                LockSupport.parkNanos(wait);
              }
              UUID id =
                  db.writer().write(c, BenchDatabase.message(workload, sequence.getAndIncrement()));
              c.commit();
              commits.put(
                  id,
                  new Commit(
                      System.nanoTime(), ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now())));
            }
          }
        });
    long nanos = System.nanoTime() - start;
    return new Outcome(commits, nanos);
  }
}
