package io.outbox.sink.kafka;

import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.RoutedEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.common.TopicPartition;

/**
 * What is known of one lane's batch between "sent" and "settled", and the only rules for moving
 * from one state to the next (issue #30 point 1): the lane ({@link TransactionalLane}) reports each
 * step of its transaction here and does what the answer says; the check for hanging transactions at
 * its next fence is resolved here too ({@link #resolve}).
 *
 * <p>A state another instance or a restart must see is in the ledger topic, not in memory: a batch
 * is {@link State#COMMITTED} for every reader once its ledger record is committed with no distrust
 * marker after it on the lane's partition; {@link State#DISTRUSTED} once such a marker follows it
 * (the marker is written <em>before</em> the hanging parts are aborted, so that no crash in between
 * leaves a record trusted whose events were aborted); {@link State#ABORTED} when its record was
 * aborted or never written; {@link State#IN_DOUBT} and {@link State#ABANDONED} while its
 * transaction is open, which the next fence's check for hanging transactions decides. Pure logic:
 * {@code BatchFateTest} covers every transition.
 */
final class BatchFate {

  /** The states of a batch. */
  enum State {
    /** Begun; its events are being sent. Nothing of it is in the ledger. */
    SENDING,
    /** Every event and the ledger record acknowledged, the commit asked for. */
    COMMITTING,
    /** Its commit markers are written on every partition it wrote: settled from the commit. */
    COMMITTED,
    /** Rolled back everywhere: its events are sent again, once. */
    ABORTED,
    /**
     * Its abort failed before the commit was asked for: open, never committed, and without a ledger
     * record; the next registration of the lane's producer ends it, or the check finds it hanging.
     */
    ABANDONED,
    /**
     * The commit was asked for and its outcome is unknown: the next fence's check for hanging
     * transactions, then the ledger, decide.
     */
    IN_DOUBT,
    /**
     * Was in doubt; the check after the fence found nothing of it open: the coordinator decided it,
     * and the ledger says which way ({@link #ledgerRead}).
     */
    DECIDED,
    /**
     * Its ledger record was committed while some of its events were aborted (a broker crash wrote
     * the markers on some partitions only): a distrust marker follows the record in the ledger, and
     * its events are sent again (at least once).
     */
    DISTRUSTED,
    /**
     * Committed on some of its partitions and aborted on the others, its ledger record among the
     * aborted: sent again, its events on the committed partitions read twice (at least once).
     */
    PARTIALLY_COMMITTED
  }

  private volatile State state = State.SENDING; // read by a ledger read on another thread
  private final List<RoutedEvent> events;
  // Per event, the partition where the broker acknowledged it (null: not acknowledged).
  private final TopicPartition[] partitionOf;
  private TopicPartition ledgerPartition; // once the commit was asked for
  private long ledgerOffset = -1;

  /** A batch of {@code events} just begun. */
  BatchFate(List<RoutedEvent> events) {
    this.events = events;
    this.partitionOf = new TopicPartition[events.size()];
  }

  State state() {
    return state;
  }

  /** The partitions its acknowledged records went to, so far, the ledger record's included. */
  Set<TopicPartition> written() {
    Set<TopicPartition> written = new HashSet<>();
    for (TopicPartition tp : partitionOf) {
      if (tp != null) {
        written.add(tp);
      }
    }
    if (ledgerPartition != null) {
      written.add(ledgerPartition);
    }
    return written;
  }

