package io.outbox.soak;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.soak.InvariantChecker.Findings;
import io.outbox.soak.InvariantChecker.Violation;
import io.outbox.soak.WrittenEvent.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class InvariantCheckerTest {
  private static final Instant T0 = Instant.parse("2025-01-01T10:00:00Z");
  private static final int BOUND = 4;

  private final List<WrittenEvent> written = new ArrayList<>();
  private final Map<UUID, RowState> rows = new HashMap<>();
  private final List<Delivery> deliveries = new ArrayList<>();
  private final List<FaultRecord> faults = new ArrayList<>();
  private long nextRow = 1;

  /** A committed event of {@code key} with the next row id, available at T0. */
  private UUID committed(String key) {
    return write(key, Outcome.COMMITTED, null, false, 0);
  }

  private UUID write(String key, Outcome outcome, Instant dueAt, boolean flaky, int attempts) {
    UUID id = UUID.randomUUID();
    written.add(new WrittenEvent(id, nextRow, key, outcome, dueAt, flaky));
    if (outcome != Outcome.ROLLED_BACK) {
      Instant available = dueAt == null ? T0 : dueAt;
      rows.put(id, new RowState(id, nextRow, attempts, available, T0.plusSeconds(60), null, null));
    }
    nextRow++;
    return id;
  }

  private void deliver(UUID id, int secondsAfterT0) {
    deliveries.add(
        new Delivery(
            id, T0.plusSeconds(secondsAfterT0), "topic-0", deliveries.size(), id.hashCode()));
  }

  private Findings check() {
    return InvariantChecker.check(written, rows, deliveries, faults, BOUND);
  }

  private static List<String> invariants(Findings f) {
    return f.violations().stream().map(Violation::invariant).toList();
  }

  @Test
  void aCleanRunHasNoViolations() {
    UUID a1 = committed("order/a");
    UUID b1 = committed("order/b");
    UUID a2 = committed("order/a");
    write("order/a", Outcome.ROLLED_BACK, null, false, 0);
    deliver(a1, 1);
    deliver(b1, 1);
    deliver(a2, 2);

    Findings f = check();

    assertThat(f.violations()).isEmpty();
    assertThat(f.lostSummary()).isEmpty();
    assertThat(f.committed()).isEqualTo(3);
    assertThat(f.rolledBack()).isEqualTo(1);
    assertThat(f.delivered()).isEqualTo(3);
    assertThat(f.duplicateCount()).isZero();
  }

  @Test
  void aCommittedEventNeverDeliveredIsLostAndAGapWhenItsKeyWentOn() {
    UUID a1 = committed("order/a");
    UUID a2 = committed("order/a");
    UUID b1 = committed("order/b");
    deliver(a2, 1);

    Findings f = check();

    assertThat(invariants(f)).containsOnly(InvariantChecker.LOST);
    assertThat(f.lostSummary())
        .isEqualTo(
            "2 committed event(s) not delivered: 2 marked published, not on the broker; rows 1 to 3");
    assertThat(f.violations())
        .anySatisfy(v -> assertThat(v.detail()).startsWith(a1.toString()).contains("a gap: row 2"))
        .anySatisfy(v -> assertThat(v.detail()).startsWith(b1.toString()).contains("tail"));
  }

  @Test
  void aRolledBackEventDeliveredAndAnEventNeverWrittenAreViolations() {
    UUID rolledBack = write("order/a", Outcome.ROLLED_BACK, null, false, 0);
    deliver(rolledBack, 1);
    deliver(UUID.randomUUID(), 2);

    assertThat(invariants(check()))
        .containsExactlyInAnyOrder(
            InvariantChecker.ROLLED_BACK_DELIVERED, InvariantChecker.UNKNOWN_DELIVERED);
  }

  @Test
  void anInDoubtEventMayBeDeliveredOrNot() {
    UUID doubtful = write("order/a", Outcome.IN_DOUBT, null, false, 0);
    write("order/b", Outcome.IN_DOUBT, null, false, 0);
    deliver(doubtful, 1);

    Findings f = check();

    assertThat(f.violations()).isEmpty();
    assertThat(f.inDoubt()).isEqualTo(2);
  }

  @Test
  void aFirstDeliveryAfterALaterRowOfItsKeyBreaksKeyOrder() {
    UUID a1 = committed("order/a");
    UUID a2 = committed("order/a");
    deliver(a2, 1);
    deliver(a1, 301); // skipped, published minutes later

    Findings f = check();

    assertThat(invariants(f)).containsExactly(InvariantChecker.KEY_ORDER);
    assertThat(f.violations().get(0).detail())
        .contains(a1 + " (row 1)")
        .contains("300000 ms after " + a2 + " (row 2)");
  }

  /** Rows retention removed before the end are checked from what their writers recorded. */
  @Test
  void rowsRetentionRemovedAreStillCheckedForKeyOrderAndDueTimes() {
    UUID a1 = committed("order/a");
    UUID a2 = committed("order/a");
    UUID late = write("order/b", Outcome.COMMITTED, T0.plusSeconds(20), false, 0);
    deliver(a2, 1);
    deliver(a1, 301);
    deliver(late, 10);
    rows.clear(); // every row settled and removed: a partition emptied

    Findings f =
        InvariantChecker.check(
            written, RowState.withRemovedRows(rows, written), deliveries, faults, BOUND);

    assertThat(invariants(f)).containsExactly(InvariantChecker.KEY_ORDER, InvariantChecker.EARLY);
    assertThat(f.violations().get(0).detail()).contains(a1 + " (row 1)");
  }

  @Test
  void aDuplicateOfAnEarlierEventIsNotAnOrderViolation() {
    UUID a1 = committed("order/a");
    UUID a2 = committed("order/a");
    faults.add(fault(1, 0));
    deliver(a1, 1);
    deliver(a2, 2);
    deliver(a1, 3); // re-sent after a crash

    Findings f = check();

    assertThat(f.violations()).isEmpty();
    assertThat(f.duplicateCount()).isEqualTo(1);
    assertThat(f.lateResends()).as("a1 again after a2: a late re-send").isEqualTo(1);
  }

  @Test
  void aDuplicateBeforeAnyLaterEventOfItsKeyIsNotALateReSend() {
    UUID a1 = committed("order/a");
    UUID a2 = committed("order/a");
    UUID b1 = committed("order/b");
    faults.add(fault(1, 0));
    deliver(a1, 1);
    deliver(b1, 2);
    deliver(a1, 3); // again, but nothing newer of order/a came first
    deliver(a2, 4);
    deliver(a2, 5); // again, after itself only

    Findings f = check();

    assertThat(f.violations()).isEmpty();
    assertThat(f.duplicateCount()).isEqualTo(2);
    assertThat(f.lateResends()).isZero();
  }

  @Test
  void aDelayedEventMayComeAfterLaterRowsButNotBeforeItsDueTime() {
    UUID a1 = committed("order/a");
    UUID delayed = write("order/a", Outcome.COMMITTED, T0.plusSeconds(10), false, 0);
    UUID a3 = committed("order/a");
    deliver(a1, 1);
    deliver(a3, 2);
    deliver(delayed, 11);
    assertThat(check().violations()).isEmpty();

    deliveries.clear();
    deliver(a1, 1);
    deliver(delayed, 5);
    deliver(a3, 6);
    Findings early = check();
    assertThat(invariants(early)).containsExactly(InvariantChecker.EARLY);
    assertThat(early.violations().get(0).detail()).startsWith(delayed.toString());
  }

  @Test
  void anEventThatIsNotDelayedComingAfterADelayedLaterRowBreaksKeyOrder() {
    UUID a1 = committed("order/a");
    UUID delayed = write("order/a", Outcome.COMMITTED, T0.plusSeconds(10), false, 0);
    deliver(delayed, 11);
    deliver(a1, 12);

    assertThat(invariants(check())).containsExactly(InvariantChecker.KEY_ORDER);
  }

  @Test
  void attemptsAreAllowedOnlyOnEventsRefusedRetryablyAndNoEventIsDeadLettered() {
    UUID healthy = write("order/a", Outcome.COMMITTED, null, false, 1);
    UUID flaky = write("flaky/f", Outcome.COMMITTED, null, true, 3);
    UUID flakyDead = write("flaky/g", Outcome.COMMITTED, null, true, 10);
    RowState dead = rows.get(flakyDead);
    rows.put(
        flakyDead,
        new RowState(
            flakyDead,
            dead.rowId(),
            10,
            dead.availableAt(),
            null,
            "max-attempts",
            "InvalidTimestampException"));
    deliver(healthy, 1);
    deliver(flaky, 2);

    Findings f = check();

    assertThat(invariants(f))
        .containsExactlyInAnyOrder(
            InvariantChecker.CHARGED, InvariantChecker.DEAD_LETTERED, InvariantChecker.LOST);
    assertThat(f.refusedRetryably()).isEqualTo(2);
    assertThat(f.maxAttempts()).isEqualTo(10);
    assertThat(f.violations())
        .anySatisfy(
            v -> {
              assertThat(v.invariant()).isEqualTo(InvariantChecker.DEAD_LETTERED);
              assertThat(v.detail()).contains("refused retryably").contains("max-attempts");
            });
  }

  @Test
  void duplicatesAreChargedToTheFaultDuringTheirResendAndCheckedAgainstTheBound() {
    faults.add(fault(1, 10));
    faults.add(fault(2, 20));
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      ids.add(committed("order/k" + i));
    }
    ids.forEach(id -> deliver(id, 5));
    deliver(ids.get(0), 12); // charged to #1
    for (int i = 1; i < 6; i++) {
      deliver(ids.get(i), 25); // 5 charged to #2: over the bound of 4
    }
    // A late copy sent before its twin (a woken instance): dated by the later copy, fault #2.
    deliveries.add(
        new Delivery(ids.get(6), T0.plusSeconds(9), "topic-0", 99, ids.get(6).hashCode()));
    deliveries.set(
        6, new Delivery(ids.get(6), T0.plusSeconds(21), "topic-0", 6, ids.get(6).hashCode()));

    Findings f = check();

    assertThat(f.duplicates())
        .extracting(InvariantChecker.FaultDuplicates::duplicates)
        .containsExactly(0, 1, 6);
    assertThat(f.violations())
        .singleElement()
        .satisfies(
            v -> {
              assertThat(v.invariant()).isEqualTo(InvariantChecker.DUPLICATES_OVER_BOUND);
              assertThat(v.detail()).contains("6 duplicate(s)").contains("#2").contains("bound 4");
            });
  }

  @Test
  void aDuplicateBeforeAnyFaultOrOneThatDiffersIsAViolation() {
    UUID a1 = committed("order/a");
    deliver(a1, 1);
    deliveries.add(new Delivery(a1, T0.plusSeconds(2), "topic-0", 1, 42));

    assertThat(invariants(check()))
        .containsExactlyInAnyOrder(
            InvariantChecker.DUPLICATES_OVER_BOUND, InvariantChecker.DUPLICATE_DIFFERS);
  }

  @Test
  void exactlyOnceAllowsADuplicateOnlyForAnEventARelayListedAsSentTwice() {
    faults.add(fault(1, 10));
    UUID listed = committed("order/a");
    UUID unlisted = committed("order/b");
    UUID once = committed("order/c");
    deliver(listed, 5);
    deliver(unlisted, 5);
    deliver(once, 5);
    deliver(listed, 12);
    deliver(unlisted, 12);

    Findings f =
        InvariantChecker.check(written, rows, deliveries, faults, 0, java.util.Set.of(listed));

    assertThat(f.violations())
        .singleElement()
        .satisfies(
            v -> {
              assertThat(v.invariant()).isEqualTo(InvariantChecker.UNLISTED_DUPLICATE);
              assertThat(v.detail()).startsWith(unlisted.toString()).contains("read 2 times");
            });
    assertThat(f.sentTwice()).isEqualTo(1);
    assertThat(f.duplicateCount()).as("unlisted, charged to their fault").isEqualTo(1);
  }

  @Test
  void anAtLeastOnceCheckListsNoSentTwice() {
    assertThat(check().sentTwice()).isEqualTo(-1);
  }

  private static FaultRecord fault(int number, int secondsAfterT0) {
    Instant start = T0.plusSeconds(secondsAfterT0);
    return new FaultRecord(
        number, FaultKind.SIGKILL, "a (active)", start, start.plusSeconds(1), "", Duration.ZERO);
  }
}
