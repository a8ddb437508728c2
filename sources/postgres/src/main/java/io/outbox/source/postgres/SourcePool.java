package io.outbox.source.postgres;

import io.outbox.relay.spi.support.PipelineThreads;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A source's pool of database connections, replaced when the instance loses the lease.
 *
 * <p>Closing a HikariCP pool aborts the connections in use: their sockets are closed, so a
 * statement hung on a network that drops packets (nothing refused, nothing answered) fails at once
 * instead of after {@code socket-timeout}. An instance that lost the lease that way would otherwise
 * keep its lanes in those calls, and could neither stand by nor take over again until they ended
 * (21.3 s in a soak, issue #29). Nothing is lost by it: a claim whose connection is aborted rolls
 * back, and with the lease gone its settlement would be refused anyway.
 *
 * @param <P> the pool
 */
public final class SourcePool<P extends AutoCloseable> {

  private static final Logger log = LoggerFactory.getLogger(SourcePool.class);

  private final String pipeline;
  private final Duration grace;
  private final Supplier<P> open;
  private P pool; // guarded by this
  private boolean closed; // guarded by this

  /**
   * @param pipeline for logs and thread names
   * @param grace how long a pool replaced after a lost lease stays open for the claims still alive
   *     on it: the time an instance taking over gives this one's claims before it ends their
   *     sessions ({@link LeaseKeeper.Timing#fenceWait})
   * @param open opens a pool; must not connect while opening
   */
  public SourcePool(String pipeline, Duration grace, Supplier<P> open) {
    this.pipeline = pipeline;
    this.grace = grace;
    this.open = open;
  }

  /** The pool, or {@code null} before the first activation. */
  public synchronized P get() {
    return pool;
  }

  /**
   * The pool, opened if there is none (an activation).
   *
   * @throws IllegalStateException once closed
   */
  public synchronized P open() {
    if (closed) {
      throw new IllegalStateException("pipeline " + pipeline + ": the source is closed");
    }
    if (pool == null) {
      pool = open.get();
    }
    return pool;
  }

  /**
   * The lease is lost: the pool in use is replaced by a new one at once, so that nothing ever finds
   * no pool, and closed after the grace in the background, which aborts the connections still in
   * use then. A claim that is alive meanwhile can still settle.
   */
  public void leaseLost() {
    P old;
    synchronized (this) {
      if (closed || pool == null) {
        return;
      }
      old = pool;
      pool = open.get();
    }
    log.info(
        "pipeline {}: the lease is lost; the source's database connections still in use in {} ms"
            + " are closed (statements still running on them end then)",
        pipeline,
        grace.toMillis());
    Thread closer =
        PipelineThreads.daemon(
            pipeline,
            "outbox-relay-" + pipeline + "-old-pool",
            () -> {
              try {
                Thread.sleep(grace.toMillis());
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              closeQuietly(old);
            });
    closer.start();
  }

  /** Closes the pool for good, aborting the connections still in use. */
  public void close() {
    P old;
    synchronized (this) {
      closed = true;
      old = pool;
      pool = null;
    }
    if (old != null) {
      closeQuietly(old);
    }
  }

  private void closeQuietly(P p) {
    try {
      p.close();
    } catch (Exception e) {
      log.warn("pipeline {}: closing a database pool failed: {}", pipeline, e.toString());
    }
  }
}
