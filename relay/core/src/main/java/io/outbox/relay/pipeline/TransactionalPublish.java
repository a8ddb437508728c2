package io.outbox.relay.pipeline;

import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.SinkTransaction;
import io.outbox.relay.spi.TransactionalSink;
import io.outbox.relay.spi.Verdict;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes one lane's batch through a {@link TransactionalSink} (exactly-once): the batch is one
 * transaction with its ledger record. When events are at fault the transaction aborts, they get
 * their verdicts (dead-lettered or retried), and the rest goes again in a new transaction, with the
 * dead-letter copies of the offenders in it; a transaction aborted with no event at fault is split
 * in halves until the offender is alone. A key with an event that failed holds back its later
 * events, so per-key order holds.
 */
final class TransactionalPublish {

  /** What the lane provides. */
  interface Driver {
    /** The first transaction is on its way: the lane may do other work meanwhile. */
    void started() throws InterruptedException;

    /** Waits for the outcome; {@code null} when the lane must abandon the batch. */
    SinkTransaction await(CompletableFuture<SinkTransaction> transaction)
        throws InterruptedException;

    /** The settlement the planner will record for {@code event} with {@code verdict}. */
    Settlement planned(OutboxEvent event, Verdict verdict);

    /** The dead-letter copy of {@code deadLetter}, or {@code null} when none is configured. */
    RoutedEvent copyOf(Settlement.DeadLetter deadLetter);
  }

  /** How the batch ended. */
  enum Ending {
    /** Every event has a verdict; committed transactions (if any) are in {@code committed}. */
    DONE,
    /** The batch was abandoned (stop deadline, claim no longer owned). */
    ABANDONED,
    /** Another instance fenced this one: settle nothing. */
    FENCED,
    /** A commit's outcome is unknown: settle nothing, recover from the ledger first. */
    IN_DOUBT
  }

  /**
   * @param ending how it ended
   * @param committed the ledger position of the batch's last committed transaction, or {@code null}
   * @param error for {@link Ending#FENCED} and {@link Ending#IN_DOUBT}, why
   */
  record Result(Ending ending, LedgerPosition committed, String error) {}

  /**
   * Test hook (ExactlyOnceIT, scripts/exactly-once-long.sh): when the environment variable {@value
   * #CRASH_HOOK} is n &gt; 0, the process halts right after its n-th commit, before the settlement,
   * like a {@code kill -9} at the worst moment. Read only here.
   */
  static final String CRASH_HOOK = "OUTBOX_RELAY_TEST_CRASH_AFTER_COMMITS";

  private static final Verdict ROLLED_BACK =
      Verdict.retryable("rolled back with its transaction, aborted for another event");

  private static final long CRASH_AFTER_COMMITS = crashAfterCommits();
  private static final AtomicLong COMMITS = new AtomicLong();

  private final TransactionalSink sink;
  private final int lane;
  private final PipelineStats stats;
  private final MessageForm form;
  private final EventTracing tracing;

  TransactionalPublish(
      TransactionalSink sink,
      int lane,
      PipelineStats stats,
      MessageForm form,
      EventTracing tracing) {
    this.sink = sink;
    this.lane = lane;
    this.stats = stats;
    this.form = form;
    this.tracing = tracing;
  }

