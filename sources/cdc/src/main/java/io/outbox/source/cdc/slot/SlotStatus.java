package io.outbox.source.cdc.slot;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.SourceException;
import io.outbox.source.cdc.CdcConnections;
import io.outbox.source.cdc.CdcSettings;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import java.util.OptionalDouble;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the CDC source reports of its slot, each on a dedicated session: the backlog with the WAL
 * the slot retains and its share of {@code max_slot_wal_keep_size} (warned about once per crossing
 * of {@code wal-keep-warning}), and whether the slot's creation is blocked.
 */
public final class SlotStatus {

  private static final Logger log = LoggerFactory.getLogger(SlotStatus.class);

  private final CdcSettings settings;
  private final OutboxTables tables;
  private final String pipeline;
  private final CdcConnections connections;
  private final SlotCreation creation;
  private volatile boolean walKeepWarned;

  public SlotStatus(
      CdcSettings settings,
      OutboxTables tables,
      String pipeline,
      CdcConnections connections,
      SlotCreation creation) {
    this.settings = settings;
    this.tables = tables;
    this.pipeline = pipeline;
    this.connections = connections;
    this.creation = creation;
  }

  /**
   * The WAL the pipeline's slot keeps from being recycled, in bytes; -1 when the slot does not
   * exist.
   *
   * @throws SourceException when the database cannot be reached
   */
  public long retainedWalBytes() {
    try (Connection c = connections.dedicated("status")) {
      return new SlotGuard(settings, tables, pipeline, connections.where()).retainedWalBytes(c);
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": cannot read slot "
              + settings.slotName()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * The backlog, with the slot's retained WAL ({@code pg_current_wal_lsn() - restart_lsn}) once the
   * slot exists.
   *
   * @throws SourceException when the database cannot be reached
   */
  public Backlog backlog() {
    try (Connection c = connections.dedicated("status")) {
      SlotGuard guard = new SlotGuard(settings, tables, pipeline, connections.where());
      Backlog backlog = guard.backlog(c).withSlotCreationBlocked(creation.blocked());
      OptionalDouble share = guard.walKeepShare(c);
      if (share.isEmpty()) {
        return backlog;
      }
      warnIfNearInvalidation(share.getAsDouble(), backlog);
      return backlog.withWalKeepShare(share.getAsDouble());
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": cannot read the backlog of "
              + tables.displayTable()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** A warning once per crossing of {@code wal-keep-warning}, and again after it fell back. */
  private void warnIfNearInvalidation(double share, Backlog backlog) {
    boolean near = share >= settings.walKeepWarning();
    if (near && !walKeepWarned) {
      log.warn(
          "pipeline {}: replication slot {} retains {} bytes of WAL, {} % of"
              + " max_slot_wal_keep_size (warning at {} %); at 100 % PostgreSQL invalidates it and"
              + " the stream is lost (on-slot-loss = {})",
          pipeline,
          settings.slotName(),
          backlog.retainedWalBytes().orElse(-1),
          Math.round(share * 100),
          Math.round(settings.walKeepWarning() * 100),
          settings.onSlotLoss().name().toLowerCase(Locale.ROOT));
    }
    walKeepWarned = near;
  }
}
