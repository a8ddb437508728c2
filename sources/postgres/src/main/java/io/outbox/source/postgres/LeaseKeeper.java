package io.outbox.source.postgres;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.support.PipelineThreads;
import io.outbox.relay.spi.support.SettingsReader;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * "One active instance per pipeline", the part the polling and CDC sources share: a {@link
 * LeaderLease} held on a dedicated session for as long as this instance is active, renewed by a
 * daemon thread one {@code leadership-check-interval} after the last renewal (or the take-over), on
 * the relay's ticker: at least three times per {@code lease-timeout} ({@link Timing#checkRenewal}),
 * while a renewal keeps the lease for 80 % of it. When the session is lost, the renewal fails, or
 * the lease ran out (this process was frozen), the lease is lost; what a source does then (and on
 * taking and renewing it) is its {@link Hooks}.
 */
public final class LeaseKeeper {

  private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

  /** A source's settings of leadership: {@code source.<type>.*}. */
  public interface Timing {

    /** {@code standby-check-interval}: how often a standby tries to take the lease. */
    Duration standbyCheckInterval();

    /** {@code leadership-check-interval}: how often the active instance renews it. */
    Duration leadershipCheckInterval();

    /** {@code lease-timeout}: how long a renewal is good for. */
    Duration leaseTimeout();

    /**
     * How long an instance taking over waits for the claims of the instance before it to end,
     * before it ends their sessions: a fifth of the lease.
     */
    default Duration fenceWait() {
      return leaseTimeout().dividedBy(5);
    }

    /**
     * A problem of {@code leadership-check-interval} unless it renews a lease of {@code
     * lease-timeout} at least three times per lease; {@code null} values (bad ones, already
     * reported) are left alone.
     */
    static void checkRenewal(SettingsReader r, Duration renew, Duration lease) {
      if (renew != null && lease != null && renew.multipliedBy(3).compareTo(lease) > 0) {
        r.problem(
            "leadership-check-interval",
            "must be at most a third of lease-timeout ("
                + lease.toMillis()
                + " ms) so that the lease is renewed in time, not "
                + renew.toMillis()
                + " ms");
      }
    }
  }

  /** Opens a new session for the lease, named as status expects the leader sessions to be named. */
  @FunctionalInterface
  public interface Opener {
    Connection open() throws SQLException;
  }

  /** What a source adds to keeping the lease; by default nothing. */
  public interface Hooks {

    /** Waits {@code millis} before trying again while another instance holds the lease. */
    default void pause(long millis) throws InterruptedException {
      TimeUnit.MILLISECONDS.sleep(Math.max(1, millis));
    }

    /** Just taken, on its session (under the keeper's lock); an exception loses it again. */
    default void taken(Connection session) throws SQLException {}

    /** Just renewed, on its session (under the keeper's lock). */
    default void renewed(Connection session) {}

    /** Lost by the watchdog, or given up by {@link #yieldFor} (outside the keeper's lock). */
    default void lost() {}
  }

  private final String pipeline;
  private final LeaderLease lease;
  private final Duration leaseTimeout;
  private final Duration leadershipCheckInterval;
  private final Duration standbyCheckInterval;
  private final String where;
  private final Opener opener;
  private final BiFunction<String, SQLException, ? extends RuntimeException> failure;
  private final Hooks hooks;
  private final ScheduledExecutorService watchdog;
  private final Ticker ticker;
  private Connection session; // guarded by this
  private boolean watching; // guarded by this
  private volatile boolean held;
  private volatile Deadline standbyUntil; // after yieldFor: no take-over before it
  private volatile Deadline nextRenewal; // once watching

  /**
   * @param kind the source's kind, in the watchdog thread's name ({@code "cdc"}, {@code "polling"})
   * @param where the database, for messages: its address without credentials
   * @param failure what {@link #acquire} throws, from a message and its cause, when the lease
   *     cannot be taken
   * @param ticker the relay's ticker: the lease's validity, the renewals, a yield's pause
   */
  public LeaseKeeper(
      OutboxTables tables,
      String pipeline,
      String kind,
      Timing timing,
      String where,
      Opener opener,
      BiFunction<String, SQLException, ? extends RuntimeException> failure,
      Hooks hooks,
      Ticker ticker) {
    this.pipeline = pipeline;
    this.ticker = ticker;
    this.standbyUntil = ticker.deadline(Duration.ZERO);
    this.lease =
        new LeaderLease(
            tables,
            pipeline,
            LeaderLease.thisInstance(),
            timing.leaseTimeout(),
            timing.fenceWait(),
            ticker);
    this.leaseTimeout = timing.leaseTimeout();
    this.leadershipCheckInterval = timing.leadershipCheckInterval();
    this.standbyCheckInterval = timing.standbyCheckInterval();
    this.where = where;
    this.opener = opener;
    this.failure = failure;
    this.hooks = hooks;
    this.watchdog =
        Executors.newSingleThreadScheduledExecutor(
            PipelineThreads.namedDaemons(
                pipeline, "outbox-relay-" + pipeline + "-" + kind + "-leader-watchdog"));
  }

