package io.outbox.source.cdc.stream;

import java.util.Arrays;

/**
 * The ids of the rows one catch-up handed to the lanes, so that the stream's INSERTs of the same
 * rows, delivered after them, need not go through a lane once those rows are final. Kept as runs of
 * consecutive ids (a backlog's ids are mostly consecutive: one run, whatever its size), added in
 * increasing order as the catch-up reads them. Past {@link #MAX_RUNS} runs no more are kept: those
 * rows' INSERTs take the lanes as any other (slower, not wrong). Not thread-safe: the stream's lock
 * guards it.
 */
public final class CaughtUpIds {

  /** At most this many runs (16 bytes each): 4 MiB. */
  static final int MAX_RUNS = 1 << 18;

  private long[] firsts = new long[16];
  private long[] lasts = new long[16];
  private int runs;

  /**
   * Adds {@code id}; one not above the last added is ignored (the catch-up reads in id order).
   *
   * @return false when {@code id} was ignored for that
   */
  public boolean add(long id) {
    if (runs > 0) {
      long last = lasts[runs - 1];
      if (id <= last) {
        return false;
      }
      if (id == last + 1) {
        lasts[runs - 1] = id;
        return true;
      }
    }
    if (runs == MAX_RUNS) {
      return true;
    }
    if (runs == firsts.length) {
      int grown = Math.min(MAX_RUNS, runs * 2);
      firsts = Arrays.copyOf(firsts, grown);
      lasts = Arrays.copyOf(lasts, grown);
    }
    firsts[runs] = id;
    lasts[runs] = id;
    runs++;
    return true;
  }

  /** Whether {@code id} was added (and not {@link #clear}ed since). */
  public boolean contains(long id) {
    if (runs == 0 || id < firsts[0] || id > lasts[runs - 1]) {
      return false;
    }
    int i = Arrays.binarySearch(firsts, 0, runs, id);
    if (i >= 0) {
      return true;
    }
    int run = -i - 2; // the last run starting below id
    return run >= 0 && id <= lasts[run];
  }

  /** Forgets every id and gives the memory back. */
  void clear() {
    firsts = new long[16];
    lasts = new long[16];
    runs = 0;
  }

  /** How many runs are kept (tests). */
  int runs() {
    return runs;
  }

  boolean isEmpty() {
    return runs == 0;
  }
}
