package io.outbox.source.cdc;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one activation of the CDC source holds in memory: the streamed events, per lane, waiting to
 * be claimed (bounded: a full lane makes the engine wait), ahead of them the rows read from the
 * table (caught up for a new slot, or swept), in id order, the events waiting for a retry (their
 * key is held back, other keys flow), and the watermark: the stream positions in order, each
 * committable once every event up to it has a final verdict (published or dead-lettered). While a
 * catch-up is being read, streamed events wait behind it.
 *
 * <p>A key held back by a retry does not stall its lane: once the lane is full (of streamed events,
 * or of rows read by a catch-up), its events are parked, they leave memory and only a {@link
 * ParkedKey} remains (the range of their ids and a pin on the earliest streamed position, so the
 * watermark never passes them); when no event of the key waits for a retry any more, the claim path
 * reads them back from the table ({@link ParkedRows}), ahead of the key's newer events, which stay
 * parked until the whole range is read. Parked caught-up rows still count until they are final, so
 * the catch-up ends only once they are.
 *
 * <p>Positions are the engine's records of type {@code R} ({@link Watermark}); final ones next to
 * each other collapse into the latest, so memory grows with the events not yet final, not with the
 * stream.
 *
 * @param <R> the engine's record type, handed back to its committer
 */
final class ChangeStream<R> {

  /**
   * One event in memory, from the stream or read from the table ({@code fromTable}: caught up,
   * swept or read back after it was parked). {@code position} is what it holds of the watermark:
   * its stream position, the pin of its parked range, or none (caught up or swept, until the stream
   * delivers it too).
   */
  static final class Item {
    private OutboxEvent event;
    private Watermark.Position position;
    private final Instant notBefore;
    private final boolean caughtUp;
    private final boolean fromTable;
    private Instant due; // while waiting for a retry

    private Item(
        OutboxEvent event,
        Watermark.Position position,
        Instant notBefore,
        boolean caughtUp,
        boolean fromTable) {
      this.event = event;
      this.position = position;
      this.notBefore = notBefore;
      this.caughtUp = caughtUp;
      this.fromTable = fromTable;
    }

    OutboxEvent event() {
      return event;
    }
  }

  private static final class Lane {
    final ArrayDeque<Item> queue = new ArrayDeque<>();
    final TreeMap<Long, Item> ahead = new TreeMap<>(); // read from the table: before the stream
    final List<Item> retrying = new ArrayList<>();
    final Map<AggregateKey, Integer> held = new HashMap<>(); // keys of `retrying`, with counts
    final Map<AggregateKey, ParkedKey> parked = new LinkedHashMap<>();
    int streamed; // items of the queue that came from the stream (bounded by the lane buffer)

    void retry(Item item) {
      retrying.add(item);
      held.merge(item.event.key(), 1, Integer::sum);
    }

    void retried(Item item) {
      held.computeIfPresent(item.event.key(), (k, n) -> n == 1 ? null : n - 1);
    }

    /** Whether an item of a parked key is still to wait for the parked rows before it. */
    boolean parkedBefore(Item item) {
      ParkedKey p = parked.get(item.event.key());
      return p != null && !p.allows(item.event.id());
    }
  }

  /** When an event whose retry the database says is not due yet is taken again at the soonest. */
  private static final Duration RECHECK = Duration.ofMillis(10);

  /** The most parked rows one statement reads back. */
  private static final int READ_BACK = 500;

  private static final Logger log = LoggerFactory.getLogger(ChangeStream.class);

  private final String pipeline;
  private final int lanes;
  private final int laneBuffer;
  private final Clock clock;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final Lane[] state;
  private final Watermark watermark = new Watermark();
  private final Map<Long, Item> inMemory = new HashMap<>();
  private long parkedEvents; // events that left memory for a parked range, since the start
  private Instant streamTime;
  private boolean catchingUp; // streamed events wait until the catch-up is read
  private int openCaughtUp; // caught-up events without a final verdict
  private boolean closed;

