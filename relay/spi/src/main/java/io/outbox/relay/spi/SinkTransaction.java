package io.outbox.relay.spi;

import java.util.List;
import java.util.Objects;

/** What became of one transaction of a {@link TransactionalSink}. */
public sealed interface SinkTransaction {

  /**
   * Committed: every event and the ledger record are visible to {@code read_committed} readers.
   *
   * @param position where the ledger record of the transaction was written
   */
  record Committed(LedgerPosition position) implements SinkTransaction {
    public Committed {
      Objects.requireNonNull(position, "position");
    }
  }

  /**
   * Aborted because of some of its events: nothing of it is visible.
   *
   * @param verdicts one per event, in order: the failure of each event that caused the abort;
   *     {@link Verdict#published()} for an event that was fine but rolled back with the rest
   */
  record Aborted(List<Verdict> verdicts) implements SinkTransaction {
    public Aborted {
      verdicts = List.copyOf(verdicts);
    }
  }

  /**
   * Another instance took over the lane: this instance's transactional publisher was fenced and
   * nothing of the transaction is visible. The instance must stand down without settling.
   */
  record Fenced(String error) implements SinkTransaction {
    public Fenced {
      Objects.requireNonNull(error, "error");
    }
  }

  /**
   * The broker could not be reached, or failed the transaction as a whole.
   *
   * @param error one line
   * @param inDoubt {@code true} when the commit was attempted and its outcome is unknown: the
   *     ledger, not a re-send, tells whether the events were published
   */
  record Failed(String error, boolean inDoubt) implements SinkTransaction {
    public Failed {
      Objects.requireNonNull(error, "error");
    }
  }
}
