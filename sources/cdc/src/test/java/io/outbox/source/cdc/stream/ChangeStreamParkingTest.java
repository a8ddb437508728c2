package io.outbox.source.cdc.stream;

import static io.outbox.source.cdc.stream.ChangeStreamTest.event;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Ticker;
import io.outbox.testkit.FakeTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Issue #13.8: a held-back key's events leave a full lane and come back when it is released. */
class ChangeStreamParkingTest {

  private final FakeTime clock = new FakeTime();
  private final ChangeStream<String> stream = new ChangeStream<>(1, 2, clock, Ticker.SYSTEM);

  /** Takes k#1 and lets it wait 3 s for a retry. */
  private void holdKeyK() throws Exception {
    stream.offer("r1", event(1, "k"), null);
    List<ChangeStream.Item> first = stream.take(0, 10, Duration.ZERO);
    stream.settled(
        0,
        first,
        List.of(new Settlement.Retry(first.get(0).event(), 1, Duration.ofSeconds(3), "x")));
  }

  /** Holds k, then fills the lane with k#2 and k#3, which other#4 parks. */
  private void parkK2AndK3() throws Exception {
    holdKeyK();
    stream.offer("r2", event(2, "k"), null);
    stream.offer("r3", event(3, "k"), null);
    stream.offer("r4", event(4, "other"), null);
  }

  private static List<Long> ids(List<ChangeStream.Item> items) {
    return items.stream().map(i -> i.event().id()).toList();
  }

  private void publish(List<ChangeStream.Item> items) {
    List<Settlement> s = new ArrayList<>();
    for (ChangeStream.Item i : items) {
      s.add(new Settlement.Published(i.event()));
    }
    stream.settled(0, items, s);
  }

  /** What the table would return for a parked range: the given ids of key k. */
  private static List<ParkedRows.Row> rows(long... ids) {
    List<ParkedRows.Row> rows = new ArrayList<>();
    for (long id : ids) {
      rows.add(new ParkedRows.Row(event(id, "k"), null));
    }
    return rows;
  }

  /**
   * k#3 is streamed before k#2 (committed out of id order) and waits in the lane; k#2 arrives at a
   * full lane and is parked, so k#3 is inside k's parked range. Read back, the range's rows and k#3
   * are taken in id order: on the code before, the rows read back went first and k#3 after them.
   */
  @Test
  void aStreamedEventInsideAParkedRangeIsTakenInIdOrderWithTheRowsReadBack() throws Exception {
    holdKeyK();
    stream.offer("r3", event(3, "k"), null);
    stream.offer("r4", event(4, "other"), null); // the lane is full
    stream.offer("r2", event(2, "k"), null); // parked: k is held
    stream.offer("r5", event(5, "k"), null); // behind the parked range
    assertThat(stream.parkedEvents()).isEqualTo(2);

    List<ChangeStream.Item> other = stream.take(0, 10, Duration.ZERO);
    assertThat(ids(other)).as("k#3 waits for the parked k#2").containsExactly(4L);
    publish(other);
    clock.advance(Duration.ofSeconds(3));
    publish(stream.take(0, 10, Duration.ZERO)); // k#1's retry

    ParkedRows.Request request = stream.parkedToRead(0);
    assertThat(request.firstId()).isEqualTo(2);
    stream.readBack(0, request, rows(2, 3, 5));
    assertThat(stream.parkedKeys()).isZero();
    assertThat(ids(stream.take(0, 10, Duration.ZERO))).containsExactly(2L, 3L, 5L);
  }

  /**
   * A parked event's transaction still in progress to other sessions (its commit waits for a
   * synchronous standby) keeps its range from being read back, which would not see its row; once
   * the transaction ended, the range is read.
   */
  @Test
  void aParkedRangeIsNotReadWhileATransactionOfItsStreamedEventsIsInProgress() throws Exception {
    holdKeyK();
    stream.offer("r2", event(2, "other"), null);
    stream.offer("r3", event(3, "other"), null); // the lane is full
    stream.offerAll(List.of(ChangeStream.Streamed.insert("r4", event(4, "k"), null, 700)));
    clock.advance(Duration.ofSeconds(3));
    publish(stream.take(0, 10, Duration.ZERO)); // k#1's retry and the other key's events

    ParkedRows.Request request = stream.parkedToRead(0);
    assertThat(request.checkCommits()).isTrue();
    assertThat(stream.parkedReadable(0, request, TransactionSnapshot.parse("690:710:700")))
        .isFalse();
    assertThat(stream.parkedReadable(0, request, TransactionSnapshot.parse("701:710:"))).isTrue();
    assertThat(stream.parkedToRead(0).checkCommits())
        .as("an ended transaction is forgotten")
        .isFalse();
  }

