package io.outbox.source.cdc.stream;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.OutboxEvent;
import java.time.Instant;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes events into the memory of a {@link ChangeStream}: the engine's batches, whose streamed
 * INSERTs each join their lane in stream order and hold their position of the watermark until they
 * are final, while the other records only move the position (the relay's heartbeats among them
 * telling how far the stream has come), and ahead of them, in id order, the rows read from the
 * table (the sweep's finds and the catch-up's rows). A full lane makes the engine (or the catch-up)
 * wait, unless events of held-back keys can be parked to make room. While a catch-up is being read,
 * streamed events wait behind it, and it ends only once each of its rows (parked ones included) is
 * final. The stream still delivers the INSERTs of the rows the catch-up handed (committed before it
 * read them, so before the stream passes the end of its read); one of those whose row is final by
 * then only moves the position, as a record that is not an event ({@link CaughtUpIds}). Callers
 * hold the stream's lock.
 */
final class Intake {

  private static final Logger log = LoggerFactory.getLogger(ChangeStream.class);

  private final StreamState s;
  private final Parking parking;

  Intake(StreamState state, Parking parking) {
    this.s = state;
    this.parking = parking;
  }

  /**
   * See {@link ChangeStream#offerAll}; wakes the lanes ({@link StreamState#changed}) once the batch
   * is in (or the stream closed).
   */
  boolean offerAll(List<? extends ChangeStream.Streamed<?>> batch) throws InterruptedException {
    try {
      for (ChangeStream.Streamed<?> r : batch) {
        if (r.event() != null) {
          if (!offer(r.record(), r.event(), r.notBefore(), r.txId())) {
            return false;
          }
        } else {
          if (r.heartbeat() != null) {
            reached(r.heartbeat());
          }
          pass(r.record());
        }
      }
      return true;
    } finally {
      s.changed.signalAll();
    }
  }

  /** One streamed INSERT of a batch; the batch wakes the lanes once it is in. */
  private boolean offer(Object record, OutboxEvent event, Instant notBefore, long txId)
      throws InterruptedException {
    StreamLane lane = s.laneOf(event.key());
    AggregateKey key = event.key();
    while (true) {
      if (s.closed) {
        return false;
      }
      // Looked up again after every wait for room: the catch-up or the sweep may have handed the
      // row meanwhile, and a second copy in the lane would be handed out twice in one claim.
      ChangeStream.Item known = s.inMemory.get(event.id());
      if (known != null) {
        // The sweep's or the catch-up's copy: it takes this position, so that the watermark
        // cannot pass it while it is not final.
        if (known.position == null) {
          known.position = s.watermark.add(record, 1);
        } else {
          s.watermark.add(record, 0);
        }
        return true;
      }
      if (s.caughtUpIds.contains(event.id()) && lane.parked.get(key) == null) {
        // The catch-up handed this row and it left memory without being parked: it is final
        // (published or dead-lettered). Its INSERT only moves the position, as a record that is
        // not an event: no lane, no claim query.
        s.watermark.add(record, 0);
        s.staleSkipped++;
        return true;
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

  /** See {@link ChangeStream#pass}. */
  void pass(Object record) {
    // A record dropped after close must not let a later position be committed past an event that
    // was never taken.
    if (!s.closed) {
      s.watermark.add(record, 0);
    }
  }

  /** See {@link ChangeStream#reached}. */
  void reached(Instant emittedAt) {
    if (s.streamTime == null || emittedAt.isAfter(s.streamTime)) {
      s.streamTime = emittedAt;
    }
    if (s.caughtUpReadAt != null && emittedAt.isAfter(s.caughtUpReadAt)) {
      s.caughtUpReadAt = null;
      if (s.caughtUpIds.isEmpty()) {
        return;
      }
      s.caughtUpIds.clear();
      log.info(
          "pipeline {}: the stream has passed the caught-up rows: {} of their INSERT(s)"
              + " were final already and skipped, {} streamed event(s) found final by a claim",
          s.pipeline,
          s.staleSkipped,
          s.staleInLanes);
    }
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
      ChangeStream.Item known = s.inMemory.get(event.id());
      if (known != null) {
        // Streamed before the catch-up read reached it: it would wait in the queue, behind the
        // catch-up, while the later rows of its key went out; it joins them, in id order.
        if (lane.moveAheadInIdOrder(known)) {
          s.changed.signalAll(); // a lane waiting behind the catch-up may take it now
        }
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
