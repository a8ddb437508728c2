package io.outbox.connect;

import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes the task's lease on a thread of its own, so that {@code poll()} never blocks longer than it
 * asks while the task stands by (a predecessor still holds the lease) or the database is down.
 */
final class Activation {

  private static final Logger log = LoggerFactory.getLogger(Activation.class);
  private static final long RETRY_MS = 1000;

  private final Source source;
  private final String lease;
  private final Object lock = new Object();
  private boolean active; // guarded by lock
  private boolean closed; // guarded by lock
  private Thread thread; // guarded by lock

  Activation(Source source, String lease) {
    this.source = source;
    this.lease = lease;
  }

  /** Whether the source is active; starts activating when not, waiting at most {@code wait}. */
  boolean active(Duration wait) throws InterruptedException {
    synchronized (lock) {
      if (active) {
        return true;
      }
      if (thread == null && !closed) {
        thread = new Thread(this::activate, "outbox-relay-connect-" + lease + "-activation");
        thread.setDaemon(true);
        thread.start();
      }
      lock.wait(Math.max(1, wait.toMillis()));
      return active;
    }
  }

  /** The lease was lost: activate again at the next poll. */
  void lost() {
    synchronized (lock) {
      active = false;
    }
  }

  void close() {
    Thread t;
    synchronized (lock) {
      closed = true;
      t = thread;
      lock.notifyAll();
    }
    if (t != null) {
      t.interrupt();
    }
  }

  private void activate() {
    try {
      while (true) {
        synchronized (lock) {
          if (closed) {
            return;
          }
        }
        try {
          source.activate(); // blocks while another instance holds this task's lease
          synchronized (lock) {
            active = true;
            lock.notifyAll();
          }
          return;
        } catch (SourceException e) {
          log.warn("{}: activation failed, retrying in {} ms: {}", lease, RETRY_MS, e.getMessage());
          Thread.sleep(RETRY_MS);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      synchronized (lock) {
        thread = null;
      }
    }
  }
}