  /** The lease, for the fence and epoch checks of the source's transactions. */
  public LeaderLease lease() {
    return lease;
  }

  /**
   * Blocks until the lease is taken.
   *
   * @param standby called once when another instance holds the lease
   * @param closed when it turns true, gives up with an {@link InterruptedException}
   * @return whether this call took it ({@code false}: this instance still held it)
   * @throws RuntimeException from {@code failure} when the database cannot be reached
   */
  public boolean acquire(Runnable standby, BooleanSupplier closed) throws InterruptedException {
    boolean waiting = false;
    while (true) {
      if (closed.getAsBoolean() || Thread.currentThread().isInterrupted()) {
        throw new InterruptedException("pipeline " + pipeline + ": source closed");
      }
      if (held()) {
        return false; // still active (the source's work ended for another reason)
      }
      if (standbyUntil.passed() && tryOnce()) {
        watch();
        return true;
      }
      if (!waiting) {
        waiting = true;
        standby.run();
      }
      hooks.pause(standbyCheckInterval.toMillis());
    }
  }

  private synchronized boolean tryOnce() {
    if (held) {
      // The lease ran out before the watchdog noticed (this process was paused): the session may
      // be ended by a standby any moment; start over on a new one, with a new epoch.
      lost();
    }
    try {
      if (session == null) {
        session = opener.open();
        // A renewal or take-over that hangs on a dead network ends within a bound.
        session.setNetworkTimeout(Runnable::run, networkTimeoutMillis());
      }
      held = lease.tryAcquire(session);
      if (held) {
        hooks.taken(session);
      }
      return held;
    } catch (SQLException e) {
      lost();
      throw failure.apply(
          "pipeline "
              + pipeline
              + ": cannot take the leader lock on "
              + where
              + ": "
              + e.getMessage(),
          e);
    }
  }

  private synchronized void watch() {
    if (!watching) {
      watching = true;
      scheduleRenewal();
    }
  }

  /** The next renewal, due one {@code leadership-check-interval} from now on the ticker. */
  private void scheduleRenewal() {
    Deadline due = ticker.deadline(leadershipCheckInterval);
    nextRenewal = due;
    try {
      watchdog.schedule(this::renew, due.nanosLeft(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // closed, or stopRenewing(): no renewal any more
    }
  }

  /** When the watchdog renews next: {@code null} before the lease was first taken. */
  Deadline nextRenewal() {
    return nextRenewal;
  }

  /**
   * The watchdog (or a test, on its own thread): renews the lease, then schedules the next renewal;
   * a lost session, a failed renewal or a raised epoch lose the lease.
   */
  void renew() {
    try {
      renewOnce();
    } finally {
      scheduleRenewal();
    }
  }

  private void renewOnce() {
    synchronized (this) {
      if (!held) {
        return;
      }
      try {
        if (lease.renew(session) && lease.held()) {
          hooks.renewed(session);
          return;
        }
        log.warn(
            "pipeline {}: lost the lease (another instance took over, or this one was paused past"
                + " its lease-timeout of {} ms)",
            pipeline,
            leaseTimeout.toMillis());
      } catch (SQLException | RuntimeException e) {
        log.warn("pipeline {}: renewing the lease failed: {}", pipeline, e.getMessage());
      } catch (Error e) {
        // Thrown out of the scheduled task, it would vanish into the task's future, silently.
        log.error("pipeline {}: renewing the lease failed; standing down", pipeline, e);
      }
      lost();
    }
    hooks.lost();
  }

  /**
   * Whether this instance holds the lease, as far as the last renewal knows and unless it ran out
   * since (a frozen process wakes up to {@code false}). No I/O.
   */
  public boolean held() {
    return held && lease.held();
  }

  /** Gives leadership up and tries again only after {@code pause}, so that a standby takes over. */
  public void yieldFor(Duration pause) {
    standbyUntil = ticker.deadline(pause);
    synchronized (this) {
      lost();
    }
    hooks.lost();
  }

  /** Longest a renewal or take-over may wait for the database: half the lease, at least 1 s. */
  public int networkTimeoutMillis() {
    return (int) Math.max(1000, leaseTimeout.toMillis() / 2);
  }

  private synchronized void lost() {
    held = false;
    lease.lost();
    if (session != null) {
      try {
        session.close();
      } catch (SQLException e) {
        log.debug("pipeline {}: closing the leader session: {}", pipeline, e.getMessage());
      }
      session = null;
    }
  }

  /** Gives the lease up by ending its session. */
  public void release() {
    lost();
  }

  /** Stops renewing without giving the lease up: what a frozen process does (tests). */
  public void stopRenewing() {
    watchdog.shutdownNow();
  }

  /** Releases the lease and stops the watchdog. */
  public void close() {
    watchdog.shutdownNow();
    release();
  }
}
