package io.outbox.source.postgres;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.PluginContext.RoleListener;
import io.outbox.relay.spi.Ticker;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * What the sources that read the outbox table (polling and CDC) share of their life cycle: the
 * lifecycle lock, the closed flag, the role reported to the pipeline, the claims outstanding per
 * lane, and the pipeline's retention job, started on the first activation and stopped first on
 * close. Like {@link ClaimVerdicts} it needs {@code outbox-relay-spi}, which the sources have.
 */
public final class SourceLifecycle {

  private final Object lock = new Object();
  private final String pipeline;
  private final RoleReporter roles;
  private final OutstandingClaims claims;
  private final Ticker ticker;
  private final Logger log;
  private volatile boolean closed;
  private RetentionJob retention; // guarded by lock

  /**
   * @param roles the pipeline's listener ({@code PluginContext.roles()}), or {@code null}
   * @param log the source's logger
   * @param ticker the relay's ticker ({@code PluginContext.ticker()}): the close deadline's, the
   *     retention job's
   */
  public SourceLifecycle(
      String pipeline, int lanes, RoleListener roles, Logger log, Ticker ticker) {
    this.pipeline = pipeline;
    this.ticker = ticker;
    this.roles = new RoleReporter(roles, lock);
    this.claims = new OutstandingClaims(lanes, pipeline);
    this.log = log;
  }

  /** The lifecycle lock: the source's lifecycle changes, and role reports, are ordered by it. */
  public Object lock() {
    return lock;
  }

  /** Whether {@link #close} began. */
  public boolean closed() {
    return closed;
  }

  /** Which lanes have a claim outstanding. */
  public OutstandingClaims claims() {
    return claims;
  }

  /** Reports {@code role} to the pipeline unless it is the role reported last. */
  public void report(Role role) {
    roles.report(role);
  }

  /**
   * Starts the pipeline's retention once, unless it is off or the source is closed; it deletes only
   * while {@code leading} (this instance holds the leader lock), on sessions of its own.
   */
  public void startRetention(
      OutboxTables tables,
      DatabaseSettings database,
      RetentionJob.ConnectionSource connections,
      BooleanSupplier leading) {
    DatabaseSettings.Retention r = database.retention();
    synchronized (lock) {
      if (retention != null || closed || !r.enabled()) {
        return;
      }
      retention =
          RetentionJob.start(
              tables, pipeline, r, database.partitions(), connections, leading, claims, ticker);
    }
  }

  /** {@code backlog} with what the retention job last found added (a partitioned outbox's). */
  public Backlog withRetentionFigures(Backlog backlog) {
    RetentionJob job;
    synchronized (lock) {
      job = retention;
    }
    if (job == null) {
      return backlog;
    }
    OptionalLong rows = job.earlierRoundRows();
    return rows.isPresent() ? backlog.withEarlierRoundRows(rows.getAsLong()) : backlog;
  }

  /**
   * Begins closing: under the lock marks the source closed, takes what the source stops ({@code
   * take}) and its retention job.
   *
   * @return how the close goes on, or {@code null} when the source was closed already
   */
  public <T> Closing<T> close(Duration timeout, Supplier<T> take) {
    CloseDeadline deadline = new CloseDeadline(timeout, ticker);
    T taken;
    RetentionJob stopping;
    synchronized (lock) {
      if (closed) {
        return null;
      }
      closed = true;
      taken = take.get();
      stopping = retention;
      retention = null;
    }
    return new Closing<>(deadline, taken, stopping);
  }

  /** A close under way: its deadline, what the source took to stop, and the retention job. */
  public final class Closing<T> {

    private final CloseDeadline deadline;
    private final T taken;
    private final RetentionJob retention;

    private Closing(CloseDeadline deadline, T taken, RetentionJob retention) {
      this.deadline = deadline;
      this.taken = taken;
      this.retention = retention;
    }

    public CloseDeadline deadline() {
      return deadline;
    }

    /** What the source took under the lock to stop. */
    public T taken() {
      return taken;
    }

    /** Stops the retention job, if there is one, within what is left. */
    public void stopRetention() {
      deadline.stop(retention);
    }

    /**
     * Lets claims in flight settle, until the deadline; logs that some are left with what becomes
     * of them ({@code then}).
     */
    public void awaitClaimsEnded(String then) {
      if (!claims.awaitNone(deadline.deadline())) {
        log.warn("pipeline {}: closing with claims still open; {}", pipeline, then);
      }
    }

    /** Last: reports {@code STANDBY} if the role reported last is {@code ACTIVE}. */
    public void standbyIfActive() {
      roles.standbyIfActive();
    }
  }
}