  @Test
  void aHeldKeysEventsLeaveAFullLaneAndComeBackInOrderWhenItIsReleased() throws Exception {
    holdKeyK();
    stream.offer("r2", event(2, "k"), null);
    stream.offer("r3", event(3, "k"), null);
    // The lane is full of k's events: another key's event parks them instead of waiting.
    assertThat(stream.offer("r4", event(4, "other"), null)).isTrue();
    stream.offer("r5", event(5, "k"), null);
    assertThat(stream.parkedKeys()).isEqualTo(1);
    assertThat(stream.parkedEvents()).isEqualTo(3);
    assertThat(stream.size()).as("k#1 retrying and other#4").isEqualTo(2);
    assertThat(stream.parkedToRead(0)).as("k is still held back").isNull();

    List<ChangeStream.Item> other = stream.take(0, 10, Duration.ZERO);
    assertThat(ids(other)).containsExactly(4L);
    publish(other);
    assertThat(stream.takeCommittable()).as("k#1 holds the watermark").isNull();

    clock.advance(Duration.ofSeconds(3));
    List<ChangeStream.Item> retry = stream.take(0, 10, Duration.ZERO);
    assertThat(ids(retry)).containsExactly(1L);
    publish(retry);
    assertThat(stream.takeCommittable()).as("not past the parked k#2").isEqualTo("r1");

    ParkedRows.Request first = stream.parkedToRead(0);
    assertThat(first.firstId()).isEqualTo(2);
    assertThat(first.lastId()).isEqualTo(5);
    assertThat(first.limit()).as("the lane's room").isEqualTo(2);
    stream.readBack(0, first, rows(2, 3));
    stream.offer("r6", event(6, "k"), null); // still behind the parked range
    assertThat(stream.parkedEvents()).isEqualTo(4);
    List<ChangeStream.Item> back = stream.take(0, 10, Duration.ZERO);
    assertThat(ids(back)).containsExactly(2L, 3L);
    publish(back);
    assertThat(stream.takeCommittable()).as("the range's pin holds until it is read").isNull();

    ParkedRows.Request second = stream.parkedToRead(0);
    assertThat(second.firstId()).isEqualTo(4);
    assertThat(second.lastId()).isEqualTo(6);
    stream.readBack(0, second, rows(5, 6));
    assertThat(stream.parkedKeys()).isZero();
    List<ChangeStream.Item> rest = stream.take(0, 10, Duration.ZERO);
    assertThat(ids(rest)).containsExactly(5L, 6L);
    publish(rest);
    assertThat(stream.takeCommittable()).isEqualTo("r6");
    assertThat(stream.size()).isZero();

    stream.offer("r7", event(7, "k"), null);
    assertThat(ids(stream.take(0, 10, Duration.ZERO))).as("no longer parked").containsExactly(7L);
  }

  @Test
  void theSweepLeavesAParkedRowToItsKeysReadBack() throws Exception {
    parkK2AndK3();
    assertThat(stream.offerSwept(List.of(event(2, "k"), event(3, "k")))).isZero();
    assertThat(stream.size()).isEqualTo(2);
  }

  @Test
  void aSweptCopyTakesTheStreamPositionOfItsEvent() throws Exception {
    ChangeStream<String> s = new ChangeStream<>(1, 10, clock, Ticker.SYSTEM);
    OutboxEvent e = event(1, "a");
    assertThat(s.offerSwept(List.of(e))).isEqualTo(1);
    List<ChangeStream.Item> taken = s.take(0, 10, Duration.ZERO);
    assertThat(s.offer("r1", e, null)).isTrue();
    s.pass("hb");
    assertThat(s.takeCommittable()).as("not past the swept copy in flight").isNull();
    s.settled(0, taken, List.of(new Settlement.Published(e)));
    assertThat(s.takeCommittable()).isEqualTo("hb");
  }

  @Test
  void theWatermarkStaysSmallBehindAKeyHeldForLong() throws Exception {
    holdKeyK();
    for (long id = 2; id < 20_000; id++) {
      stream.offer("r" + id, event(id, "o" + id % 7), null);
      publish(stream.checked(0, stream.take(0, 10, Duration.ZERO), pending(id)));
    }
    assertThat(stream.takeCommittable()).isNull();
    assertThat(stream.positions()).isLessThanOrEqualTo(3);
  }

  private static Map<Long, ChangeStream.Row> pending(long id) {
    return Map.of(id, new ChangeStream.Row(ChangeStreamTest.event(id, "o" + id % 7), null));
  }

  @Test
  void aStaleReadBackChangesNothing() throws Exception {
    parkK2AndK3();
    publish(stream.take(0, 10, Duration.ZERO));
    clock.advance(Duration.ofSeconds(3));
    publish(stream.take(0, 10, Duration.ZERO));
    ParkedRows.Request r = stream.parkedToRead(0);
    stream.readBack(0, r, rows(2, 3));
    stream.readBack(0, r, rows(2, 3)); // a stale request changes nothing
    assertThat(ids(stream.take(0, 10, Duration.ZERO))).containsExactly(2L, 3L);
  }

