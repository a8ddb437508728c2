package io.outbox.source.polling;

import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.postgres.LeaderLease;
import io.outbox.source.postgres.LeaseKeeper;
import io.outbox.source.postgres.LedgerWatermarks;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * "One active instance per pipeline": a {@link LeaderLease} (a session advisory lock plus a lease
 * row with an epoch) held on a dedicated session for as long as this instance is active, renewed by
 * a daemon thread every {@code leadership-check-interval} ({@link LeaseKeeper}). When the session
 * is lost, the renewal fails, or the lease ran out (this process was frozen), the instance stops
 * claiming; every claim checks the lease's epoch in SQL ({@link ClaimTransactions}).
 */
final class LeaderLock {

  private static final Logger log = LoggerFactory.getLogger(LeaderLock.class);

  private final PollingSettings settings;
  private final Consumer<Role> roles;
  private final String pipeline;
  private final String table;
  private final LeaseKeeper keeper;

  LeaderLock(
      Connections connections,
      TableNames tables,
      PollingSettings settings,
      WakeUps wakeUps,
      Consumer<Role> roles,
      Runnable abortConnections,
      String pipeline,
      String table,
      Ticker ticker) {
    this.settings = settings;
    this.roles = roles;
    this.pipeline = pipeline;
    this.table = table;
    // The session's application_name is then OutboxTables.leaderSessionName: status counts the
    // standbys by it.
    String leaderRole = "leader " + tables.outboxTables().displayTable();
    this.keeper =
        new LeaseKeeper(
            tables.outboxTables(),
            pipeline,
            "polling",
            settings,
            connections.safeUrl(),
            () -> connections.dedicated(leaderRole),
            SourceException::new,
            new LeaseKeeper.Hooks() {
              @Override
              public void pause(long millis) throws InterruptedException {
                wakeUps.sleep(millis, TimeUnit.MILLISECONDS);
              }

              @Override
              public void lost() {
                // Lanes in a statement on a dead network end now, not after socket-timeout.
                abortConnections.run();
                roles.accept(Role.STANDBY);
                wakeUps.wakeAll(); // lanes waiting for rows notice at once
              }
            },
            ticker);
  }

  /**
   * Whether this instance holds the lease, as far as the last renewal knows and unless it ran out
   * since (a frozen process wakes up to {@code false}).
   */
  boolean held() {
    return keeper.held();
  }

  /** The lease, for the claims' fence and epoch check. */
  LeaderLease lease() {
    return keeper.lease();
  }

  /**
   * The check a settlement from the ledger makes in its transaction, like a claim: the epoch of the
   * lease now is still the pipeline's ({@link LeaderLease#epochFenceHolds}), and this instance
   * still holds that lease; {@code null} when this instance knows it lost the lease.
   */
  LedgerWatermarks.Fence ledgerFence() {
    if (!held()) {
      return null; // lost already: no database round trip (it may be cut off)
    }
    LeaderLease l = lease();
    long epoch = l.epoch();
    return c -> l.epochFenceHolds(c, epoch) && l.held() && l.epoch() == epoch;
  }

  /**
   * Gives leadership up (the pipeline's lanes made no progress) and tries again only after {@code
   * pause}, so that a standby can take over.
   */
  void yieldFor(Duration pause) {
    keeper.yieldFor(pause);
  }

  /**
   * Blocks until the lock is taken, reporting standby while another instance holds it.
   *
   * @param closed when it turns true, gives up with an {@link InterruptedException}
   * @throws SourceException when the database cannot be reached
   */
  void acquire(BooleanSupplier closed) throws InterruptedException {
    boolean taken =
        keeper.acquire(
            () -> {
              log.info(
                  "pipeline {}: another instance is active for {}; standing by, checking every {}"
                      + " ms",
                  pipeline,
                  table,
                  settings.standbyCheckInterval().toMillis());
              roles.accept(Role.STANDBY);
            },
            closed);
    if (taken) {
      log.info("pipeline {}: this instance is now the active one for {}", pipeline, table);
    }
  }

  /** Gives the lock up (by ending its session). */
  void release() {
    keeper.release();
  }

  /** Releases the lock and stops the watchdog. */
  void close() {
    keeper.close();
  }
}
