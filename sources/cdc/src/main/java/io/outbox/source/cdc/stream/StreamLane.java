package io.outbox.source.cdc.stream;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.OutboxEvent;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * One lane of a {@link ChangeStream}: its streamed events in stream order, ahead of them the rows
 * read from the table in id order, the events waiting for a retry (their keys held back) and the
 * keys whose events are parked. Not thread-safe: the stream's lock guards it.
 */
final class StreamLane {

  final int index;
  final ArrayDeque<ChangeStream.Item> queue = new ArrayDeque<>();
  final TreeMap<Long, ChangeStream.Item> ahead = new TreeMap<>(); // from the table: before queue
  final List<ChangeStream.Item> retrying = new ArrayList<>();
  final Map<AggregateKey, Integer> held = new HashMap<>(); // keys of `retrying`, with counts
  final Map<AggregateKey, ParkedKey> parked = new LinkedHashMap<>();
  int streamed; // items of the queue that came from the stream (bounded by the lane buffer)

  StreamLane(int index) {
    this.index = index;
  }

  void retry(ChangeStream.Item item) {
    retrying.add(item);
    held.merge(item.event.key(), 1, Integer::sum);
  }

  void retried(ChangeStream.Item item) {
    held.computeIfPresent(item.event.key(), (k, n) -> n == 1 ? null : n - 1);
  }

  /**
   * Moves {@code known}, a streamed event waiting in the queue, ahead among the rows read from the
   * table, in id order: a row of its key read from the table (caught up, read back) must not go out
   * before it. Returns whether it was in the queue (and is moved).
   */
  boolean moveAheadInIdOrder(ChangeStream.Item known) {
    if (known.fromTable || known.inIdOrder || !queue.remove(known)) {
      return false;
    }
    streamed--;
    known.inIdOrder = true;
    ahead.put(known.event.id(), known);
    return true;
  }

  /** Whether an item of a parked key is still to wait for the parked rows before it. */
  boolean parkedBefore(ChangeStream.Item item) {
    ParkedKey p = parked.get(item.event.key());
    return p != null && !p.allows(item.event.id());
  }

  /** Whether {@code e} belongs to a parked range: its key's read-back brings it. */
  boolean inParkedRange(OutboxEvent e) {
    ParkedKey p = parked.get(e.key());
    return p != null && e.id() >= p.firstId() && e.id() <= p.lastId();
  }

  /**
   * Moves the retries that are due to {@code batch} (in id order) and adds the keys of the others
   * to {@code heldKeys}.
   */
  void takeDueRetries(
      List<ChangeStream.Item> batch, int maxEvents, Set<AggregateKey> heldKeys, Instant now) {
    retrying.sort(Comparator.comparingLong(i -> i.event.id()));
    for (Iterator<ChangeStream.Item> it = retrying.iterator(); it.hasNext(); ) {
      ChangeStream.Item item = it.next();
      if (batch.size() < maxEvents && !item.due.isAfter(now)) {
        it.remove();
        retried(item);
        item.due = null;
        batch.add(item);
      } else {
        heldKeys.add(item.event.key());
      }
    }
  }

  /** Moves the items that may go from {@code it} to {@code batch}; returns how many moved. */
  int takeFrom(
      Iterator<ChangeStream.Item> it,
      List<ChangeStream.Item> batch,
      int maxEvents,
      Set<AggregateKey> heldKeys,
      Instant now) {
    int moved = 0;
    while (it.hasNext() && batch.size() < maxEvents) {
      ChangeStream.Item item = it.next();
      if (heldKeys.contains(item.event.key()) || parkedBefore(item)) {
        continue;
      }
      if (item.notBefore != null && item.notBefore.isAfter(now)) {
        continue; // delayed: not before available_at; like polling, it holds no key back
      }
      it.remove();
      batch.add(item);
      moved++;
    }
    return moved;
  }

  /** The soonest time a retry or a delayed event of this lane may go, or {@code null}. */
  Instant nextDue() {
    Instant next = null;
    for (ChangeStream.Item item : retrying) {
      next = next == null || item.due.isBefore(next) ? item.due : next;
    }
    for (ChangeStream.Item item : ahead.values()) {
      next = earlier(next, item.notBefore);
    }
    for (ChangeStream.Item item : queue) {
      next = earlier(next, item.notBefore);
    }
    return next;
  }

  private static Instant earlier(Instant a, Instant b) {
    return b != null && (a == null || b.isBefore(a)) ? b : a;
  }

  /** Puts items back at the front, in id order: rows read from the table ahead, the rest queued. */
  void putBack(List<ChangeStream.Item> items) {
    List<ChangeStream.Item> sorted = new ArrayList<>(items);
    sorted.sort(Comparator.comparingLong((ChangeStream.Item i) -> i.event.id()).reversed());
    for (ChangeStream.Item item : sorted) {
      if (item.fromTable || item.inIdOrder) {
        ahead.put(item.event.id(), item);
      } else {
        queue.addFirst(item);
        streamed++;
      }
    }
  }
}
