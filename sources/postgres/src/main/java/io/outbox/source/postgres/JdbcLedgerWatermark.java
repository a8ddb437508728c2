package io.outbox.source.postgres;

import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.LedgerWatermark;
import io.outbox.relay.spi.SourceException;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A {@link LedgerWatermark} kept in a SQL table by a source's own statements ({@link Store}): turns
 * a store that reports "fenced" into {@link LeadershipLostException} and a failed statement into
 * {@link SourceException}, with messages naming the pipeline and the ledger position.
 */
public final class JdbcLedgerWatermark implements LedgerWatermark {

  /** The source's statements, each in a database transaction of its own. */
  public interface Store {
    /**
     * Per ledger partition, the last settled offset, read only while this instance is the active
     * one.
     *
     * @return the offsets; {@code null} when this instance is no longer the active one
     */
    Map<Integer, Long> read() throws SQLException;

    /**
     * Settles the rows named (by row id, their event ids) and advances the watermark of {@code
     * position}'s partition, in one transaction, unless this instance is no longer the active one.
     *
     * @return how many rows it settled; -1 when this instance is no longer the active one (nothing
     *     written)
     */
    int settle(LedgerPosition position, Map<Long, UUID> named) throws SQLException;
  }

  private final String pipeline;
  private final Store store;

  public JdbcLedgerWatermark(String pipeline, Store store) {
    this.pipeline = pipeline;
    this.store = store;
  }

  @Override
  public Map<Integer, Long> settled() {
    Map<Integer, Long> settled;
    try {
      settled = store.read();
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline " + pipeline + ": reading the ledger watermark failed: " + e.getMessage(), e);
    }
    if (settled == null) {
      throw new LeadershipLostException(
          "pipeline "
              + pipeline
              + ": the active role was lost before the ledger was read; nothing registered or"
              + " settled");
    }
    return settled;
  }

  @Override
  public int settleFromLedger(LedgerPosition position, List<LedgerRecord.Event> events) {
    Map<Long, UUID> named = new LinkedHashMap<>();
    for (LedgerRecord.Event e : events) {
      named.put(e.id(), e.eventId());
    }
    int settled;
    try {
      settled = store.settle(position, named);
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": settling ledger record "
              + position
              + " failed: "
              + e.getMessage(),
          e);
    }
    if (settled < 0) {
      throw new LeadershipLostException(
          "pipeline "
              + pipeline
              + ": the active role was lost while settling the ledger; nothing settled");
    }
    return settled;
  }
}
