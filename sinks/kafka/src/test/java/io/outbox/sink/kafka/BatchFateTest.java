package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.sink.kafka.BatchFate.Hanging;
import io.outbox.sink.kafka.BatchFate.Resolution;
import io.outbox.sink.kafka.BatchFate.State;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Every transition of a batch's state, allowed or refused ({@link BatchFate}), and what the check
 * for hanging transactions resolves to.
 */
class BatchFateTest {
  private static final TopicPartition P1 = new TopicPartition("orders", 1);
  private static final TopicPartition P2 = new TopicPartition("orders", 2);
  private static final TopicPartition LEDGER = new TopicPartition("ledger", 0);
  private static final TopicPartition ELSEWHERE = new TopicPartition("payments", 0);

  /** A batch of {@code n} events. */
  private static BatchFate batchOf(int n) {
    List<io.outbox.relay.spi.RoutedEvent> events = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      events.add(Events.routed("orders", "k" + i, "{}"));
    }
    return new BatchFate(events);
  }

  /** The events a batch can meet, by name. */
  private static final Map<String, Consumer<BatchFate>> EVENTS = new LinkedHashMap<>();

  static {
    EVENTS.put("acknowledged", f -> f.acknowledged(0, P1));
    EVENTS.put("commitAsked", f -> f.commitAsked(LEDGER, 7));
    EVENTS.put("rolledBack", BatchFate::rolledBack);
    EVENTS.put("endUnknown", BatchFate::endUnknown);
    EVENTS.put("markersConfirmed", BatchFate::markersConfirmed);
    EVENTS.put("markersUnconfirmed", BatchFate::markersUnconfirmed);
    EVENTS.put("nothingHanging", BatchFate::nothingHanging);
    EVENTS.put("ledgerRead(aborted)", f -> f.ledgerRead(false, false));
    EVENTS.put("ledgerRead(committed)", f -> f.ledgerRead(true, false));
    EVENTS.put("ledgerRead(distrusted)", f -> f.ledgerRead(true, true));
    EVENTS.put(
        "resolved(aborted)", f -> f.resolved(new Resolution(false, Set.of(), State.ABORTED)));
  }

  /** The expected next state per state and event; an event not listed is refused. */
  private static final Map<State, Map<String, State>> ALLOWED = new EnumMap<>(State.class);

  static {
    allow(State.SENDING, "acknowledged", State.SENDING);
    allow(State.SENDING, "commitAsked", State.COMMITTING);
    allow(State.SENDING, "rolledBack", State.ABORTED);
    allow(State.SENDING, "endUnknown", State.ABANDONED);
    allow(State.COMMITTING, "rolledBack", State.ABORTED);
    allow(State.COMMITTING, "endUnknown", State.IN_DOUBT);
    allow(State.COMMITTING, "markersConfirmed", State.COMMITTED);
    allow(State.COMMITTING, "markersUnconfirmed", State.IN_DOUBT);
    allow(State.ABANDONED, "nothingHanging", State.ABORTED);
    allow(State.ABANDONED, "resolved(aborted)", State.ABORTED);
    allow(State.IN_DOUBT, "nothingHanging", State.DECIDED);
    allow(State.IN_DOUBT, "resolved(aborted)", State.ABORTED);
    allow(State.DECIDED, "ledgerRead(aborted)", State.ABORTED);
    allow(State.DECIDED, "ledgerRead(committed)", State.COMMITTED);
    allow(State.DECIDED, "ledgerRead(distrusted)", State.DISTRUSTED);
    // COMMITTED, ABORTED, DISTRUSTED and PARTIALLY_COMMITTED are final: every event is refused.
  }

  private static void allow(State from, String event, State to) {
    ALLOWED.computeIfAbsent(from, s -> new LinkedHashMap<>()).put(event, to);
  }

  /** A batch brought to {@code state} by the shortest path of allowed events. */
  private static BatchFate in(State state) {
    BatchFate f = batchOf(1);
    switch (state) {
      case SENDING -> {}
      case COMMITTING -> f.commitAsked(LEDGER, 7);
      case COMMITTED -> {
        f.commitAsked(LEDGER, 7);
        f.markersConfirmed();
      }
      case ABORTED -> f.rolledBack();
      case ABANDONED -> f.endUnknown();
      case IN_DOUBT -> {
        f.commitAsked(LEDGER, 7);
        f.markersUnconfirmed();
      }
      case DECIDED -> {
        f.commitAsked(LEDGER, 7);
        f.markersUnconfirmed();
        f.nothingHanging();
      }
      case DISTRUSTED -> {
        f.commitAsked(LEDGER, 7);
        f.markersUnconfirmed();
        f.resolved(new Resolution(true, Set.of(), State.DISTRUSTED));
      }
      case PARTIALLY_COMMITTED -> {
        f.commitAsked(LEDGER, 7);
        f.markersUnconfirmed();
        f.resolved(new Resolution(false, Set.of(P1), State.PARTIALLY_COMMITTED));
      }
    }
    assertThat(f.state()).isEqualTo(state);
    return f;
  }

  @Test
  void everyEventInEveryStateMovesAsTheTableSaysOrIsRefused() {
    int allowed = 0;
    int refused = 0;
    for (State from : State.values()) {
      Map<String, State> moves = ALLOWED.getOrDefault(from, Map.of());
      for (Map.Entry<String, Consumer<BatchFate>> event : EVENTS.entrySet()) {
        BatchFate f = in(from);
        State to = moves.get(event.getKey());
        if (to != null) {
          event.getValue().accept(f);
          assertThat(f.state()).as(from + " + " + event.getKey()).isEqualTo(to);
          allowed++;
        } else {
          assertThatThrownBy(() -> event.getValue().accept(f))
              .as(from + " + " + event.getKey())
              .isInstanceOf(IllegalStateException.class)
              .hasMessageContaining(from.name());
          assertThat(f.state()).as("unchanged after a refused event").isEqualTo(from);
          refused++;
        }
      }
    }
    assertThat(allowed).isEqualTo(15);
    assertThat(refused).isEqualTo(State.values().length * EVENTS.size() - 15);
  }

  @Test
  void onlyTheStatesANextFenceMustCheckAreOpen() {
    for (State s : State.values()) {
      boolean open =
          s == State.SENDING
              || s == State.COMMITTING
              || s == State.ABANDONED
              || s == State.IN_DOUBT;
      assertThat(in(s).open()).as(s.name()).isEqualTo(open);
    }
  }

  @Test
  void theCommitRemembersWhereItsLedgerRecordIsAndWhatItWrote() {
    BatchFate f = batchOf(1);
    f.acknowledged(0, P1);
    f.commitAsked(LEDGER, 41);
    assertThat(f.ledgerOffset()).isEqualTo(41);
    assertThat(f.written()).containsExactlyInAnyOrder(P1, LEDGER);
    assertThat(batchOf(0).ledgerOffset()).isEqualTo(-1);
  }

  @Test
  void theEventsReadTwiceAreNamedByWhereTheyWereAcknowledged() {
    List<io.outbox.relay.spi.RoutedEvent> events =
        List.of(
            Events.routed("orders", "a", "{}"),
            Events.routed("orders", "b", "{}"),
            Events.routed("orders", "c", "{}"));
    BatchFate f = new BatchFate(events);
    f.acknowledged(0, P1);
    f.acknowledged(1, P2);
    f.acknowledged(2, P1);
    assertThat(f.eventIdsOn(Set.of(P1)))
        .containsExactly(events.get(0).event().eventId(), events.get(2).event().eventId());
    assertThat(f.eventIdsOn(Set.of(ELSEWHERE))).isEmpty();
  }

  // --- what the check for hanging transactions resolves to

  /** A batch in doubt with one event on each of {@code eventPartitions}, and its ledger record. */
  private static BatchFate inDoubtHaving(TopicPartition... eventPartitions) {
    BatchFate f = batchOf(eventPartitions.length);
    for (int i = 0; i < eventPartitions.length; i++) {
      f.acknowledged(i, eventPartitions[i]);
    }
    f.commitAsked(LEDGER, 7);
    f.markersUnconfirmed();
    return f;
  }

  private static Hanging open(TopicPartition tp, int epoch) {
    return new Hanging(tp, 5, epoch);
  }

  @Test
  void anUnknownBatchOpenApartFromTheLedgerIsDistrustedFirst() {
    assertThat(BatchFate.resolve(List.of(), LEDGER, null))
        .isEqualTo(new Resolution(false, Set.of(), null));
    assertThat(BatchFate.resolve(List.of(open(P1, 3), open(LEDGER, 3)), LEDGER, null))
        .isEqualTo(new Resolution(false, Set.of(), null));
    assertThat(BatchFate.resolve(List.of(open(P1, 3), open(LEDGER, 4)), LEDGER, null))
        .as("epoch 3 is open on P1 only: its ledger record may be committed")
        .isEqualTo(new Resolution(true, Set.of(), null));
  }

  @Test
  void theLastBatchOpenEverywhereIsAbortedOnce() {
    BatchFate last = inDoubtHaving(P1, P2);
    Resolution r =
        BatchFate.resolve(List.of(open(P1, 3), open(P2, 3), open(LEDGER, 3)), LEDGER, last);
    assertThat(r).isEqualTo(new Resolution(false, Set.of(), State.ABORTED));
    last.resolved(r);
    assertThat(last.state()).isEqualTo(State.ABORTED);
  }

  @Test
  void theLastBatchCommittedOnSomePartitionsAndItsLedgerOpenIsReadTwiceThere() {
    BatchFate last = inDoubtHaving(P1, P2);
    Resolution r = BatchFate.resolve(List.of(open(P2, 3), open(LEDGER, 3)), LEDGER, last);
    assertThat(r).isEqualTo(new Resolution(false, Set.of(P1), State.PARTIALLY_COMMITTED));
  }

  @Test
  void theLastBatchWhoseLedgerRecordWasCommittedAndAnEventPartitionNotIsDistrustedFirst() {
    BatchFate last = inDoubtHaving(P1, P2);
    Resolution r = BatchFate.resolve(List.of(open(P2, 3)), LEDGER, last);
    assertThat(r).isEqualTo(new Resolution(true, Set.of(P1), State.DISTRUSTED));
    last.resolved(r);
    assertThat(last.state()).isEqualTo(State.DISTRUSTED);
  }

  @Test
  void aLastBatchNothingOfWhichHangsWasDecidedByTheCoordinator() {
    BatchFate last = inDoubtHaving(P1);
    Resolution r = BatchFate.resolve(List.of(open(ELSEWHERE, 2)), LEDGER, last);
    assertThat(r)
        .as("an earlier batch hangs apart from the ledger elsewhere")
        .isEqualTo(new Resolution(true, Set.of(), State.DECIDED));
    last.resolved(r);
    assertThat(last.state()).isEqualTo(State.DECIDED);
    last.ledgerRead(true, false);
    assertThat(last.state()).isEqualTo(State.COMMITTED);
  }

  @Test
  void anAbandonedBatchHasNoLedgerRecordToDistrust() {
    BatchFate last = batchOf(1);
    last.acknowledged(0, P1);
    last.endUnknown();
    Resolution r = BatchFate.resolve(List.of(open(P1, 3)), LEDGER, last);
    assertThat(r).isEqualTo(new Resolution(false, Set.of(), State.ABORTED));
    BatchFate quiet = batchOf(0);
    quiet.endUnknown();
    assertThat(BatchFate.resolve(List.of(), LEDGER, quiet))
        .isEqualTo(new Resolution(false, Set.of(), State.ABORTED));
  }
}