  /**
   * Publishes the events of {@code positions}; fills in their verdicts.
   *
   * @param claimIdentity the claim's identity, for the ledger
   * @param events the batch
   * @param destinations per event, its destination
   * @param verdicts per event, its verdict; those already set are not published
   */
  Result publish(
      String claimIdentity,
      List<OutboxEvent> events,
      String[] destinations,
      Verdict[] verdicts,
      Driver driver)
      throws InterruptedException {
    Deque<List<Integer>> groups = new ArrayDeque<>();
    List<Integer> all = new ArrayList<>();
    for (int i = 0; i < events.size(); i++) {
      if (verdicts[i] == null) {
        all.add(i);
      }
    }
    groups.add(all);
    KeyOrder.Held held = new KeyOrder.Held();
    List<RoutedEvent> copies = new ArrayList<>();
    for (int i = 0; i < events.size(); i++) {
      if (verdicts[i] != null) {
        addCopy(driver, events.get(i), verdicts[i], copies);
      }
    }
    LedgerPosition committed = null;
    boolean started = false;
    while (!groups.isEmpty()) {
      List<Integer> group = new ArrayList<>();
      for (int i : groups.removeFirst()) {
        if (verdicts[i] != null) {
          continue;
        }
        if (held.holds(events.get(i))) {
          verdicts[i] = KeyOrder.Held.heldBack();
        } else {
          group.add(i);
        }
      }
      if (group.isEmpty() && (copies.isEmpty() || !groups.isEmpty())) {
        continue;
      }
      List<RoutedEvent> routed = new ArrayList<>(group.size() + copies.size());
      List<LedgerRecord.Event> published = new ArrayList<>(group.size());
      for (int i : group) {
        routed.add(form.routed(events.get(i), destinations[i]));
        published.add(LedgerRecord.Event.of(events.get(i)));
      }
      routed.addAll(copies);
      stats.attempts.increment(group.size());
      EventTracing.Wave traced = tracing.publishing(routed);
      CompletableFuture<SinkTransaction> future =
          sink.publish(lane, traced.routed(), new LedgerRecord(lane, claimIdentity, published))
              .toCompletableFuture();
      if (!started) {
        started = true;
        driver.started();
      }
      SinkTransaction outcome = driver.await(future);
      traced(traced, outcome);
      if (outcome == null) {
        return new Result(Ending.ABANDONED, committed, null);
      }
      if (outcome instanceof SinkTransaction.Committed c) {
        stats.transactionsCommitted.increment();
        committed = c.position();
        if (CRASH_AFTER_COMMITS > 0 && COMMITS.incrementAndGet() == CRASH_AFTER_COMMITS) {
          System.err.println(
              "outbox-relay: " + CRASH_HOOK + ": halting after commit " + c.position());
          Runtime.getRuntime().halt(137);
        }
        group.forEach(i -> verdicts[i] = Verdict.published());
        copies.clear();
      } else if (outcome instanceof SinkTransaction.Fenced f) {
        stats.fenced.increment();
        return new Result(Ending.FENCED, committed, f.error());
      } else if (outcome instanceof SinkTransaction.Failed f) {
        stats.transactionsFailed.increment();
        if (f.inDoubt()) {
          return new Result(Ending.IN_DOUBT, committed, f.error());
        }
        for (int i = 0; i < verdicts.length; i++) {
          if (verdicts[i] == null) {
            verdicts[i] = Verdict.unavailable(f.error());
          }
        }
        return new Result(Ending.DONE, committed, null);
      } else if (outcome instanceof SinkTransaction.Aborted a) {
        stats.transactionsAborted.increment();
        aborted(a, group, events, verdicts, held, copies, groups, driver);
      }
    }
    return new Result(Ending.DONE, committed, null);
  }

  /** Judges the events at fault, and queues the rest again (in halves when none was at fault). */
  private void aborted(
      SinkTransaction.Aborted a,
      List<Integer> group,
      List<OutboxEvent> events,
      Verdict[] verdicts,
      KeyOrder.Held held,
      List<RoutedEvent> copies,
      Deque<List<Integer>> groups,
      Driver driver) {
    List<Verdict> answered = a.verdicts();
    boolean culprit = false;
    for (int j = 0; j < group.size() && j < answered.size(); j++) {
      Verdict v = answered.get(j);
      if (!v.isPublished()) {
        int i = group.get(j);
        culprit = true;
        verdicts[i] = v;
        stats.failed(v);
        held.record(events.get(i), v);
        addCopy(driver, events.get(i), v, copies);
      }
    }
    for (int j = group.size(); !culprit && j < answered.size(); j++) {
      if (!answered.get(j).isPublished()) {
        // A dead-letter copy failed: the copies are best effort (the table is the truth), so
        // they are dropped rather than hold the batch back.
        copies.clear();
        culprit = true;
      }
    }
    if (group.isEmpty()) {
      copies.clear(); // only copies were in it: best effort, given up
      return;
    }
    if (culprit) {
      groups.addFirst(group);
      return;
    }
    if (group.size() == 1) {
      int i = group.get(0);
      verdicts[i] =
          Verdict.retryable("Kafka aborted the transaction of this event, with no event at fault");
      stats.failed(verdicts[i]);
      held.record(events.get(i), verdicts[i]);
      addCopy(driver, events.get(i), verdicts[i], copies);
      return;
    }
    int half = group.size() / 2;
    groups.addFirst(new ArrayList<>(group.subList(half, group.size())));
    groups.addFirst(new ArrayList<>(group.subList(0, half)));
  }

  /** Ends the publish spans of a transaction's events with its outcome. */
  private static void traced(EventTracing.Wave traced, SinkTransaction outcome) {
    if (outcome instanceof SinkTransaction.Committed) {
      traced.published();
    } else if (outcome instanceof SinkTransaction.Aborted a) {
      // An event that was fine was rolled back with the rest, and goes again in a new span.
      traced.answered(a.verdicts().stream().map(v -> v.isPublished() ? ROLLED_BACK : v).toList());
    } else if (outcome instanceof SinkTransaction.Fenced f) {
      traced.failed("fenced: " + f.error());
    } else if (outcome instanceof SinkTransaction.Failed f) {
      traced.failed(f.error());
    } else {
      traced.failed("abandoned before the transaction's outcome");
    }
  }

  private static long crashAfterCommits() {
    String value = System.getenv(CRASH_HOOK);
    try {
      return value == null ? 0 : Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private static void addCopy(
      Driver driver, OutboxEvent event, Verdict verdict, List<RoutedEvent> copies) {
    if (driver.planned(event, verdict) instanceof Settlement.DeadLetter d) {
      RoutedEvent copy = driver.copyOf(d);
      if (copy != null) {
        copies.add(copy);
      }
    }
  }
}
