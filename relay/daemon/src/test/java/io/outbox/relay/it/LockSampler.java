package io.outbox.relay.it;

import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Watches, from the database's side, which relay instances lead and which have claims open in a
 * test database. The leader holds the leader lock (one {@code bigint} key). A claim is a
 * transaction that holds the pipeline's fence lock shared (every claim and settlement takes it,
 * {@code LeaderLease#claimFenceSql}) and has locked or written rows, so has a transaction id: an
 * attempt that found the fence taken or no rows to claim holds a lane lock for an instant but locks
 * no row, and an instance taking over holds the fence exclusively while it raises the epoch;
 * neither is a claim. Instances are told apart by their {@code application_name} (set per instance
 * through {@code database.properties.ApplicationName}).
 */
final class LockSampler implements AutoCloseable {
  private static final int[] FENCE = OutboxTables.of("outbox").fenceLockKey("it");

  private static final String HOLDERS =
      "SELECT a.application_name, l.objsubid, l.pid, l.mode, a.backend_xid IS NOT NULL"
          + " FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
          + " WHERE l.locktype = 'advisory' AND l.granted"
          + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
          + " AND (l.objsubid = 1 OR l.objsubid = 2"
          + " AND l.classid = ("
          + (FENCE[0] & 0xffff_ffffL)
          + "::bigint)::oid AND l.objid = ("
          + (FENCE[1] & 0xffff_ffffL)
          + "::bigint)::oid)";

  /**
   * One look at the locks; {@code nanos} is when the query was sent; {@code locks} names each lock
   * seen (holder, pid, which lock and mode), so that a failed assertion shows what was held.
   */
  record Sample(long nanos, Set<String> leader, Set<String> claiming, List<String> locks) {}

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
        List<String> locks = new ArrayList<>();
        try (ResultSet rs = st.executeQuery(HOLDERS)) {
          while (rs.next()) {
            boolean leaderLock = rs.getInt(2) == 1;
            if (leaderLock) {
              leader.add(rs.getString(1));
            } else if ("ShareLock".equals(rs.getString(4)) && rs.getBoolean(5)) {
              claiming.add(rs.getString(1));
            }
            locks.add(
                rs.getString(1)
                    + " pid "
                    + rs.getInt(3)
                    + (leaderLock ? " leader lock" : " fence " + rs.getString(4))
                    + (rs.getBoolean(5) ? " with a transaction id" : ""));
          }
        }
        samples.add(new Sample(nanos, leader, claiming, List.copyOf(locks)));
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
