package io.outbox.source.cdc.stream;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

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
 * <p>This class is the face the session, the catch-up, the sweep and the claims use; its parts
 * share one lock and one {@link StreamState}, which takes the lock for this face: events and the
 * engine's other records come in through {@link Intake}, held-back keys are parked and read back by
 * {@link Parking}, and claims take and settle through {@link LaneClaims}, each lane's buffers being
 * a {@link StreamLane}.
 *
 * @param <R> the engine's record type, handed back to its committer
 */
public final class ChangeStream<R> {

  /**
   * One event in memory, from the stream or read from the table ({@code fromTable}: caught up,
   * swept or read back after it was parked). {@code position} is what it holds of the watermark:
   * its stream position, the pin of its parked range, or none (caught up or swept, until the stream
   * delivers it too).
   */
  public static final class Item {
    OutboxEvent event;
    Watermark.Position position;
    final Instant notBefore;
    final boolean caughtUp;
    final boolean fromTable;
    Instant due; // while waiting for a retry
    long txId; // a streamed event's transaction id (UnseenRows); 0 when read from the table
    // A streamed event inside a parked range, moved ahead with the range's rows read back: taken
    // with them in id order (Parking#readBack), and put back there.
    boolean inIdOrder;

    Item(
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

    public OutboxEvent event() {
      return event;
    }

    /** A streamed event's transaction id as the stream names it; 0 when read from the table. */
    public long txId() {
      return txId;
    }
  }

  /**
   * What the outbox holds for a taken event whose row is still unpublished.
   *
   * @param event the row as an event (its attempts included): what is published; {@code null} for a
   *     row not visible yet, looked for again at {@code retryAt} ({@link
   *     io.outbox.source.cdc.claim.UnseenRows})
   * @param retryAt the row's {@code next_attempt_at} while it is still ahead on the database clock,
   *     else {@code null}
   */
  public record Row(OutboxEvent event, Instant retryAt) {
    public Row {
      if (event == null && retryAt == null) {
        throw new IllegalArgumentException("a row not read is looked for again: retryAt needed");
      }
    }
  }

  private final StreamState s;
  private final Parking parking;
  private final Intake intake;
  private final LaneClaims claims;

  ChangeStream(int lanes, int laneBuffer, Clock clock, Ticker ticker) {
    this(lanes, laneBuffer, clock, ticker, "-");
  }

  /**
   * @param clock the database's clock as seen here: what due times are compared with
   * @param ticker what a lane's wait for events is measured on
   * @param pipeline named in the log lines
   */
  public ChangeStream(int lanes, int laneBuffer, Clock clock, Ticker ticker, String pipeline) {
    this.s = new StreamState(lanes, laneBuffer, clock, ticker, pipeline);
    this.parking = new Parking(s);
    this.intake = new Intake(s, parking);
    this.claims = new LaneClaims(s, parking);
  }

  /**
   * One record of a batch the engine handed over ({@link #offerAll}): a streamed INSERT to take
   * ({@code event} set, not before {@code notBefore}), or a record that only moves the position
   * ({@code event} null), among them a heartbeat emitted at {@code heartbeat}.
   */
  public record Streamed<R>(
      R record, OutboxEvent event, Instant notBefore, long txId, Instant heartbeat) {

    static <R> Streamed<R> insert(R record, OutboxEvent event, Instant notBefore) {
      return insert(record, event, notBefore, 0);
    }

    /**
     * @param txId the id of the event's transaction as the stream names it, 0 when unknown
     */
    public static <R> Streamed<R> insert(
        R record, OutboxEvent event, Instant notBefore, long txId) {
      return new Streamed<>(record, event, notBefore, txId, null);
    }

    /**
     * @param heartbeat when the relay's heartbeat it is was emitted, or {@code null}
     */
    public static <R> Streamed<R> position(R record, Instant heartbeat) {
      return new Streamed<>(record, null, null, 0, heartbeat);
    }
  }

  /**
   * Takes one streamed INSERT; waits while its lane is full.
   *
   * @return {@code false} when the stream was closed meanwhile
   */
  boolean offer(R record, OutboxEvent event, Instant notBefore) throws InterruptedException {
    return offerAll(List.of(Streamed.insert(record, event, notBefore)));
  }

  /**
   * Takes a batch of streamed records in order, as {@link #offer}, {@link #reached} and {@link
   * #pass} would one by one, but under one hold of the lock, and wakes the lanes once, when the
   * batch is in (or before waiting for room in a full lane): a lane woken by the batch's first
   * event would otherwise claim it alone, and the rest of the batch only after that claim (a second
   * claim, and the rest waiting for the first).
   *
   * @return {@code false} when the stream was closed meanwhile (the rest of the batch is dropped)
   */
  public boolean offerAll(List<Streamed<R>> batch) throws InterruptedException {
    return s.interruptibly(() -> intake.offerAll(batch));
  }

  /** Takes a streamed record that is not an event (it only moves the position). */
  void pass(R record) {
    s.run(() -> intake.pass(record));
  }

  /**
   * Records how far the stream has come, from a heartbeat emitted at {@code emittedAt}. Once that
   * is after the catch-up was read, the stream has delivered the INSERT of every row it read (each
   * was committed before), and its ids are forgotten.
   */
  void reached(Instant emittedAt) {
    s.run(() -> intake.reached(emittedAt));
  }

  /** The database time up to which the stream has delivered everything, or {@code null}. */
  public Instant streamTime() {
    return s.locked(() -> s.streamTime);
  }

  /**
   * Adds events the sweep found (not in memory already) ahead of the streamed ones, in id order
   * with the other rows read from the table; an event of a parked key is left to (or joins) its
   * key's parked range.
   */
  public int offerSwept(List<OutboxEvent> events) {
    return s.locked(() -> intake.offerSwept(events));
  }