  @Test
  void aCatchUpParksAHeldKeysRowsSoOtherKeysFlowAndBringsThemBackInOrder() throws Exception {
    stream.beginCatchUp();
    stream.offerCaughtUp(event(1, "k"), null, clock.instant().plusSeconds(3)); // holds k
    stream.offerCaughtUp(event(2, "k"), null, null);
    stream.offerCaughtUp(event(3, "k"), null, null);
    // The lane is full of k's caught-up rows: another key's row parks them instead of waiting.
    ExecutorService reader = Executors.newSingleThreadExecutor();
    try {
      Future<Boolean> other = reader.submit(() -> stream.offerCaughtUp(event(4, "o"), null, null));
      assertThat(other.get(5, TimeUnit.SECONDS)).isTrue();
    } finally {
      reader.shutdownNow();
    }
    assertThat(stream.offerCaughtUp(event(5, "k"), null, null)).isTrue(); // parked straight away
    assertThat(stream.parkedKeys()).isEqualTo(1);
    assertThat(stream.parkedEvents()).isEqualTo(3);
    assertThat(stream.size()).as("k#1 retrying and o#4").isEqualTo(2);
    stream.caughtUpRead();
    stream.offer("r6", event(6, "k"), null); // streamed: behind the parked range, pinned
    stream.offer("r7", event(7, "o"), null);

    List<ChangeStream.Item> others = stream.take(0, 10, Duration.ZERO);
    assertThat(ids(others)).containsExactly(4L, 7L);
    publish(others);
    assertThat(stream.takeCommittable()).as("the parked streamed k#6 holds the watermark").isNull();
    assertThat(stream.openCaughtUp()).as("k's parked caught-up rows are not final").isPositive();

    clock.advance(Duration.ofSeconds(3));
    List<ChangeStream.Item> retry = stream.take(0, 10, Duration.ZERO);
    assertThat(ids(retry)).containsExactly(1L);
    publish(retry);
    ParkedRows.Request first = stream.parkedToRead(0);
    assertThat(first.firstId()).isEqualTo(2);
    assertThat(first.lastId()).isEqualTo(6);
    stream.readBack(0, first, rows(2, 3));
    List<ChangeStream.Item> back = stream.take(0, 10, Duration.ZERO);
    assertThat(ids(back)).containsExactly(2L, 3L);
    publish(back);
    stream.readBack(0, stream.parkedToRead(0), rows(5, 6));
    assertThat(stream.parkedKeys()).isZero();
    List<ChangeStream.Item> rest = stream.take(0, 10, Duration.ZERO);
    assertThat(ids(rest)).containsExactly(5L, 6L);
    assertThat(stream.openCaughtUp()).as("k#5 is in flight").isPositive();
    publish(rest);
    assertThat(stream.openCaughtUp()).isZero();
    assertThat(stream.awaitCaughtUpFinal()).isTrue();
    assertThat(stream.takeCommittable()).isEqualTo("r7");
    assertThat(stream.size()).isZero();
  }

  @Test
  @org.junit.jupiter.api.Timeout(30) // the catch-up runs on this thread: it hung on the old code
  void aCaughtUpRowAlsoStreamedKeepsItsPositionPinnedWhenParked() throws Exception {
    stream.beginCatchUp();
    stream.offerCaughtUp(event(1, "k"), null, clock.instant().plusSeconds(3)); // holds k
    stream.offerCaughtUp(event(2, "k"), null, null);
    stream.offer("r2", event(2, "k"), null); // the stream delivers k#2 too: it takes r2
    stream.offerCaughtUp(event(3, "k"), null, null);
    stream.offerCaughtUp(event(4, "o"), null, null); // the full lane parks k#2 and k#3
    stream.caughtUpRead();
    stream.offer("r5", event(5, "o"), null);
    List<ChangeStream.Item> others = stream.take(0, 10, Duration.ZERO);
    assertThat(ids(others)).containsExactly(4L, 5L);
    publish(others);
    assertThat(stream.parkedKeys()).isEqualTo(1);
    assertThat(stream.takeCommittable()).as("the parked k#2 pins r2").isNull();
    assertThat(stream.offerSwept(List.of(event(9, "k")))).as("joins k's range").isZero();
    assertThat(stream.parkedEvents()).isEqualTo(3);

    clock.advance(Duration.ofSeconds(3));
    publish(stream.take(0, 10, Duration.ZERO));
    ParkedRows.Request r = stream.parkedToRead(0);
    assertThat(r.lastId()).isEqualTo(9);
    stream.readBack(0, r, rows(2, 3));
    List<ChangeStream.Item> back = stream.take(0, 10, Duration.ZERO);
    assertThat(ids(back)).containsExactly(2L, 3L);
    publish(back);
    assertThat(stream.takeCommittable()).as("k#9 still parked behind r2's pin").isNull();
    stream.readBack(0, stream.parkedToRead(0), rows(9));
    List<ChangeStream.Item> swept = stream.take(0, 10, Duration.ZERO);
    assertThat(ids(swept)).containsExactly(9L);
    publish(swept);
    assertThat(stream.takeCommittable()).isEqualTo("r5");
    assertThat(stream.openCaughtUp()).isZero();
  }
}
