package io.outbox.relay.spi.support;

import io.outbox.relay.spi.Deadline;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * At most {@code size} broker connections (or channels), each lent to one batch at a time: opened
 * when none is idle, kept while usable, closed once broken or unusable (a connection that failed
 * mid-batch may still hold replies of the old batch, so it is never lent again).
 *
 * @param <C> the connection
 */
public final class LendingPool<C> implements AutoCloseable {

  /** Opens a new connection; may connect lazily, on its first use. */
  @FunctionalInterface
  public interface Opener<C, E extends Exception> {
    C open() throws E;
  }

  private final String name;
  private final Semaphore permits;
  private final Predicate<C> usable;
  private final Consumer<C> closer;
  private final Deque<C> idle = new ArrayDeque<>();
  private boolean closed;

  /**
   * @param name what is pooled, for the message once closed, e.g. {@code the Redis sink}
   * @param size the most connections lent at once
   * @param usable whether a connection may be lent (again)
   * @param closer closes a connection, without throwing
   */
  public LendingPool(String name, int size, Predicate<C> usable, Consumer<C> closer) {
    if (size < 1) {
      throw new IllegalArgumentException("size must be at least 1, got " + size);
    }
    this.name = Objects.requireNonNull(name, "name");
    this.permits = new Semaphore(size);
    this.usable = Objects.requireNonNull(usable, "usable");
    this.closer = Objects.requireNonNull(closer, "closer");
  }

  /**
   * A usable connection for one batch, the most recently given back or else a new one from {@code
   * opener}, waiting at most until {@code deadline} for a free one; {@code null} when none came
   * free in time. Give it back with {@link #giveBack}.
   *
   * @throws IllegalStateException once the pool is closed
   * @throws E when {@code opener} fails (the connection's place is free again)
   */
  public <E extends Exception> C borrow(Deadline deadline, Opener<C, E> opener)
      throws E, InterruptedException {
    if (!permits.tryAcquire(deadline.nanosLeft(), TimeUnit.NANOSECONDS)) {
      return null;
    }
    try {
      C c;
      while ((c = takeIdle()) != null) {
        if (usable.test(c)) {
          return c;
        }
        closer.accept(c);
      }
      return opener.open();
    } catch (Exception | Error e) { // E, or a RuntimeException from the opener or a check
      permits.release();
      throw e;
    }
  }

  private synchronized C takeIdle() {
    if (closed) {
      throw new IllegalStateException(name + " is closed");
    }
    return idle.pollFirst();
  }

  /** Takes back a connection from {@link #borrow}; a broken or unusable one is closed. */
  public void giveBack(C connection, boolean broken) {
    boolean keep;
    synchronized (this) {
      keep = !broken && !closed && usable.test(connection);
      if (keep) {
        idle.addFirst(connection);
      }
    }
    if (!keep) {
      closer.accept(connection);
    }
    permits.release();
  }

  /** Closes the idle connections; those still lent are closed when they come back. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      idle.forEach(closer);
      idle.clear();
    }
  }
}