  /** From now until {@link #caughtUpRead()}, streamed events wait behind the catch-up. */
  public void beginCatchUp() {
    s.run(() -> s.catchingUp = true);
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
  public boolean offerCaughtUp(OutboxEvent event, Instant notBefore, Instant retryAt)
      throws InterruptedException {
    return s.interruptibly(() -> intake.offerCaughtUp(event, notBefore, retryAt));
  }

  /** Every row of the catch-up was added: streamed events flow again, behind them. */
  void caughtUpRead() {
    caughtUpRead(null);
  }

  /**
   * As {@link #caughtUpRead()}; {@code readAt}, the database time after the last read (or {@code
   * null}: unknown), is when the ids of the rows it handed are forgotten: once a heartbeat emitted
   * after it arrives ({@link #reached}), the stream holds no INSERT of them any more.
   */
  public void caughtUpRead(Instant readAt) {
    s.run(
        () -> {
          s.catchingUp = false;
          s.caughtUpReadAt = readAt;
          s.changed.signalAll();
        });
  }

  /** Whether a catch-up is being read (the sweep waits for it). */
  public boolean catchingUp() {
    return s.locked(() -> s.catchingUp);
  }

  /**
   * Waits until every row of the catch-up has a final verdict.
   *
   * @return {@code false} when the stream was closed first
   */
  public boolean awaitCaughtUpFinal() throws InterruptedException {
    return s.interruptibly(() -> intake.awaitCaughtUpFinal());
  }

  /**
   * Whether the event with this row id is buffered, claimed or waiting for a retry (an event parked
   * is not, but {@link #offerSwept} leaves it to its key's read-back).
   */
  public boolean holds(long id) {
    return s.locked(() -> s.inMemory.containsKey(id));
  }

  /**
   * The lane's next events: retries that are due first, then buffered events whose key is not held
   * back by a retry and whose {@code available_at} has passed; waits up to {@code maxWait}.
   */
  public List<Item> take(int lane, int maxEvents, Duration maxWait) throws InterruptedException {
    return s.interruptibly(() -> claims.take(lane, maxEvents, maxWait));
  }

  /** The next batch of parked rows to read back for {@code lane}, or {@code null}. */
  public ParkedRows.Request parkedToRead(int lane) {
    return s.locked(() -> s.closed ? null : parking.toRead(s.lanes[lane]));
  }

  /**
   * Whether {@code request}'s rows may be read back now: no transaction of its key's streamed
   * parked events was in progress at {@code snapshot} (taken before the read); a commit waiting for
   * a synchronous standby keeps its rows invisible, and a read would skip them.
   */
  public boolean parkedReadable(
      int lane, ParkedRows.Request request, TransactionSnapshot snapshot) {
    return s.locked(() -> !s.closed && parking.readable(s.lanes[lane], request, snapshot));
  }

  /**
   * Adds a batch of parked rows read back for {@code request} ahead of the streamed events, in id
   * order (their key's newer events stay parked until the whole range is read); rows in memory
   * already are skipped. Each holds the range's pin. Once the range is read, the key is no longer
   * parked.
   */
  public void readBack(int lane, ParkedRows.Request request, List<ParkedRows.Row> rows) {
    s.run(() -> parking.readBack(s.lanes[lane], request, rows));
  }

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
  public List<Item> checked(int lane, List<Item> items, Map<Long, Row> pending) {
    return s.locked(() -> claims.checked(lane, items, pending));
  }

  /**
   * Applies the verdicts of a claim of {@code lane} whose durable part was written: final events
   * free their position, retries wait (holding their key back), the rest go back to the front.
   */
  public void settled(int lane, List<Item> items, List<Settlement> settlements) {
    s.run(() -> claims.settled(lane, items, settlements));
  }

  /** Gives a claim's events back, unchanged: they are claimed again. */
  public void released(int lane, List<Item> items) {
    s.run(
        () -> {
          s.lanes[lane].putBack(items);
          s.changed.signalAll();
        });
  }

  /**
   * The latest record up to which every event is final, once; {@code null} when there is nothing
   * new to commit.
   */
  @SuppressWarnings("unchecked")
  public R takeCommittable() {
    return (R) s.locked(s.watermark::takeCommittable);
  }

  /** How many events are in memory (buffered, claimed or retrying). */
  public int size() {
    return s.locked(s.inMemory::size);
  }

  /** How many events left memory for a parked range since the start (diagnostics and tests). */
  long parkedEvents() {
    return s.locked(() -> s.parkedEvents);
  }

  /**
   * How many streamed INSERTs were kept from the lanes because the catch-up had handed their rows
   * and they were final already (diagnostics and tests).
   */
  public long staleSkipped() {
    return s.locked(() -> s.staleSkipped);
  }

  /**
   * How many streamed events a claim found final already: sent before a restart, or through a copy
   * read from the table (diagnostics and tests).
   */
  public long staleInLanes() {
    return s.locked(() -> s.staleInLanes);
  }

  /** How many caught-up rows have no final verdict yet, a parked range counting as one (tests). */
  int openCaughtUp() {
    return s.locked(() -> s.openCaughtUp);
  }

  /** How many keys have events parked now (diagnostics and tests). */
  int parkedKeys() {
    return s.locked(parking::parkedKeys);
  }

  /** How many stream positions the watermark keeps (bounded; tests). */
  int positions() {
    return s.locked(s.watermark::size);
  }

  /** Wakes every waiter; offers and takes return at once from now on. */
  public void close() {
    s.run(
        () -> {
          s.closed = true;
          s.changed.signalAll();
        });
  }
}
