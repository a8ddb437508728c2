package io.outbox.source.cdc;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.OutboxEvent;
import java.time.Instant;
import java.util.List;

/**
 * Takes events into the memory of a {@link ChangeStream}: the streamed INSERTs, each joining its
 * lane in stream order and holding its position of the watermark until it is final, and ahead of
 * them, in id order, the rows read from the table (the sweep's finds and the catch-up's rows). A
 * full lane makes the engine (or the catch-up) wait, unless events of held-back keys can be parked
 * to make room. While a catch-up is being read, streamed events wait behind it, and it ends only
 * once each of its rows (parked ones included) is final. The stream still delivers the INSERTs of
 * the rows the catch-up handed (committed before it read them, so before the stream passes the end
 * of its read); one of those whose row is final by then only moves the position, as a record that
 * is not an event ({@link CaughtUpIds}). Callers hold the stream's lock.
 */
final class Intake {

  private final StreamState s;
  private final Parking parking;

  Intake(StreamState state, Parking parking) {
    this.s = state;
    this.parking = parking;
  }

  /**
   * See {@link ChangeStream#offer}; the caller wakes the lanes ({@link StreamState#changed}) once
   * its batch is in.
   */
  boolean offer(Object record, OutboxEvent event, Instant notBefore, long txId)
      throws InterruptedException {
    if (s.closed) {
      return false;
    }
    ChangeStream.Item known = s.inMemory.get(event.id());
    if (known != null) {
      // The sweep's or the catch-up's copy: it takes this position, so that the watermark cannot
      // pass it while it is not final.
      if (known.position == null) {
        known.position = s.watermark.add(record, 1);
      } else {
        s.watermark.add(record, 0);
      }
      return true;
    }
    StreamLane lane = s.laneOf(event.key());
    AggregateKey key = event.key();
    if (s.caughtUpIds.contains(event.id()) && lane.parked.get(key) == null) {
      // The catch-up handed this row and it left memory without being parked: it is final
      // (published or dead-lettered). Its INSERT only moves the position, as a record that is not
      // an event: no lane, no claim query.
      s.watermark.add(record, 0);
      s.staleSkipped++;
      return true;
    }
    while (true) {
      if (s.closed) {
        return false;
      }
      ParkedKey parked = lane.parked.get(key);
      if (parked != null) {
        // Behind the parked events of its key: parked too; the pin holds the watermark (this
        // event's position becomes the pin when only rows read from the table are parked).
        parked.add(event.id());
        parked.addTransaction(txId);
        s.parkedEvents++;
        if (parked.pin() == null) {
          parked.repin(s.watermark.add(record, 1));
        } else {
          s.watermark.add(record, 0);
        }
        return true;
      }
      if (lane.streamed < s.laneBuffer) {
        break;
      }
      if (lane.held.containsKey(key)) {
        ParkedKey started = new ParkedKey(key, event.id(), s.watermark.add(record, 1));
        started.addTransaction(txId);
        parking.startParking(lane, started);
        s.parkedEvents++;
        return true;
      }
      if (parking.parkHeld(lane) == 0) {
        // Full of events of keys that may go: the engine waits, the lanes told first (the caller
        // wakes them once per batch otherwise).
        s.changed.signalAll();
        s.changed.await();
      }
    }
    ChangeStream.Item item =
        new ChangeStream.Item(event, s.watermark.add(record, 1), notBefore, false, false);
    item.txId = txId;
    lane.queue.addLast(item);
    lane.streamed++;
    s.inMemory.put(event.id(), item);
    return true;
  }

  /** See {@link ChangeStream#offerSwept}. */
  int offerSwept(List<OutboxEvent> events) {
    int added = 0;
    for (OutboxEvent e : events) {
      StreamLane lane = s.laneOf(e.key());
      ParkedKey parked = lane.parked.get(e.key());
      if (!s.inMemory.containsKey(e.id()) && parked != null && e.id() > parked.lastId()) {
        // Behind the parked events of its key: it would wait in the lane for their read-back.
        parked.add(e.id());
        s.parkedEvents++;
      } else if (!s.inMemory.containsKey(e.id()) && !lane.inParkedRange(e)) {
        ChangeStream.Item item = new ChangeStream.Item(e, null, null, false, true);
        s.inMemory.put(e.id(), item);
        lane.ahead.put(e.id(), item);
        added++;
      }
    }
    if (added > 0) {
      s.changed.signalAll();
    }
    return added;
  }

  /** See {@link ChangeStream#offerCaughtUp}. */
  boolean offerCaughtUp(OutboxEvent event, Instant notBefore, Instant retryAt)
      throws InterruptedException {
    StreamLane lane = s.laneOf(event.key());
    AggregateKey key = event.key();
    while (true) {
      if (s.closed) {
        return false;
      }
      if (s.inMemory.containsKey(event.id())) {
        return true;
      }
      ParkedKey parked = lane.parked.get(key);
      if (parked != null) {
        // Its key's parked rows are read back in id order, this one with them.
        parked.add(event.id());
        s.parkedEvents++;
        if (parked.addCaughtUp(event.id())) {
          s.openCaughtUp++;
        }
        s.caughtUpIds.add(event.id());
        return true;
      }
      if (lane.ahead.size() < s.laneBuffer) {
        break;
      }
      if (lane.held.containsKey(key)) {
        ParkedKey p = new ParkedKey(key, event.id(), null);
        p.addCaughtUp(event.id());
        s.openCaughtUp++;
        s.parkedEvents++;
        s.caughtUpIds.add(event.id());
        parking.startParking(lane, p);
        return true;
      }
      if (parking.parkHeldAhead(lane) == 0) {
        s.changed.await(); // full of rows of keys that may go: the catch-up waits
      }
    }
    ChangeStream.Item item = new ChangeStream.Item(event, null, notBefore, true, true);
    s.inMemory.put(event.id(), item);
    s.openCaughtUp++;
    s.caughtUpIds.add(event.id());
    if (retryAt != null && retryAt.isAfter(s.clock.instant())) {
      item.due = retryAt;
      lane.retry(item);
    } else {
      lane.ahead.put(event.id(), item);
    }
    s.changed.signalAll();
    return true;
  }

  /** See {@link ChangeStream#awaitCaughtUpFinal}. */
  boolean awaitCaughtUpFinal() throws InterruptedException {
    while (!s.closed && s.openCaughtUp > 0) {
      s.changed.await();
    }
    return !s.closed;
  }
}
