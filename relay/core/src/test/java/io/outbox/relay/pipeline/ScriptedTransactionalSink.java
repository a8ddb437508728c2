package io.outbox.relay.pipeline;

import io.outbox.relay.spi.LedgerEntry;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.SinkTransaction;
import io.outbox.relay.spi.TransactionalSink;
import io.outbox.relay.spi.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/** Answers each transaction with the script's outcome, or commits it when the script says null. */
final class ScriptedTransactionalSink implements TransactionalSink {
  final List<List<RoutedEvent>> transactions = new ArrayList<>();
  final List<LedgerRecord> ledgers = new ArrayList<>();
  private final Function<List<RoutedEvent>, SinkTransaction> script;

  /** How many of the next ledger reads fail as if the broker were away. */
  final java.util.concurrent.atomic.AtomicInteger failingLedgerReads =
      new java.util.concurrent.atomic.AtomicInteger();

  final java.util.concurrent.atomic.AtomicInteger ledgerReads =
      new java.util.concurrent.atomic.AtomicInteger();

  /**
   * When set, the next transaction's outcome waits for this future (completed with {@code null}:
   * committed). Meanwhile {@link #fence} waits too, as a real sink's lane thread is busy with it.
   */
  volatile CompletableFuture<SinkTransaction> stalled;

  private volatile CompletableFuture<SinkTransaction> inFlight =
      CompletableFuture.completedFuture(null);

  /** Per ledger partition, where every transaction is decided, as {@link #readLedger} says. */
  volatile Map<Integer, Long> decidedTo = Map.of();

  /** The committed transactions' ledger entries, which {@link #readLedger} answers with. */
  final List<LedgerEntry> committed = new java.util.concurrent.CopyOnWriteArrayList<>();

  ScriptedTransactionalSink(Function<List<RoutedEvent>, SinkTransaction> script) {
    this.script = script;
  }

  @Override
  public CompletionStage<SinkTransaction> publish(
      int lane, List<RoutedEvent> events, LedgerRecord ledger) {
    transactions.add(List.copyOf(events));
    ledgers.add(ledger);
    LedgerPosition position = new LedgerPosition(lane, transactions.size() - 1);
    CompletableFuture<SinkTransaction> stall = stalled;
    stalled = null;
    CompletableFuture<SinkTransaction> outcome =
        (stall != null ? stall : CompletableFuture.completedFuture(script.apply(events)))
            .thenApply(
                t -> {
                  if (t != null) {
                    return t;
                  }
                  committed.add(new LedgerEntry(position, ledger));
                  return new SinkTransaction.Committed(position);
                });
    inFlight = outcome;
    return outcome;
  }

  @Override
  public void fence(List<Integer> lanes) {
    inFlight.join(); // registering a new producer waits for the lane's transaction in progress
  }

  @Override
  public void fenceInDoubt(int lane) {
    inFlight.join();
  }

  @Override
  public io.outbox.relay.spi.LedgerRead readLedger(Map<Integer, Long> settled, Duration timeout) {
    ledgerReads.incrementAndGet();
    if (failingLedgerReads.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      throw new IllegalStateException("Timed out waiting for a node assignment");
    }
    List<LedgerEntry> past = new ArrayList<>();
    for (LedgerEntry e : committed) {
      if (e.position().offset() > settled.getOrDefault(e.position().partition(), -1L)) {
        past.add(e);
      }
    }
    return new io.outbox.relay.spi.LedgerRead(past, decidedTo);
  }

  @Override
  public String ledgerName() {
    return "ledger";
  }

  @Override
  public CompletionStage<List<Verdict>> publish(List<RoutedEvent> batch) {
    throw new UnsupportedOperationException();
  }

  @Override
  public boolean probe(Duration timeout) {
    return true;
  }

  @Override
  public void close(Duration timeout) {}
}
