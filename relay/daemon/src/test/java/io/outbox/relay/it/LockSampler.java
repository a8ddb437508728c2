package io.outbox.relay.it;

import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Watches, from the database's side, which relay instances hold the polling source's advisory locks
 * in a test database: the leader lock (one {@code bigint} key) and the lane locks every claim
 * transaction takes (two {@code int} keys) for as long as its batch is being published. Instances
 * are told apart by their {@code application_name} (set per instance through {@code
 * database.properties.ApplicationName}).
 */
final class LockSampler implements AutoCloseable {
  private static final String HOLDERS =
      "SELECT a.application_name, l.objsubid FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
          + " WHERE l.locktype = 'advisory' AND l.granted"
          + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
          // Not the wake gate's locks (two int keys too): the relay's gate session and the
          // application's inserts (the trigger) take them, neither is a claim.
          + " AND NOT (l.objsubid = 2 AND l.classid = ("
          + (OutboxTables.of("outbox").wakeLockKey() & 0xffff_ffffL)
          + "::bigint)::oid)";

  /** One look at the locks; {@code nanos} is when the query was sent. */
  record Sample(long nanos, Set<String> leader, Set<String> claiming) {}

  private final RelayFixture fx;
  private final Duration every;
  private final List<Sample> samples = new CopyOnWriteArrayList<>();
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final Thread thread;

  private LockSampler(RelayFixture fx, Duration every) {
    this.fx = fx;
    this.every = every;
    this.thread = new Thread(this::sample, "lock-sampler");
  }

  static LockSampler start(RelayFixture fx, Duration every) {
    LockSampler sampler = new LockSampler(fx, every);
    sampler.thread.start();
    return sampler;
  }

  private void sample() {
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement()) {
      while (running.get()) {
        long nanos = System.nanoTime();
        Set<String> leader = new TreeSet<>();
        Set<String> claiming = new TreeSet<>();
        try (ResultSet rs = st.executeQuery(HOLDERS)) {
          while (rs.next()) {
            (rs.getInt(2) == 1 ? leader : claiming).add(rs.getString(1));
          }
        }
        samples.add(new Sample(nanos, leader, claiming));
        // Pacing, not waiting for a condition.
        TimeUnit.NANOSECONDS.sleep(every.toNanos());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Throwable t) {
      failure.set(t);
    }
  }

  /** How many samples were taken so far. */
  int count() {
    return samples.size();
  }

  /** Stops sampling and returns every sample, in time order. */
  List<Sample> stop() throws InterruptedException {
    running.set(false);
    thread.join(TimeUnit.SECONDS.toMillis(30));
    if (failure.get() != null) {
      throw new IllegalStateException("sampling pg_locks failed", failure.get());
    }
    return List.copyOf(samples);
  }

  @Override
  public void close() {
    running.set(false);
    thread.interrupt();
  }
}
