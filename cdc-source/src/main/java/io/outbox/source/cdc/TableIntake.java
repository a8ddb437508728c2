package io.outbox.source.cdc;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.OutboxEvent;
import java.time.Instant;
import java.util.List;

/**
 * Takes the rows read from the table into a {@link ChangeStream}, ahead of the streamed events in
 * id order: the sweep's finds and the catch-up's rows. While a catch-up is being read, streamed
 * events wait behind it, and it ends only once each of its rows (parked ones included) is final.
 * Callers hold the stream's lock.
 */
final class TableIntake {

  private final StreamState s;
  private final Parking parking;

  TableIntake(StreamState state, Parking parking) {
    this.s = state;
    this.parking = parking;
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
