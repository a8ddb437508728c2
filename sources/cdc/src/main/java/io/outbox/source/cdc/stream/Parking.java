package io.outbox.source.cdc.stream;

import io.outbox.relay.spi.AggregateKey;
import java.util.Iterator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Parks the events of keys held back by a retry once their lane is full, and reads them back when
 * the key is released: a parked event leaves memory and only its key's {@link ParkedKey} remains
 * (the range of ids and a pin on the earliest streamed position, so the watermark never passes
 * them); the claim path reads the range back from the table ({@link ParkedRows}), ahead of the
 * key's newer events, which stay parked until the whole range is read. Callers hold the stream's
 * lock unless a method says otherwise.
 */
final class Parking {

  /** The most parked rows one statement reads back. */
  private static final int READ_BACK = 500;

  private static final Logger log = LoggerFactory.getLogger(ChangeStream.class);

  private final StreamState s;

  Parking(StreamState state) {
    this.s = state;
  }

  /**
   * Parks the streamed events of held-back keys buffered in a full lane: they leave memory, their
   * key keeps the range of their ids and the earliest position ({@link ParkedKey}).
   *
   * @return how many left the lane
   */
  int parkHeld(StreamLane lane) {
    int moved = 0;
    for (Iterator<ChangeStream.Item> it = lane.queue.iterator(); it.hasNext(); ) {
      ChangeStream.Item item = it.next();
      AggregateKey key = item.event.key();
      if (lane.held.containsKey(key) || lane.parked.containsKey(key)) {
        it.remove();
        lane.streamed--;
        s.inMemory.remove(item.event.id());
        park(lane, item);
        moved++;
      }
    }
    return moved;
  }

  /**
   * Parks the rows read from the table that wait in a full lane behind a held-back key (a retry, or
   * parked rows of their key before them).
   *
   * @return how many left the lane
   */
  int parkHeldAhead(StreamLane lane) {
    int moved = 0;
    for (Iterator<ChangeStream.Item> it = lane.ahead.values().iterator(); it.hasNext(); ) {
      ChangeStream.Item item = it.next();
      if (lane.held.containsKey(item.event.key()) || lane.parkedBefore(item)) {
        it.remove();
        s.inMemory.remove(item.event.id());
        park(lane, item);
        moved++;
      }
    }
    return moved;
  }

  /** Adds an item that left memory to its key's parked range (started if there is none). */
  private void park(StreamLane lane, ChangeStream.Item item) {
    ParkedKey parked = lane.parked.get(item.event.key());
    s.parkedEvents++;
    if (item.caughtUp) {
      s.openCaughtUp--; // the range counts for it from now on
    }
    if (parked == null) {
      // Its hold on its position, if any, becomes the pin of the range.
      parked = new ParkedKey(item.event.key(), item.event.id(), item.position);
      startParking(lane, parked);
    } else {
      parked.add(item.event.id());
      if (item.position != null && (parked.pin() == null || item.position.before(parked.pin()))) {
        Watermark.Position former = parked.repin(item.position);
        if (former != null) {
          s.watermark.release(former);
        }
      } else if (item.position != null) {
        s.watermark.release(item.position);
      }
    }
    parked.addTransaction(item.txId);
    if (item.caughtUp && parked.addCaughtUp(item.event.id())) {
      s.openCaughtUp++;
    }
  }

  /** Parks a key's range in {@code lane}; the lane's first says so in the log. */
  void startParking(StreamLane lane, ParkedKey parked) {
    if (lane.parked.isEmpty()) {
      log.info(
          "pipeline {} lane {}: full ({} events) while keys are held back by a retry; their newer"
              + " events leave memory and are read back from the table once they are released",
          s.pipeline,
          lane.index,
          s.laneBuffer);
    }
    lane.parked.put(parked.key(), parked);
  }

  /**
   * A released key's parked range (no event of it waits for a retry), while the lane has room for
   * the rows read from the table; {@code null} when there is none.
   */
  ParkedRows.Request toRead(StreamLane lane) {
    int room = s.laneBuffer - lane.ahead.size();
    if (room <= 0 || lane.parked.isEmpty()) {
      return null;
    }
    for (ParkedKey p : lane.parked.values()) {
      if (!lane.held.containsKey(p.key())) {
        return new ParkedRows.Request(
            p, p.firstId(), p.lastId(), Math.min(room, READ_BACK), p.mayBeCommitting());
      }
    }
    return null;
  }

  /**
   * Whether {@code request}'s range may be read back now: no transaction of its streamed events is
   * still in progress at {@code snapshot}, taken before the read (a transaction ended by then is
   * visible to it).
   */
  boolean readable(StreamLane l, ParkedRows.Request request, TransactionSnapshot snapshot) {
    ParkedKey p = request.parked();
    return l.parked.get(p.key()) == p && !p.committingAt(snapshot);
  }

  /** See {@link ChangeStream#readBack}. */
  void readBack(StreamLane l, ParkedRows.Request request, List<ParkedRows.Row> rows) {
    ParkedKey p = request.parked();
    if (s.closed || l.parked.get(p.key()) != p) {
      return;
    }
    for (ParkedRows.Row row : rows) {
      long id = row.event().id();
      ChangeStream.Item known = s.inMemory.get(id);
      if (known != null && l.moveAheadInIdOrder(known)) {
        // Streamed before an earlier event of its key was parked (a commit out of id order): it
        // waited in the queue, which is taken after the rows read back; it joins them, in id order.
      } else if (known == null) {
        // A row that may have been caught up counts as one until it is final.
        boolean caughtUp = p.caughtUp(id);
        ChangeStream.Item item =
            new ChangeStream.Item(row.event(), p.pin(), row.availableAt(), caughtUp, true);
        if (p.pin() != null) {
          s.watermark.hold(p.pin());
        }
        if (caughtUp) {
          s.openCaughtUp++;
        }
        s.inMemory.put(id, item);
        l.ahead.put(id, item);
      }
    }
    // An earlier event of the key parked meanwhile lowered the range: it is read again from
    // there.
    if (p.firstId() >= request.firstId()) {
      // Unless an earlier event of the key was parked meanwhile: then read again from there.
      p.readUpTo(
          rows.size() == request.limit()
              ? rows.get(rows.size() - 1).event().id()
              : request.lastId());
    }
    boolean ended = p.firstId() > p.lastId();
    if (p.caughtUpReadBack(ended)) {
      s.openCaughtUp--; // its caught-up rows are in memory now, each counted
    }
    if (ended) {
      l.parked.remove(p.key());
      if (p.pin() != null) {
        s.watermark.release(p.pin());
      }
      log.info(
          "pipeline {} lane {}: a released key's {} parked event(s) were read back from the"
              + " table ({} key(s) still parked in this lane)",
          s.pipeline,
          l.index,
          p.count(),
          l.parked.size());
    }
    s.changed.signalAll();
  }

  /** How many keys have events parked now. */
  int parkedKeys() {
    int n = 0;
    for (StreamLane l : s.lanes) {
      n += l.parked.size();
    }
    return n;
  }
}