  /** The ids of its events acknowledged on {@code partitions}. */
  List<UUID> eventIdsOn(Set<TopicPartition> partitions) {
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < partitionOf.length; i++) {
      if (partitionOf[i] != null && partitions.contains(partitionOf[i])) {
        ids.add(events.get(i).event().eventId());
      }
    }
    return ids;
  }

  /**
   * Its event {@code event} (index in the batch) was acknowledged on {@code partition}. On the
   * per-event path: one array store.
   */
  void acknowledged(int event, TopicPartition partition) {
    if (state != State.SENDING) {
      throw new IllegalStateException("a batch " + state + " cannot be a record acknowledged");
    }
    partitionOf[event] = partition;
  }

  /**
   * Every event and the ledger record (at {@code ledgerOffset} of the lane's ledger partition
   * {@code ledger}) were acknowledged; the commit is asked for.
   */
  void commitAsked(TopicPartition ledger, long ledgerOffset) {
    move("the commit asked for", State.COMMITTING, State.SENDING);
    this.ledgerPartition = ledger;
    this.ledgerOffset = ledgerOffset;
  }

  /** Where its ledger record is on the lane's ledger partition; -1 when none was written. */
  long ledgerOffset() {
    return ledgerOffset;
  }

  /**
   * Aborted by the lane (an event failed), or the commit was refused and the abort went through.
   */
  void rolledBack() {
    move("rolled back", State.ABORTED, State.SENDING, State.COMMITTING);
  }

  /** The abort (or the commit) failed without an answer: the transaction may still be open. */
  void endUnknown() {
    expect("ended without an answer", State.SENDING, State.COMMITTING);
    state = state == State.SENDING ? State.ABANDONED : State.IN_DOUBT;
  }

  /** Its commit markers were found written on every partition it wrote. */
  void markersConfirmed() {
    move("its markers confirmed", State.COMMITTED, State.COMMITTING);
  }

  /** Its commit markers were not all found written within the bound. */
  void markersUnconfirmed() {
    move("its markers not confirmed", State.IN_DOUBT, State.COMMITTING);
  }

  /**
   * The next fence's check found nothing of the lane's earlier producers open, or only transactions
   * of earlier batches: the coordinator decided this one. An abandoned batch was aborted; one in
   * doubt is {@link State#DECIDED}, the ledger says which way ({@link #ledgerRead}).
   */
  void nothingHanging() {
    expect("checked, nothing of it hanging", State.ABANDONED, State.IN_DOUBT);
    state = state == State.ABANDONED ? State.ABORTED : State.DECIDED;
  }

  /**
   * The ledger was read after the fence: its record committed ({@code committed}: read, or settled
   * already), and followed by a distrust marker or not.
   */
  void ledgerRead(boolean committed, boolean distrusted) {
    expect("decided by the ledger", State.DECIDED);
    state = !committed ? State.ABORTED : distrusted ? State.DISTRUSTED : State.COMMITTED;
  }

  /**
   * A ledger read after the fence ({@code settled}: the watermark it was read from) decides a
   * {@link State#DECIDED} batch of lane {@code lane}: its record read (committed), settled already
   * (committed), dropped by a distrust marker (distrusted), or neither (aborted). Nothing for a
   * batch in any other state. Safe from another thread than the lane's: a decided batch is not
   * touched by the lane again.
   */
  synchronized void decideFrom(LedgerTopic.Read read, Map<Integer, Long> settled, int lane) {
    if (state != State.DECIDED) {
      return;
    }
    LedgerPosition at = new LedgerPosition(lane, ledgerOffset);
    boolean distrusted = read.distrusted().contains(at);
    boolean committed =
        distrusted
            || ledgerOffset <= settled.getOrDefault(lane, -1L)
            || read.read().entries().stream().anyMatch(e -> e.position().equals(at));
    ledgerRead(committed, distrusted);
  }

  /** The check found parts of this batch open, and {@code resolution} was carried out. */
  void resolved(Resolution resolution) {
    expect("resolved after the check", State.ABANDONED, State.IN_DOUBT);
    if (resolution.batch() == State.DECIDED || resolution.batch() == null) {
      nothingHanging();
    } else {
      state = resolution.batch();
    }
  }

  /** Whether the batch is still open as far as the lane knows: its next fence must check. */
  boolean open() {
    return state == State.SENDING
        || state == State.COMMITTING
        || state == State.ABANDONED
        || state == State.IN_DOUBT;
  }

  /** A transaction of one of the lane's earlier producers found open on {@code partition}. */
  record Hanging(TopicPartition partition, long producerId, int producerEpoch) {}

  /**
   * What the check's findings mean and what the lane does about them, in this order: write a
   * distrust marker first when {@code distrustFirst}, then abort every hanging transaction.
   *
   * @param distrustFirst whether a hanging transaction is open on event partitions but not on the
   *     lane's ledger partition, so that its ledger record may be committed while those events are
   *     aborted
   * @param readTwice the partitions of the lane's last batch where it was committed while other
   *     parts of it hang (its events there are read twice once it is sent again)
   * @param batch what the lane's last batch becomes; null when the lane's last batch was not open
   */
  record Resolution(boolean distrustFirst, Set<TopicPartition> readTwice, State batch) {}

  /**
   * Resolves what the check for hanging transactions found on the lane's partitions.
   *
   * @param found the hanging transactions, per partition
   * @param ledger the lane's ledger partition
   * @param last the lane's last batch if it is still open as far as the lane knows ({@link #open}),
   *     else null: the transactions found then belong to an earlier instance or run, whose batches
   *     are unknown
   */
  static Resolution resolve(List<Hanging> found, TopicPartition ledger, BatchFate last) {
    Map<String, Set<TopicPartition>> byTransaction = new HashMap<>();
    for (Hanging h : found) {
      byTransaction
          .computeIfAbsent(h.producerId() + "/" + h.producerEpoch(), k -> new HashSet<>())
          .add(h.partition());
    }
    // A transaction open elsewhere but not on the ledger partition: its ledger record may be
    // committed (the markers landed there) while its events are aborted now. Not so for the lane's
    // last batch when it never asked for the commit (no ledger record was sent).
    boolean recordMayBeCommitted = last == null || last.state != State.ABANDONED;
    boolean apart =
        recordMayBeCommitted
            && byTransaction.values().stream().anyMatch(parts -> !parts.contains(ledger));
    if (last == null) {
      return new Resolution(apart, Set.of(), null);
    }
    Set<TopicPartition> hanging = new HashSet<>();
    found.forEach(h -> hanging.add(h.partition()));
    Set<TopicPartition> lastWritten = last.written();
    if (lastWritten.stream().noneMatch(hanging::contains)) {
      // Nothing of the last batch hangs: the coordinator decided it.
      return new Resolution(
          apart, Set.of(), last.state == State.ABANDONED ? State.ABORTED : State.DECIDED);
    }
    if (last.state == State.ABANDONED) {
      return new Resolution(false, Set.of(), State.ABORTED);
    }
    lastWritten.removeAll(hanging);
    if (!hanging.contains(ledger)) {
      // Its ledger record is committed while parts of its events are aborted now: the record is
      // distrusted and the batch sent again; its events where it was committed are read twice.
      lastWritten.remove(ledger);
      return new Resolution(true, Set.copyOf(lastWritten), State.DISTRUSTED);
    }
    return lastWritten.isEmpty()
        ? new Resolution(apart, Set.of(), State.ABORTED)
        : new Resolution(apart, Set.copyOf(lastWritten), State.PARTIALLY_COMMITTED);
  }

  private void move(String what, State to, State... from) {
    expect(what, from);
    state = to;
  }

  private void expect(String what, State... from) {
    for (State s : from) {
      if (state == s) {
        return;
      }
    }
    throw new IllegalStateException("a batch " + state + " cannot be " + what);
  }
}
