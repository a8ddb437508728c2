package io.outbox.source.cdc.stream;

/**
 * The stream positions of a {@link ChangeStream} in stream order, each with how many events in
 * memory (or parked, through a {@link ParkedKey}'s pin) still need a final verdict; the latest
 * position before the first open one is committable. A position that becomes final is merged with a
 * final neighbour, so the list holds at most about two entries per open position, however long one
 * of them stays open (a retrying or parked key) and however many events flow behind it. Not
 * thread-safe: guarded by the stream's lock.
 */
final class Watermark {

  /** A stream position and how many of its events are not final yet. */
  static final class Position {
    private Object record;
    private int open;
    private final long seq;
    private Position prev;
    private Position next;
    private boolean linked = true;

    private Position(Object record, int open, long seq) {
      this.record = record;
      this.open = open;
      this.seq = seq;
    }

    /** Whether this position comes before {@code other} in the stream. */
    boolean before(Position other) {
      return seq < other.seq;
    }
  }

  private Position head;
  private Position tail;
  private long seq;
  private int size;
  private Object committable; // the latest position all of whose events are final

  /**
   * Appends a position with {@code open} events; a final one right after a final tail replaces its
   * record (only the latest matters).
   */
  Position add(Object record, int open) {
    if (open == 0 && tail != null && tail.open == 0) {
      tail.record = record;
      advance();
      return tail;
    }
    Position p = new Position(record, open, seq++);
    if (tail == null) {
      head = p;
    } else {
      tail.next = p;
      p.prev = tail;
    }
    tail = p;
    size++;
    advance();
    return p;
  }

  /** One more event (or parked range) waits on {@code p}. */
  void hold(Position p) {
    if (!p.linked) {
      throw new IllegalStateException("a position already committed cannot be held again");
    }
    p.open++;
  }

  /** One event of {@code p} is final. */
  void release(Position p) {
    if (--p.open > 0) {
      return;
    }
    if (p.prev != null && p.prev.open == 0) {
      unlink(p.prev); // p is later and final too: it covers it
    }
    if (p.next != null && p.next.open == 0) {
      unlink(p); // the next final position covers p
    }
    advance();
  }

  private void advance() {
    while (head != null && head.open == 0) {
      committable = head.record;
      unlink(head);
    }
  }

  private void unlink(Position p) {
    if (p.prev == null) {
      head = p.next;
    } else {
      p.prev.next = p.next;
    }
    if (p.next == null) {
      tail = p.prev;
    } else {
      p.next.prev = p.prev;
    }
    p.prev = null;
    p.next = null;
    p.linked = false;
    size--;
  }

  /** The latest record up to which every event is final, once; {@code null} when none is new. */
  Object takeCommittable() {
    Object r = committable;
    committable = null;
    return r;
  }

  /** How many positions are kept (bounded by about twice the open ones). */
  int size() {
    return size;
  }
}
