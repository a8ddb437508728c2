package io.outbox.relay.spi;

/**
 * The ledger of an exactly-once pipeline cannot be trusted (deleted, recreated, compacted, records
 * expired before they were settled, unreadable): publishing could re-send events that are already
 * in the broker, so the pipeline stops instead. The message says how to recover.
 */
public class LedgerException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public LedgerException(String message) {
    super(message);
  }

  public LedgerException(String message, Throwable cause) {
    super(message, cause);
  }
}
