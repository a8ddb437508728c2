package io.outbox.source.polling;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Wakes lanes waiting for rows. A generation counter means no wake-up is lost: a lane reads the
 * generation before it queries, and only waits if nothing was signalled since.
 */
final class WakeUps {

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private long generation;
  private int waiting;

  long generation() {
    lock.lock();
    try {
      return generation;
    } finally {
      lock.unlock();
    }
  }

  /** Wakes every waiting lane. */
  void wakeAll() {
    lock.lock();
    try {
      generation++;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until the generation differs from {@code seen} or the timeout passed.
   *
   * @return {@code true} when woken, {@code false} on timeout
   */
  boolean awaitChange(long seen, long timeoutNanos) throws InterruptedException {
    lock.lock();
    try {
      long left = timeoutNanos;
      waiting++;
      try {
        while (generation == seen) {
          if (left <= 0) {
            return false;
          }
          left = changed.awaitNanos(left);
        }
        return true;
      } finally {
        waiting--;
      }
    } finally {
      lock.unlock();
    }
  }

  /** How many threads wait right now (diagnostics and tests). */
  int waiting() {
    lock.lock();
    try {
      return waiting;
    } finally {
      lock.unlock();
    }
  }

  /** A bounded sleep that {@link #wakeAll} cuts short (used by the standby loop). */
  void sleep(long timeout, TimeUnit unit) throws InterruptedException {
    awaitChange(generation(), unit.toNanos(timeout));
  }
}
