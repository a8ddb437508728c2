package io.outbox.source.cdc.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.cdc.engine.ChangeEvents;
import io.outbox.testkit.FakeTime;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ChangeStreamTest {

  private final FakeTime clock = new FakeTime();
  private final ChangeStream<String> stream = new ChangeStream<>(1, 100, clock, Ticker.SYSTEM);

  static OutboxEvent event(long id, String key) {
    return new OutboxEvent(
        id,
        UUID.randomUUID(),
        "order",
        key,
        "E",
        null,
        new byte[0],
        PayloadFormat.JSON,
        Map.of(),
        Instant.EPOCH,
        0);
  }

  @Test
  void commitsAPositionOnlyOnceEveryEventBeforeItIsFinal() throws Exception {
    stream.offer("r1", event(1, "a"), null);
    stream.pass("hb1");
    stream.offer("r2", event(2, "b"), null);
    stream.pass("hb2");
    assertThat(stream.takeCommittable()).isNull();

    List<ChangeStream.Item> items = stream.take(0, 10, Duration.ZERO);
    assertThat(items).hasSize(2);
    // b is published, a still retrying: nothing can be committed past a.
    stream.settled(
        0,
        items,
        List.of(
            new Settlement.Retry(items.get(0).event(), 1, Duration.ofSeconds(5), "x"),
            new Settlement.Published(items.get(1).event())));
    assertThat(stream.takeCommittable()).isNull();

    clock.advance(Duration.ofSeconds(5));
    List<ChangeStream.Item> retry = stream.take(0, 10, Duration.ZERO);
    assertThat(retry).extracting(i -> i.event().id()).containsExactly(1L);
    assertThat(retry.get(0).event().attempts()).isEqualTo(1);
    stream.settled(0, retry, List.of(new Settlement.Published(retry.get(0).event())));
    assertThat(stream.takeCommittable()).isEqualTo("hb2");
    assertThat(stream.takeCommittable()).isNull();
  }

  @Test
  void nothingIsCommittedPastAnEventDroppedAtClose() throws Exception {
    stream.offer("r1", event(1, "a"), null);
    List<ChangeStream.Item> items = stream.take(0, 10, Duration.ZERO);
    stream.close();
    assertThat(stream.offer("r2", event(2, "b"), null)).as("dropped").isFalse();
    stream.pass("hb-after-r2");
    stream.settled(0, items, List.of(new Settlement.Published(items.get(0).event())));
    assertThat(stream.takeCommittable()).isEqualTo("r1");
  }

  @Test
  void retryingKeyIsHeldBackWhileOtherKeysFlow() throws Exception {
    stream.offer("r1", event(1, "k"), null);
    List<ChangeStream.Item> first = stream.take(0, 10, Duration.ZERO);
    stream.settled(
        0,
        first,
        List.of(new Settlement.Retry(first.get(0).event(), 1, Duration.ofSeconds(3), "x")));
    stream.offer("r2", event(2, "k"), null);
    stream.offer("r3", event(3, "other"), null);

    assertThat(stream.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .containsExactly(3L);
    clock.advance(Duration.ofSeconds(3));
    assertThat(stream.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .containsExactly(1L, 2L);
  }

  /** A retry's due time: its delay after it was settled, on the (database) clock, not before. */
  @Test
  void aRetryIsDueItsDelayAfterItsSettlement() throws Exception {
    stream.offer("r1", event(1, "k"), null);
    List<ChangeStream.Item> first = stream.take(0, 10, Duration.ZERO);
    clock.advance(Duration.ofMinutes(1)); // published, then settled a minute later
    stream.settled(
        0,
        first,
        List.of(new Settlement.Retry(first.get(0).event(), 1, Duration.ofSeconds(5), "x")));

    clock.advance(Duration.ofMillis(4_999));
    assertThat(stream.take(0, 10, Duration.ZERO)).isEmpty();
    clock.advance(Duration.ofMillis(1));
    assertThat(stream.take(0, 10, Duration.ZERO))
        .singleElement()
        .satisfies(i -> assertThat(i.event().attempts()).isEqualTo(1));
  }

  @Test
  void releasedEventsComeBackFirstInIdOrder() throws Exception {
    for (long id = 1; id <= 4; id++) {
      stream.offer("r" + id, event(id, "k"), null);
    }
    List<ChangeStream.Item> two = stream.take(0, 2, Duration.ZERO);
    stream.released(0, two);
    assertThat(stream.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .containsExactly(1L, 2L, 3L, 4L);
  }

  @Test
  void delayedEventWaitsForItsTimeWithoutHoldingItsKey() throws Exception {
    stream.offer("r1", event(1, "k"), clock.instant().plusSeconds(2));
    stream.offer("r2", event(2, "k"), null);
    assertThat(stream.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .containsExactly(2L);
    clock.advance(Duration.ofSeconds(2));
    assertThat(stream.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .containsExactly(1L);
  }

  @Test
  void sweptEventsGoFirstAndAreNotTakenTwice() throws Exception {
    stream.offer("r5", event(5, "k"), null);
    assertThat(stream.offerSwept(List.of(event(3, "k"), event(5, "k")))).isEqualTo(1);
    assertThat(stream.holds(3)).isTrue();
    assertThat(stream.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .containsExactly(3L, 5L);
  }

  @Test
  void sweptPagesKeepIdOrderAcrossPages() throws Exception {
    stream.offerSwept(List.of(event(1, "k"), event(2, "k")));
    stream.offerSwept(List.of(event(3, "k"), event(4, "k"))); // the sweep's next page
    assertThat(stream.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .containsExactly(1L, 2L, 3L, 4L);
  }

  @Test
  void streamedEventsWaitUntilTheCatchUpIsReadThenFollowIt() throws Exception {
    stream.beginCatchUp();
    stream.offer("r9", event(9, "k"), null);
    stream.offer("r10", event(10, "other"), null);
    assertThat(stream.offerCaughtUp(event(1, "k"), null, null)).isTrue();
    List<ChangeStream.Item> first = stream.take(0, 10, Duration.ZERO);
    assertThat(first).extracting(i -> i.event().id()).containsExactly(1L);
    stream.settled(0, first, List.of(new Settlement.Published(first.get(0).event())));
    assertThat(stream.offerCaughtUp(event(2, "k"), null, null)).isTrue();
    assertThat(stream.offerCaughtUp(event(9, "k"), null, null)).as("streamed already").isTrue();
    stream.caughtUpRead();
    assertThat(stream.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .containsExactly(2L, 9L, 10L);
  }

  /**
   * A take-over under load (CdcHandOverIT, full suite of 2026-12-06): the new active's stream
   * delivered the INSERTs of the oldest unpublished rows before its catch-up read reached them; the
   * catch-up found them in memory and left them in the stream's queue, which waits behind the
   * catch-up, while the later rows of their keys went out from the catch-up first.
   */
  @Test
  void aStreamedEventTheCatchUpMeetsGoesOutInIdOrderWithTheCaughtUpRows() throws Exception {
    stream.beginCatchUp();
    stream.offer("r9", event(9, "k"), null); // streamed before the catch-up read reached row 9
    stream.offer("r10", event(10, "other"), null);
    assertThat(stream.offerCaughtUp(event(9, "k"), null, null)).as("streamed already").isTrue();
    assertThat(stream.offerCaughtUp(event(11, "k"), null, null)).isTrue();
    assertThat(stream.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .as("row 9 before row 11 of its key; row 10 waits behind the catch-up")
        .containsExactly(9L, 11L);
    stream.caughtUpRead();
    assertThat(stream.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .containsExactly(10L);
  }

  @Test
  void theInsertsOfCaughtUpRowsThatAreFinalOnlyMoveThePosition() throws Exception {
    stream.beginCatchUp();
    stream.offerCaughtUp(event(1, "k"), null, null);
    stream.offerCaughtUp(event(2, "k"), null, null);
    stream.offerCaughtUp(event(4, "k"), null, null);
    stream.caughtUpRead(Instant.parse("2026-01-01T00:00:10Z"));
    List<ChangeStream.Item> caught = stream.take(0, 2, Duration.ZERO);
    assertThat(caught).extracting(i -> i.event().id()).containsExactly(1L, 2L);
    publishAll(caught);

    stream.offer("r1", event(1, "k"), null); // final: skipped
    stream.offer("r2", event(2, "k"), null); // final: skipped
    stream.offer("r3", event(3, "k"), null); // committed after the catch-up read, a lower id
    stream.offer("r4", event(4, "k"), null); // still in memory: holds its position
    assertThat(stream.staleSkipped()).isEqualTo(2);
    assertThat(stream.size()).as("4 (caught up) and 3 (streamed)").isEqualTo(2);
    assertThat(stream.takeCommittable())
        .as("the skipped inserts moved the position")
        .isEqualTo("r2");

    List<ChangeStream.Item> rest = stream.take(0, 10, Duration.ZERO);
    assertThat(rest).extracting(i -> i.event().id()).containsExactly(4L, 3L);
    publishAll(rest);
    assertThat(stream.takeCommittable()).isEqualTo("r4");
    assertThat(stream.staleInLanes()).isZero();

    // A heartbeat emitted after the catch-up was read: its ids are forgotten.
    stream.reached(Instant.parse("2026-01-01T00:00:10Z"));
    stream.offer("r1'", event(1, "k"), null);
    assertThat(stream.staleSkipped()).as("not after the read").isEqualTo(3);
    stream.reached(Instant.parse("2026-01-01T00:00:10.001Z"));
    stream.offer("r1''", event(1, "k"), null);
    assertThat(stream.staleSkipped()).isEqualTo(3);
    assertThat(stream.size()).as("to a lane, whose claim finds it final").isEqualTo(1);
    assertThat(stream.checked(0, stream.take(0, 10, Duration.ZERO), Map.of())).isEmpty();
    assertThat(stream.staleInLanes()).isEqualTo(1);
  }

  private void publishAll(List<ChangeStream.Item> items) {
    stream.settled(
        0,
        items,
        items.stream().map(i -> (Settlement) new Settlement.Published(i.event())).toList());
  }

  @Test
  void aCaughtUpRowNotFinalYetTakesItsInsertsPosition() throws Exception {
    stream.beginCatchUp();
    stream.offerCaughtUp(event(1, "k"), null, null);
    stream.caughtUpRead();
    List<ChangeStream.Item> taken = stream.take(0, 10, Duration.ZERO);
    stream.settled(
        0,
        taken,
        List.of(new Settlement.Retry(taken.get(0).event(), 1, Duration.ofSeconds(5), "x")));
    stream.offer("r1", event(1, "k"), null);
    stream.pass("hb");
    assertThat(stream.staleSkipped()).isZero();
    assertThat(stream.takeCommittable()).as("held by the retrying row").isNull();
    clock.advance(Duration.ofSeconds(5));
    List<ChangeStream.Item> retry = stream.take(0, 10, Duration.ZERO);
    stream.settled(0, retry, List.of(new Settlement.Published(retry.get(0).event())));
    assertThat(stream.takeCommittable()).isEqualTo("hb");
  }

  @Test
  void aCaughtUpRowDueForARetryHoldsItsKeyUntilThen() throws Exception {
    stream.beginCatchUp();
    stream.offerCaughtUp(event(1, "k"), null, clock.instant().plusSeconds(4));
    stream.offerCaughtUp(event(2, "k"), null, null);
    stream.offerCaughtUp(event(3, "other"), null, null);
    stream.caughtUpRead();
    assertThat(stream.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .containsExactly(3L);
    clock.advance(Duration.ofSeconds(4));
    assertThat(stream.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .containsExactly(1L, 2L);
  }

  /**
   * The full suite under load (CdcCatchUpRestreamIT, 2026-12-07, and 1 run in 8 of that test alone
   * beside two busy cores): the engine waited for room in a full lane with a row's INSERT while the
   * catch-up handed that same row; once there was room, the INSERT joined the lane as a second copy
   * of the row, and a claim handed it out twice ("two settlements for OutboxEvent[id=603]").
   */
  @Test
  void anInsertThatWaitedForRoomWhileTheCatchUpHandedItsRowIsNoSecondCopy() throws Exception {
    ChangeStream<String> small = new ChangeStream<>(1, 1, clock, Ticker.SYSTEM);
    small.beginCatchUp();
    small.offer("r1", event(1, "a"), null); // the lane's stream queue is full (lane-buffer 1)
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread engine =
        new Thread(
            () -> {
              try {
                small.offer("r2", event(2, "b"), null);
              } catch (Throwable e) {
                failed.set(e);
              }
            });
    engine.start();
    engine.join(300);
    assertThat(engine.isAlive()).as("the engine waits for room").isTrue();
    assertThat(small.offerCaughtUp(event(2, "b"), null, null)).isTrue(); // the catch-up hands row 2
    assertThat(small.offerCaughtUp(event(1, "a"), null, null)).isTrue(); // row 1 goes ahead: room
    engine.join(5_000);
    assertThat(engine.isAlive()).isFalse();
    assertThat(failed.get()).isNull();
    small.caughtUpRead();
    assertThat(small.take(0, 10, Duration.ZERO))
        .extracting(i -> i.event().id())
        .containsExactly(1L, 2L);
  }

  @Test
  void theCatchUpWaitsForRoomInTheLaneAndEndsOnceEveryRowIsFinal() throws Exception {
    ChangeStream<String> small = new ChangeStream<>(1, 2, clock, Ticker.SYSTEM);
    small.beginCatchUp();
    small.offerCaughtUp(event(1, "a"), null, null);
    small.offerCaughtUp(event(2, "a"), null, null);
    Thread reader =
        new Thread(
            () -> {
              try {
                small.offerCaughtUp(event(3, "a"), null, null);
                small.caughtUpRead();
                small.awaitCaughtUpFinal();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    reader.start();
    reader.join(300);
    assertThat(reader.isAlive()).as("blocked on the lane's full catch-up").isTrue();
    List<ChangeStream.Item> two = small.take(0, 2, Duration.ZERO);
    small.settled(
        0, two, two.stream().map(i -> (Settlement) new Settlement.Published(i.event())).toList());
    List<ChangeStream.Item> last = small.take(0, 2, Duration.ofSeconds(5));
    assertThat(last).extracting(i -> i.event().id()).containsExactly(3L);
    assertThat(reader.isAlive()).as("waits for the last row's verdict").isTrue();
    small.settled(0, last, List.of(new Settlement.Published(last.get(0).event())));
    reader.join(5_000);
    assertThat(reader.isAlive()).isFalse();
  }

  @Test
  void aClaimHandsOutTheRowNotWhatTheStreamCarriedOfIt() throws Exception {
    stream.offer("r1", ChangeEvents.streamed(1, "order", "k"), null);
    stream.offer("r2", ChangeEvents.streamed(2, "order", "k"), null);
    List<ChangeStream.Item> taken = stream.take(0, 10, Duration.ZERO);
    OutboxEvent row =
        new OutboxEvent(
            1,
            UUID.randomUUID(),
            "order",
            "k",
            "OrderPlaced",
            "orders",
            "{\"a\": 1}".getBytes(StandardCharsets.UTF_8),
            PayloadFormat.JSON,
            Map.of("trace", "t1"),
            Instant.parse("2026-12-02T10:00:00.123456Z"),
            2);
    Instant later = clock.instant().plusMillis(100);
    List<ChangeStream.Item> out =
        stream.checked(
            0,
            taken,
            Map.of(1L, new ChangeStream.Row(row, null), 2L, new ChangeStream.Row(null, later)));

    assertThat(out).extracting(ChangeStream.Item::event).containsExactly(row);
    assertThat(out.get(0).event()).isSameAs(row);
    stream.settled(0, out, List.of(new Settlement.Published(row)));
    assertThat(stream.take(0, 10, Duration.ZERO)).as("2 is looked for again later").isEmpty();
    clock.advance(Duration.ofMillis(100));
    assertThat(stream.take(0, 10, Duration.ZERO))
        .as("taken again, to be read again: still what the stream carried")
        .extracting(i -> i.event().eventType())
        .containsExactly("");
    assertThatThrownBy(() -> new ChangeStream.Row(null, null))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void eventsStreamedAgainFollowTheirRowsNotTheInsert() throws Exception {
    // After a restart: 1 was published, 2 waits for a retry (its key's 3 with it), 4 failed twice.
    for (long id = 1; id <= 4; id++) {
      stream.offer("r" + id, event(id, id == 1 || id == 4 ? "x" + id : "k"), null);
    }
    List<ChangeStream.Item> taken = stream.take(0, 10, Duration.ZERO);
    Instant retryAt = clock.instant().plusSeconds(30);
    List<ChangeStream.Item> out =
        stream.checked(
            0,
            taken,
            Map.of(
                2L, new ChangeStream.Row(event(2, "k").withAttempts(1), retryAt),
                3L, new ChangeStream.Row(event(3, "k"), null),
                4L, new ChangeStream.Row(event(4, "x4").withAttempts(2), null)));

    assertThat(out).extracting(i -> i.event().id()).containsExactly(4L);
    assertThat(out.get(0).event().attempts()).isEqualTo(2);
    assertThat(stream.size()).as("1 is final, not sent again").isEqualTo(3);
    stream.settled(0, out, List.of(new Settlement.Published(out.get(0).event())));
    assertThat(stream.take(0, 10, Duration.ZERO)).as("k waits for 2's retry").isEmpty();
    clock.advance(Duration.ofSeconds(30));
    List<ChangeStream.Item> due = stream.take(0, 10, Duration.ZERO);
    assertThat(due).extracting(i -> i.event().id()).containsExactly(2L, 3L);
    assertThat(due.get(0).event().attempts()).isEqualTo(1);
    stream.settled(
        0,
        due,
        List.of(
            new Settlement.Published(due.get(0).event()),
            new Settlement.Published(due.get(1).event())));
    assertThat(stream.takeCommittable()).isEqualTo("r4");
  }

  @Test
  void aRowPublishedThroughOneCopyIsNotSentThroughTheOther() throws Exception {
    stream.offerSwept(List.of(event(7, "k")));
    List<ChangeStream.Item> swept = stream.take(0, 10, Duration.ZERO);
    stream.settled(0, swept, List.of(new Settlement.Published(swept.get(0).event())));
    // The long transaction's INSERT arrives through the stream once the sweep's copy is final.
    stream.offer("r7", event(7, "k"), null);
    List<ChangeStream.Item> streamed = stream.take(0, 10, Duration.ZERO);
    assertThat(streamed).hasSize(1);
    assertThat(stream.checked(0, streamed, Map.of())).isEmpty();
    assertThat(stream.size()).isZero();
    assertThat(stream.takeCommittable()).isEqualTo("r7");

    // The other way round: the sweep read 8 as pending just before the streamed copy was settled.
    stream.offer("r8", event(8, "k"), null);
    List<ChangeStream.Item> first = stream.take(0, 10, Duration.ZERO);
    stream.settled(0, first, List.of(new Settlement.Published(first.get(0).event())));
    assertThat(stream.offerSwept(List.of(event(8, "k")))).isEqualTo(1);
    assertThat(stream.checked(0, stream.take(0, 10, Duration.ZERO), Map.of())).isEmpty();
    assertThat(stream.size()).isZero();
  }

  @Test
  void aFullLaneMakesTheStreamWait() throws Exception {
    ChangeStream<String> small = new ChangeStream<>(1, 2, clock, Ticker.SYSTEM);
    small.offer("r1", event(1, "a"), null);
    small.offer("r2", event(2, "a"), null);
    Thread producer =
        new Thread(
            () -> {
              try {
                small.offer("r3", event(3, "a"), null);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    producer.start();
    producer.join(300);
    assertThat(producer.isAlive()).as("blocked on the full lane").isTrue();
    assertThat(small.take(0, 1, Duration.ZERO)).hasSize(1);
    producer.join(5_000);
    assertThat(producer.isAlive()).isFalse();
    assertThat(small.size()).isEqualTo(3);
  }

  @Test
  void aBatchHandedOverAtOnceKeepsItsOrderAndItsHeartbeat() throws Exception {
    Instant beat = Instant.parse("2026-01-01T00:00:05Z");
    assertThat(
            stream.offerAll(
                List.of(
                    ChangeStream.Streamed.insert("r1", event(1, "a"), null),
                    ChangeStream.Streamed.position("hb", beat),
                    ChangeStream.Streamed.insert("r2", event(2, "b"), null),
                    ChangeStream.Streamed.position("u2", null))))
        .isTrue();
    assertThat(stream.streamTime()).isEqualTo(beat);
    List<ChangeStream.Item> items = stream.take(0, 10, Duration.ZERO);
    assertThat(items).extracting(i -> i.event().id()).containsExactly(1L, 2L);
    stream.settled(
        0,
        items,
        List.of(
            new Settlement.Published(items.get(0).event()),
            new Settlement.Retry(items.get(1).event(), 1, Duration.ofSeconds(1), "x")));
    // r1 is final, r2 not: the position stops at the heartbeat after r1.
    assertThat(stream.takeCommittable()).isEqualTo("hb");
    stream.close();
    assertThat(stream.offerAll(List.of(ChangeStream.Streamed.insert("r3", event(3, "a"), null))))
        .as("closed")
        .isFalse();
  }

  @Test
  void aWaitingLaneTakesTheWholeBatchInOneClaim() throws Exception {
    AtomicReference<List<ChangeStream.Item>> taken = new AtomicReference<>();
    Thread lane =
        new Thread(
            () -> {
              try {
                taken.set(stream.take(0, 100, Duration.ofSeconds(10)));
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    lane.start();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> lane.getState() == Thread.State.TIMED_WAITING);
    List<ChangeStream.Streamed<String>> batch = new ArrayList<>();
    for (long id = 1; id <= 50; id++) {
      batch.add(ChangeStream.Streamed.insert("r" + id, event(id, "k" + id), null));
    }
    stream.offerAll(batch);
    lane.join(5_000);
    // One offer at a time, the lane woke at the first one and could take it alone.
    assertThat(taken.get()).hasSize(50);
  }
}