  ChangeStream(int lanes, int laneBuffer, Clock clock) {
    this(lanes, laneBuffer, clock, "-");
  }

  /**
   * @param pipeline named in the log lines
   */
  ChangeStream(int lanes, int laneBuffer, Clock clock, String pipeline) {
    this.pipeline = pipeline;
    this.lanes = lanes;
    this.laneBuffer = laneBuffer;
    this.clock = clock;
    this.state = new Lane[lanes];
    for (int i = 0; i < lanes; i++) {
      state[i] = new Lane();
    }
  }

  /**
   * Takes one streamed INSERT; waits while its lane is full.
   *
   * @return {@code false} when the stream was closed meanwhile
   */
  boolean offer(R record, OutboxEvent event, Instant notBefore) throws InterruptedException {
    lock.lockInterruptibly();
    try {
      if (closed) {
        return false;
      }
      Item known = inMemory.get(event.id());
      if (known != null) {
        // The sweep's or the catch-up's copy: it takes this position, so that the watermark cannot
        // pass it while it is not final.
        if (known.position == null) {
          known.position = watermark.add(record, 1);
        } else {
          watermark.add(record, 0);
        }
        return true;
      }
      Lane lane = state[event.key().lane(lanes)];
      AggregateKey key = event.key();
      while (true) {
        if (closed) {
          return false;
        }
        ParkedKey parked = lane.parked.get(key);
        if (parked != null) {
          // Behind the parked events of its key: parked too; the pin holds the watermark (this
          // event's position becomes the pin when only rows read from the table are parked).
          parked.add(event.id());
          parkedEvents++;
          if (parked.pin() == null) {
            parked.repin(watermark.add(record, 1));
          } else {
            watermark.add(record, 0);
          }
          return true;
        }
        if (lane.streamed < laneBuffer) {
          break;
        }
        if (lane.held.containsKey(key)) {
          startParking(lane, new ParkedKey(key, event.id(), watermark.add(record, 1)));
          parkedEvents++;
          return true;
        }
        if (parkHeld(lane) == 0) {
          changed.await(); // full of events of keys that may go: the engine waits
        }
      }
      Item item = new Item(event, watermark.add(record, 1), notBefore, false, false);
      lane.queue.addLast(item);
      lane.streamed++;
      inMemory.put(event.id(), item);
      changed.signalAll();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Takes a streamed record that is not an event (it only moves the position). */
  void pass(R record) {
    lock.lock();
    try {
      if (closed) {
        // A record dropped after close must not let a later position be committed past an event
        // that was never taken.
        return;
      }
      watermark.add(record, 0);
    } finally {
      lock.unlock();
    }
  }

  /** Records how far the stream has come, from a heartbeat emitted at {@code emittedAt}. */
  void reached(Instant emittedAt) {
    lock.lock();
    try {
      if (streamTime == null || emittedAt.isAfter(streamTime)) {
        streamTime = emittedAt;
      }
    } finally {
      lock.unlock();
    }
  }

  /** The database time up to which the stream has delivered everything, or {@code null}. */
  Instant streamTime() {
    lock.lock();
    try {
      return streamTime;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Adds events the sweep found (not in memory already) ahead of the streamed ones, in id order
   * with the other rows read from the table; an event of a parked key is left to (or joins) its
   * key's parked range.
   */
  int offerSwept(List<OutboxEvent> events) {
    lock.lock();
    try {
      int added = 0;
      for (OutboxEvent e : events) {
        Lane lane = state[e.key().lane(lanes)];
        ParkedKey parked = lane.parked.get(e.key());
        if (!inMemory.containsKey(e.id()) && parked != null && e.id() > parked.lastId()) {
          // Behind the parked events of its key: it would wait in the lane for their read-back.
          parked.add(e.id());
          parkedEvents++;
        } else if (!inMemory.containsKey(e.id()) && !parked(lane, e)) {
          Item item = new Item(e, null, null, false, true);
          inMemory.put(e.id(), item);
          lane.ahead.put(e.id(), item);
          added++;
        }
      }
      if (added > 0) {
        changed.signalAll();
      }
      return added;
    } finally {
      lock.unlock();
    }
  }

  /** From now until {@link #caughtUpRead()}, streamed events wait behind the catch-up. */
  void beginCatchUp() {
    lock.lock();
    try {
      catchingUp = true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Adds a row of the catch-up (unless in memory already) ahead of the streamed events, in id
   * order; waits while its lane holds {@code lane-buffer} rows read from the table. A row due for a
   * retry later ({@code retryAt}) waits for it and holds its key back, as a retry does. When the
   * lane is full, the rows of held-back keys in it are parked (they leave memory, as streamed ones
   * do), and so is a row of a held-back or parked key, so that one key cannot stop the catch-up.
   *
   * @return {@code false} when the stream was closed meanwhile
   */
  boolean offerCaughtUp(OutboxEvent event, Instant notBefore, Instant retryAt)
      throws InterruptedException {
    lock.lockInterruptibly();
    try {
      Lane lane = state[event.key().lane(lanes)];
      AggregateKey key = event.key();
      while (true) {
        if (closed) {
          return false;
        }
        if (inMemory.containsKey(event.id())) {
          return true;
        }
        ParkedKey parked = lane.parked.get(key);
        if (parked != null) {
          // Its key's parked rows are read back in id order, this one with them.
          parked.add(event.id());
          parkedEvents++;
          if (parked.addCaughtUp(event.id())) {
            openCaughtUp++;
          }
          return true;
        }
        if (lane.ahead.size() < laneBuffer) {
          break;
        }
        if (lane.held.containsKey(key)) {
          ParkedKey p = new ParkedKey(key, event.id(), null);
          p.addCaughtUp(event.id());
          openCaughtUp++;
          parkedEvents++;
          startParking(lane, p);
          return true;
        }
        if (parkHeldAhead(lane) == 0) {
          changed.await(); // full of rows of keys that may go: the catch-up waits
        }
      }
      Item item = new Item(event, null, notBefore, true, true);
      inMemory.put(event.id(), item);
      openCaughtUp++;
      if (retryAt != null && retryAt.isAfter(clock.instant())) {
        item.due = retryAt;
        lane.retry(item);
      } else {
        lane.ahead.put(event.id(), item);
      }
      changed.signalAll();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Every row of the catch-up was added: streamed events flow again, behind them. */
  void caughtUpRead() {
    lock.lock();
    try {
      catchingUp = false;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Whether a catch-up is being read (the sweep waits for it). */
  boolean catchingUp() {
    lock.lock();
    try {
      return catchingUp;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until every row of the catch-up has a final verdict.
   *
   * @return {@code false} when the stream was closed first
   */
  boolean awaitCaughtUpFinal() throws InterruptedException {
    lock.lockInterruptibly();
    try {
      while (!closed && openCaughtUp > 0) {
        changed.await();
      }
      return !closed;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Whether the event with this row id is buffered, claimed or waiting for a retry (an event parked
   * is not, but {@link #offerSwept} leaves it to its key's read-back).
   */
  boolean holds(long id) {
    lock.lock();
    try {
      return inMemory.containsKey(id);
    } finally {
      lock.unlock();
    }
  }

  /**
   * The lane's next events: retries that are due first, then buffered events whose key is not held
   * back by a retry and whose {@code available_at} has passed; waits up to {@code maxWait}.
   */
  List<Item> take(int lane, int maxEvents, Duration maxWait) throws InterruptedException {
    long deadline = System.nanoTime() + Math.max(0, maxWait.toNanos());
    lock.lockInterruptibly();
    try {
      while (!closed) {
        Instant now = clock.instant();
        List<Item> batch = takeNow(state[lane], maxEvents, now);
        if (!batch.isEmpty() || toRead(state[lane]) != null) {
          return batch; // empty: parked rows of a released key are to be read back first
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        Instant next = nextDue(state[lane]);
        if (next != null) {
          long untilDue = Math.max(1_000_000, Duration.between(now, next).toNanos());
          left = Math.min(left, untilDue);
        }
        changed.await(left, TimeUnit.NANOSECONDS);
      }
      return List.of();
    } finally {
      lock.unlock();
    }
  }

  private List<Item> takeNow(Lane lane, int maxEvents, Instant now) {
    List<Item> batch = new ArrayList<>();
    Set<AggregateKey> held = new HashSet<>();
    lane.retrying.sort(Comparator.comparingLong(i -> i.event.id()));
    for (Iterator<Item> it = lane.retrying.iterator(); it.hasNext(); ) {
      Item item = it.next();
      if (batch.size() < maxEvents && !item.due.isAfter(now)) {
        it.remove();
        lane.retried(item);
        item.due = null;
        batch.add(item);
      } else {
        held.add(item.event.key());
      }
    }
    int fromTable = takeFrom(lane, lane.ahead.values().iterator(), batch, maxEvents, held, now);
    int fromStream =
        catchingUp ? 0 : takeFrom(lane, lane.queue.iterator(), batch, maxEvents, held, now);
    if (fromStream > 0) {
      lane.streamed -= fromStream;
    }
    if (fromTable + fromStream > 0) {
      changed.signalAll(); // room in the lane for the engine, or for the catch-up
    }
    return batch;
  }

  /** Moves the items that may go from {@code it} to {@code batch}; returns how many moved. */
  private static int takeFrom(
      Lane lane,
      Iterator<Item> it,
      List<Item> batch,
      int maxEvents,
      Set<AggregateKey> held,
      Instant now) {
    int moved = 0;
    while (it.hasNext() && batch.size() < maxEvents) {
      Item item = it.next();
      if (held.contains(item.event.key()) || lane.parkedBefore(item)) {
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

  private static Instant nextDue(Lane lane) {
    Instant next = null;
    for (Item item : lane.retrying) {
      next = next == null || item.due.isBefore(next) ? item.due : next;
    }
    for (Item item : lane.ahead.values()) {
      next = earlier(next, item.notBefore);
    }
    for (Item item : lane.queue) {
      next = earlier(next, item.notBefore);
    }
    return next;
  }

  private static Instant earlier(Instant a, Instant b) {
    return b != null && (a == null || b.isBefore(a)) ? b : a;
  }

  /**
   * Parks the streamed events of held-back keys buffered in a full lane: they leave memory, their
   * key keeps the range of their ids and the earliest position ({@link ParkedKey}).
   *
   * @return how many left the lane
   */
  private int parkHeld(Lane lane) {
    int moved = 0;
    for (Iterator<Item> it = lane.queue.iterator(); it.hasNext(); ) {
      Item item = it.next();
      AggregateKey key = item.event.key();
      if (lane.held.containsKey(key) || lane.parked.containsKey(key)) {
        it.remove();
        lane.streamed--;
        inMemory.remove(item.event.id());
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
  private int parkHeldAhead(Lane lane) {
    int moved = 0;
    for (Iterator<Item> it = lane.ahead.values().iterator(); it.hasNext(); ) {
      Item item = it.next();
      if (lane.held.containsKey(item.event.key()) || lane.parkedBefore(item)) {
        it.remove();
        inMemory.remove(item.event.id());
        park(lane, item);
        moved++;
      }
    }
    return moved;
  }

  /** Adds an item that left memory to its key's parked range (started if there is none). */
  private void park(Lane lane, Item item) {
    ParkedKey parked = lane.parked.get(item.event.key());
    parkedEvents++;
    if (item.caughtUp) {
      openCaughtUp--; // the range counts for it from now on
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
          watermark.release(former);
        }
      } else if (item.position != null) {
        watermark.release(item.position);
      }
    }
    if (item.caughtUp && parked.addCaughtUp(item.event.id())) {
      openCaughtUp++;
    }
  }

  private void startParking(Lane lane, ParkedKey parked) {
    if (lane.parked.isEmpty()) {
      log.info(
          "pipeline {} lane {}: full ({} events) while keys are held back by a retry; their newer"
              + " events leave memory and are read back from the table once they are released",
          pipeline,
          indexOf(lane),
          laneBuffer);
    }
    lane.parked.put(parked.key(), parked);
  }

  private int indexOf(Lane lane) {
    for (int i = 0; i < lanes; i++) {
      if (state[i] == lane) {
        return i;
      }
    }
    return -1;
  }

  /** Whether {@code e} belongs to a parked range: its key's read-back brings it. */
  private static boolean parked(Lane lane, OutboxEvent e) {
    ParkedKey p = lane.parked.get(e.key());
    return p != null && e.id() >= p.firstId() && e.id() <= p.lastId();
  }

  /** The next batch of parked rows to read back for {@code lane}, or {@code null}. */
  ParkedRows.Request parkedToRead(int lane) {
    lock.lock();
    try {
      return closed ? null : toRead(state[lane]);
    } finally {
      lock.unlock();
    }
  }

  /**
   * A released key's parked range (no event of it waits for a retry), while the lane has room for
   * the rows read from the table.
   */
  private ParkedRows.Request toRead(Lane lane) {
    int room = laneBuffer - lane.ahead.size();
    if (room <= 0 || lane.parked.isEmpty()) {
      return null;
    }
    for (ParkedKey p : lane.parked.values()) {
      if (!lane.held.containsKey(p.key())) {
        return new ParkedRows.Request(p, p.firstId(), p.lastId(), Math.min(room, READ_BACK));
      }
    }
    return null;
  }

  /**
   * Adds a batch of parked rows read back for {@code request} ahead of the streamed events, in id
   * order (their key's newer events stay parked until the whole range is read); rows in memory
   * already are skipped. Each holds the range's pin. Once the range is read, the key is no longer
   * parked.
   */
  void readBack(int lane, ParkedRows.Request request, List<ParkedRows.Row> rows) {
    lock.lock();
    try {
      Lane l = state[lane];
      ParkedKey p = request.parked();
      if (closed || l.parked.get(p.key()) != p) {
        return;
      }
      for (ParkedRows.Row row : rows) {
        long id = row.event().id();
        if (!inMemory.containsKey(id)) {
          // A row that may have been caught up counts as one until it is final.
          boolean caughtUp = p.caughtUp(id);
          Item item = new Item(row.event(), p.pin(), row.availableAt(), caughtUp, true);
          if (p.pin() != null) {
            watermark.hold(p.pin());
          }
          if (caughtUp) {
            openCaughtUp++;
          }
          inMemory.put(id, item);
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
        openCaughtUp--; // its caught-up rows are in memory now, each counted
      }
      if (ended) {
        l.parked.remove(p.key());
        if (p.pin() != null) {
          watermark.release(p.pin());
        }
        log.info(
            "pipeline {} lane {}: a released key's {} parked event(s) were read back from the"
                + " table ({} key(s) still parked in this lane)",
            pipeline,
            lane,
            p.count(),
            l.parked.size());
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * What the outbox holds for a taken event whose row is still unpublished.
   *
   * @param attempts the row's {@code attempts}
   * @param retryAt the row's {@code next_attempt_at} while it is still ahead on the database clock,
   *     else {@code null}
   */
  record Row(int attempts, Instant retryAt) {}

  /**
   * Brings a batch just taken from {@code lane} in line with its rows, read after the take: an
   * event whose row is not in {@code pending} was published, dead-lettered or deleted meanwhile (by
   * this pipeline before a restart streamed it again, or through the sweep's copy of it) and is
   * final without being sent again; an event whose row waits for a retry waits in memory until
   * {@code next_attempt_at}, holding its key back; the others carry the row's attempts. Later
   * events of a key held back go back to the front of the lane.
   *
   * @return the events to hand out, in the batch's order
   */
  List<Item> checked(int lane, List<Item> items, Map<Long, Row> pending) {
    lock.lock();
    try {
      Lane l = state[lane];
      Set<AggregateKey> held = new HashSet<>();
      List<Item> out = new ArrayList<>(items.size());
      List<Item> back = new ArrayList<>();
      boolean finished = false;
      Instant now = clock.instant();
      for (Item item : items) {
        Row row = pending.get(item.event.id());
        if (row == null) {
          finish(item);
          finished = true;
        } else if (held.contains(item.event.key())) {
          back.add(item);
        } else {
          if (row.attempts() != item.event.attempts()) {
            item.event = withAttempts(item.event, row.attempts());
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
      putBack(l, back);
      if (out.size() < items.size()) {
        changed.signalAll();
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Applies the verdicts of a claim of {@code lane} whose durable part was written: final events
   * free their position, retries wait (holding their key back), the rest go back to the front.
   */
  void settled(int lane, List<Item> items, List<Settlement> settlements) {
    lock.lock();
    try {
      Map<Long, Settlement> byId = new HashMap<>();
      for (Settlement s : settlements) {
        byId.put(s.event().id(), s);
      }
      Lane l = state[lane];
      List<Item> back = new ArrayList<>();
      Instant now = clock.instant();
      for (Item item : items) {
        Settlement s = byId.get(item.event.id());
        if (s instanceof Settlement.Published || s instanceof Settlement.DeadLetter) {
          finish(item);
        } else if (s instanceof Settlement.Retry r) {
          item.event = withAttempts(item.event, r.attempts());
          item.due = now.plus(r.delay());
          l.retry(item);
        } else {
          back.add(item);
        }
      }
      putBack(l, back);
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Gives a claim's events back, unchanged: they are claimed again. */
  void released(int lane, List<Item> items) {
    lock.lock();
    try {
      putBack(state[lane], items);
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private void putBack(Lane lane, List<Item> items) {
    List<Item> sorted = new ArrayList<>(items);
    sorted.sort(Comparator.comparingLong((Item i) -> i.event.id()).reversed());
    for (Item item : sorted) {
      if (item.fromTable) {
        lane.ahead.put(item.event.id(), item);
      } else {
        lane.queue.addFirst(item);
        lane.streamed++;
      }
    }
  }

  private void finish(Item item) {
    inMemory.remove(item.event.id());
    if (item.position != null) {
      watermark.release(item.position);
    }
    if (item.caughtUp) {
      openCaughtUp--;
    }
  }

  /**
   * The latest record up to which every event is final, once; {@code null} when there is nothing
   * new to commit.
   */
  @SuppressWarnings("unchecked")
  R takeCommittable() {
    lock.lock();
    try {
      return (R) watermark.takeCommittable();
    } finally {
      lock.unlock();
    }
  }

  /** How many events are in memory (buffered, claimed or retrying). */
  int size() {
    lock.lock();
    try {
      return inMemory.size();
    } finally {
      lock.unlock();
    }
  }

  /** How many events left memory for a parked range since the start (diagnostics and tests). */
  long parkedEvents() {
    lock.lock();
    try {
      return parkedEvents;
    } finally {
      lock.unlock();
    }
  }

  /** How many caught-up rows have no final verdict yet, a parked range counting as one (tests). */
  int openCaughtUp() {
    lock.lock();
    try {
      return openCaughtUp;
    } finally {
      lock.unlock();
    }
  }

  /** How many keys have events parked now (diagnostics and tests). */
  int parkedKeys() {
    lock.lock();
    try {
      int n = 0;
      for (Lane l : state) {
        n += l.parked.size();
      }
      return n;
    } finally {
      lock.unlock();
    }
  }

  /** How many stream positions the watermark keeps (bounded; tests). */
  int positions() {
    lock.lock();
    try {
      return watermark.size();
    } finally {
      lock.unlock();
    }
  }

  /** Wakes every waiter; offers and takes return at once from now on. */
  void close() {
    lock.lock();
    try {
      closed = true;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private static OutboxEvent withAttempts(OutboxEvent e, int attempts) {
    return new OutboxEvent(
        e.id(),
        e.eventId(),
        e.aggregateType(),
        e.aggregateId(),
        e.eventType(),
        e.destination(),
        e.payload(),
        e.payloadFormat(),
        e.headers(),
        e.createdAt(),
        attempts);
  }
}
