package io.outbox.source.cdc.slot;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.cdc.CdcConnections;
import io.outbox.source.cdc.CdcSettings;
import io.outbox.source.cdc.lease.CdcLeaderLock;
import io.outbox.source.cdc.table.CatchUp;
import io.outbox.source.cdc.table.CatchUpMarker;
import io.outbox.source.postgres.DeadLetterTableCheck;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an activation does with the slot, holding the lease, before a session streams from it: ends
 * a replication connection still on it, checks it (with the publication and the dead-letter table),
 * creates it when it is new ({@link SlotCreation}, the {@link CatchUpMarker} written first) and
 * reads what is to be caught up (for a slot that exists: every row pending at the activation);
 * after a start given up, ends the replication connection the engine may have left on it.
 */
public final class SlotSetup {

  private static final Logger log = LoggerFactory.getLogger(SlotSetup.class);

  private final CdcSettings settings;
  private final DatabaseSettings database;
  private final OutboxTables tables;
  private final String pipeline;
  private final CdcConnections connections;
  private final CdcLeaderLock leader;
  private final SlotCreation creation;

  public SlotSetup(
      CdcSettings settings,
      DatabaseSettings database,
      OutboxTables tables,
      String pipeline,
      CdcConnections connections,
      CdcLeaderLock leader,
      Ticker ticker) {
    this.settings = settings;
    this.database = database;
    this.tables = tables;
    this.pipeline = pipeline;
    this.connections = connections;
    this.leader = leader;
    this.creation = new SlotCreation(connections, settings.slotName(), pipeline, ticker);
  }

  /**
   * What any instance checks before it competes for leadership ({@link SlotGuard#preflight}):
   * {@code wal_level} and the role's REPLICATION privilege.
   */
  public void preflight(Connection c) throws SQLException {
    new SlotGuard(settings, tables, pipeline, connections.where()).preflight(c);
  }

  /** The slot's creation, for its gauge and to cancel it on close. */
  public SlotCreation creation() {
    return creation;
  }

  /**
   * Makes the slot ready to stream from.
   *
   * @param closed true once the source closes: a creation under way is given up
   * @return what is to be caught up from the table ahead of the stream: for a new slot, the rows up
   *     to the highest id at its creation; for a slot that exists, every row still pending up to
   *     the highest id now
   * @throws SourceException naming what is wrong with the slot, or a database failure
   */
  public CatchUp.Bound prepare(BooleanSupplier closed) throws InterruptedException {
    leader.freeSlot(settings.slotName());
    boolean newSlot = onCheckSession(this::check) == SlotGuard.SlotState.NEW;
    if (newSlot) {
      // The marker first: an instance killed once the slot exists still catches up.
      onCheckSession(
          c -> {
            CatchUpMarker.begin(c, leader::checkFence, tables, pipeline);
            return null;
          });
      creation.create(() -> !closed.getAsBoolean() && leader.held());
    }
    OptionalLong marked =
        onCheckSession(c -> CatchUpMarker.pending(c, leader::checkFence, tables, pipeline));
    if (marked.isPresent() && !newSlot) {
      log.info(
          "pipeline {}: resuming the catch-up of slot {} (rows up to id {}), not finished before"
              + " (a restart or a hand-over in the middle)",
          pipeline,
          settings.slotName(),
          marked.getAsLong());
    }
    if (newSlot) {
      return new CatchUp.Bound(marked.orElse(0), true);
    }
    // The stream resumes at the stored position, but a row pending now may be behind it (a
    // position stored past a row that was not final, or a row the stream skipped): every row
    // pending now is read ahead of the stream, so none waits for the sweep or goes out of order.
    long highest = onCheckSession(c -> CatchUpMarker.highestId(c, tables));
    return new CatchUp.Bound(Math.max(highest, marked.orElse(0)), marked.isPresent());
  }

  /**
   * After a start given up: ends the replication connection an engine that did not stop in time may
   * still hold the slot with (its task then fails and its threads end), before the lease goes.
   */
  public void endAbandonedEngine() {
    if (!leader.held()) {
      return; // the instance that took over frees the slot itself
    }
    try {
      leader.freeSlot(settings.slotName(), "this instance's engine, whose start was given up");
    } catch (SourceException e) {
      log.warn("pipeline {}: {}", pipeline, e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The publication, the slot against the stored offsets, and the dead-letter table. */
  private SlotGuard.SlotState check(Connection c) throws SQLException {
    SlotGuard.SlotState state =
        new SlotGuard(settings, tables, pipeline, connections.where()).check(c);
    Optional<String> deadLetters =
        DeadLetterTableCheck.problem(c, tables, !database.retention().deadLetters().isZero());
    if (deadLetters.isPresent()) {
      throw new SourceException("pipeline " + pipeline + ": " + deadLetters.get());
    }
    return state;
  }

  /** What the activation reads and writes on a session of its own. */
  private interface CheckStep<T> {
    T run(Connection c) throws SQLException;
  }

  private <T> T onCheckSession(CheckStep<T> step) {
    try (Connection c = connections.dedicated("check")) {
      return step.run(c);
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": cannot check the replication slot on "
              + connections.where()
              + ": "
              + e.getMessage(),
          e);
    }
  }
}
