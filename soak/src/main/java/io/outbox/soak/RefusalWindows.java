package io.outbox.soak;

import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the broker refuse the {@link SoakBroker#FLAKY} events retryably for 3-8 s every 20-40 s:
 * the refused events are charged attempts and retried with backoff, and must all be delivered in
 * the end, none dead-lettered (the windows are far shorter than the default retry budget).
 */
final class RefusalWindows implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RefusalWindows.class);
  private static final int END_TRIES = 30;

  private final SoakBroker broker;
  private final Random random;
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final AtomicInteger windows = new AtomicInteger();
  private final Thread thread;

  RefusalWindows(SoakBroker broker, Random random) {
    this.broker = broker;
    this.random = random;
    this.thread = new Thread(this::toggle, "soak-refusal-windows");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** How many refusal windows were opened. */
  int windows() {
    return windows.get();
  }

  private void toggle() {
    while (running.get()) {
      if (!pauseWhileRunning(Duration.ofSeconds(20 + random.nextInt(21)))) {
        return;
      }
      try {
        broker.refuse(true);
      } catch (RuntimeException e) {
        log.info("soak: no refusal window now: {}", e.getMessage());
        continue;
      }
      windows.incrementAndGet();
      pauseWhileRunning(Duration.ofSeconds(3 + random.nextInt(6)));
      end();
    }
  }

  /** Asks the broker to accept the events again until it did (it may be restarting). */
  private void end() {
    for (int i = 0; i < END_TRIES; i++) {
      try {
        broker.refuse(false);
        return;
      } catch (RuntimeException e) {
        log.info(
            "soak: the refusal of {} events not ended yet: {}", SoakBroker.FLAKY, e.getMessage());
        Waits.pause(Duration.ofSeconds(1));
      }
    }
    throw new IllegalStateException(
        "the broker still refuses the "
            + SoakBroker.FLAKY
            + " events after "
            + END_TRIES
            + " tries");
  }

  /** Pauses in steps of a second; false when stopped meanwhile. */
  private boolean pauseWhileRunning(Duration d) {
    for (long s = 0; s < d.toSeconds(); s++) {
      if (!running.get()) {
        return false;
      }
      Waits.pause(Duration.ofSeconds(1));
    }
    return running.get();
  }

  /**
   * Stops the windows and makes sure the broker accepts the events again (asked again while the
   * broker does not answer, e.g. during a restart).
   */
  void stop() {
    running.set(false);
    try {
      thread.join(20_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    end();
  }

  @Override
  public void close() {
    if (running.get()) {
      stop();
    }
  }
}
