package io.outbox.source.cdc;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.OutboxEvent;
import java.time.Instant;

/**
 * Takes the streamed INSERTs into a {@link ChangeStream}: each joins its lane in stream order and
 * holds its position of the watermark until it is final; a full lane makes the engine wait, unless
 * events of held-back keys can be parked to make room. Callers hold the stream's lock.
 */
final class StreamIntake {

  private final StreamState s;
  private final Parking parking;

  StreamIntake(StreamState state, Parking parking) {
    this.s = state;
    this.parking = parking;
  }

  /** See {@link ChangeStream#offer}. */
  boolean offer(Object record, OutboxEvent event, Instant notBefore) throws InterruptedException {
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
    while (true) {
      if (s.closed) {
        return false;
      }
      ParkedKey parked = lane.parked.get(key);
      if (parked != null) {
        // Behind the parked events of its key: parked too; the pin holds the watermark (this
        // event's position becomes the pin when only rows read from the table are parked).
        parked.add(event.id());
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
        parking.startParking(lane, new ParkedKey(key, event.id(), s.watermark.add(record, 1)));
        s.parkedEvents++;
        return true;
      }
      if (parking.parkHeld(lane) == 0) {
        s.changed.await(); // full of events of keys that may go: the engine waits
      }
    }
    ChangeStream.Item item =
        new ChangeStream.Item(event, s.watermark.add(record, 1), notBefore, false, false);
    lane.queue.addLast(item);
    lane.streamed++;
    s.inMemory.put(event.id(), item);
    s.changed.signalAll();
    return true;
  }
}
