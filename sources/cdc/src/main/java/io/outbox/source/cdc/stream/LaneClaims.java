package io.outbox.source.cdc.stream;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Settlement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The claim side of a {@link ChangeStream}: hands out a lane's next events and applies what the
 * claim learnt of them (their rows, then their verdicts): final events free their position, retries
 * wait in memory holding their key back, the rest go back to the front of the lane. Callers hold
 * the stream's lock.
 */
final class LaneClaims {

  /** When an event whose retry the database says is not due yet is taken again at the soonest. */
  private static final Duration RECHECK = Duration.ofMillis(10);

  private final StreamState s;
  private final Parking parking;

  LaneClaims(StreamState state, Parking parking) {
    this.s = state;
    this.parking = parking;
  }

  /** See {@link ChangeStream#take}. */
  List<ChangeStream.Item> take(int lane, int maxEvents, Duration maxWait)
      throws InterruptedException {
    Deadline deadline = s.ticker.deadline(maxWait);
    StreamLane l = s.lanes[lane];
    while (!s.closed) {
      Instant now = s.clock.instant();
      List<ChangeStream.Item> batch = takeNow(l, maxEvents, now);
      if (!batch.isEmpty() || parking.toRead(l) != null) {
        return batch; // empty: parked rows of a released key are to be read back first
      }
      long left = deadline.nanosLeft();
      if (left <= 0) {
        break;
      }
      Instant next = l.nextDue();
      if (next != null) {
        long untilDue = Math.max(1_000_000, Duration.between(now, next).toNanos());
        left = Math.min(left, untilDue);
      }
      s.changed.await(left, TimeUnit.NANOSECONDS);
    }
    return List.of();
  }

  private List<ChangeStream.Item> takeNow(StreamLane lane, int maxEvents, Instant now) {
    List<ChangeStream.Item> batch = new ArrayList<>();
    Set<AggregateKey> held = new HashSet<>();
    lane.takeDueRetries(batch, maxEvents, held, now);
    int fromTable = lane.takeFrom(lane.ahead.values().iterator(), batch, maxEvents, held, now);
    int fromStream =
        s.catchingUp ? 0 : lane.takeFrom(lane.queue.iterator(), batch, maxEvents, held, now);
    if (fromStream > 0) {
      lane.streamed -= fromStream;
    }
    if (fromTable + fromStream > 0) {
      s.changed.signalAll(); // room in the lane for the engine, or for the catch-up
    }
    return batch;
  }

  /** See {@link ChangeStream#checked}. */
  List<ChangeStream.Item> checked(
      int lane, List<ChangeStream.Item> items, Map<Long, ChangeStream.Row> pending) {
    StreamLane l = s.lanes[lane];
    Set<AggregateKey> held = new HashSet<>();
    List<ChangeStream.Item> out = new ArrayList<>(items.size());
    List<ChangeStream.Item> back = new ArrayList<>();
    Instant now = s.clock.instant();
    for (ChangeStream.Item item : items) {
      ChangeStream.Row row = pending.get(item.event.id());
      if (row == null) {
        if (!item.fromTable) {
          s.staleInLanes++;
        }
        s.finish(item);
      } else if (held.contains(item.event.key())) {
        back.add(item);
      } else {
        if (row.event() != null) {
          item.event = row.event(); // the row, not what the stream carried of it
        }
        if (row.retryAt() != null) {
          // Not due on the database's clock; this clock may be a few ms behind it: no busy loop.
          item.due = row.retryAt().isAfter(now) ? row.retryAt() : now.plus(RECHECK);
          l.retry(item);
          held.add(item.event.key());
        } else {
          out.add(item);
        }
      }
    }
    l.putBack(back);
    if (out.size() < items.size()) {
      s.changed.signalAll();
    }
    return out;
  }

  /** See {@link ChangeStream#settled}. */
  void settled(int lane, List<ChangeStream.Item> items, List<Settlement> settlements) {
    Map<Long, Settlement> byId = new HashMap<>();
    for (Settlement st : settlements) {
      byId.put(st.event().id(), st);
    }
    StreamLane l = s.lanes[lane];
    List<ChangeStream.Item> back = new ArrayList<>();
    Instant now = s.clock.instant();
    for (ChangeStream.Item item : items) {
      Settlement st = byId.get(item.event.id());
      if (st instanceof Settlement.Published || st instanceof Settlement.DeadLetter) {
        s.finish(item);
      } else if (st instanceof Settlement.Retry r) {
        item.event = item.event.withAttempts(r.attempts());
        item.due = now.plus(r.delay());
        l.retry(item);
      } else {
        back.add(item);
      }
    }
    l.putBack(back);
    s.changed.signalAll();
  }
}
