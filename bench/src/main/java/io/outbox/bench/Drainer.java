package io.outbox.bench;

/** What a drain watches while the pending count falls: the process(es) doing the work. */
interface Drainer {

  /** CPU time and peak RSS so far, or null when there is no such process (gone, not Linux). */
  ProcSample sample();

  /** Fails, saying why, when the drainer died or gave up. */
  void checkAlive();
}
