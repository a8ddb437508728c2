package io.outbox.relay.spi;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * A {@link Sink} that publishes a batch as one broker transaction, together with a ledger record
 * naming the batch's events, and fences earlier instances of the pipeline (exactly-once delivery,
 * {@code sink.kafka.delivery = exactly-once}).
 *
 * <p>The pipeline calls {@link #fence} each time this instance becomes active, then {@link
 * #readLedger} to settle what earlier instances committed but did not settle, and only then
 * publishes with {@link #publish(int, List, LedgerRecord)}; it never calls {@link Sink#publish} on
 * a transactional sink. Transactions of one lane are published one after the other.
 */
public interface TransactionalSink extends Sink {

  /**
   * Prepares one transactional publisher per lane, fencing whatever instance published for these
   * lanes before (its transactions still open are aborted, its later commits fail), and makes sure
   * the ledger exists. Blocking; called on activation, with every lane (the lanes of a former
   * configuration with more lanes are fenced too): what earlier instances left behind is unknown.
   * The pipeline calls it only once the database confirmed this instance's lease.
   *
   * @param lanes the lanes to prepare, each in {@code [0, lanes)} of the pipeline
   * @throws LedgerException when the ledger cannot be used (wrong layout, compacted)
   * @throws RuntimeException when the broker cannot be reached; the pipeline retries with backoff
   */
  void fence(List<Integer> lanes);

  /**
   * Registers lane {@code lane}'s publisher again after one of its transactions ended with an
   * unknown outcome ({@link SinkTransaction.Failed#inDoubt()}), within the activation that {@link
   * #fence} began: what may be left open is this instance's own, so only what the lane wrote is
   * checked. Blocking; the pipeline calls it only once the database confirmed this instance's
   * lease, then reads the ledger.
   *
   * @throws RuntimeException when the broker cannot be reached; the pipeline retries with backoff
   */
  void fenceInDoubt(int lane);

  /**
   * Publishes {@code events} and {@code ledger} as one transaction of lane {@code lane}.
   *
   * @return a stage completing with the transaction's outcome; never exceptionally
   */
  CompletionStage<SinkTransaction> publish(int lane, List<RoutedEvent> events, LedgerRecord ledger);

  /**
   * Reads, with {@code read_committed}, every ledger record committed after the offsets already
   * settled, up to the current end of the ledger.
   *
   * @param settled per ledger partition, the last offset whose events the source settled; a
   *     partition without an entry was never settled
   * @param timeout the bound on the whole read
   * @return the records, per partition in offset order, and how far each partition is decided
   * @throws LedgerException when the ledger is gone, was recreated, lost records past {@code
   *     settled} (retention too short) or holds a record this relay cannot read
   * @throws RuntimeException when the broker cannot be reached; the pipeline retries with backoff
   */
  LedgerRead readLedger(Map<Integer, Long> settled, Duration timeout);

  /** The name of the ledger (a topic), for messages and {@code status}. */
  String ledgerName();
}
