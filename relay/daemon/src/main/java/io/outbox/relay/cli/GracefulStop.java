package io.outbox.relay.cli;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shutdown hook of {@code run}. It is registered before anything starts, so that a SIGTERM or
 * SIGINT at any moment is a clean stop: it waits until start-up is over, stops what was started
 * (within {@code shutdown-timeout}), then ends the JVM with exit code 0 instead of the JVM's
 * 128+signal. Nothing else ends {@code run}, so the hook only ever runs because of a signal.
 */
final class GracefulStop implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(GracefulStop.class);

  private final Duration timeout;
  private final IntConsumer halt;
  private final CountDownLatch startUpOver = new CountDownLatch(1);
  private final CountDownLatch stopped = new CountDownLatch(1);
  private volatile Runnable stop;
  private volatile int exitCode;

  /**
   * @param timeout the {@code shutdown-timeout} the stop keeps to (for the log)
   * @param halt ends the JVM with an exit code ({@code Runtime.getRuntime()::halt})
   */
  GracefulStop(Duration timeout, IntConsumer halt) {
    this.timeout = timeout;
    this.halt = halt;
  }

  /** Start-up succeeded: a signal now runs {@code stop}, then exits 0. */
  void started(Runnable stop) {
    this.stop = stop;
    startUpOver.countDown();
  }

  /**
   * Start-up failed and cleaned up after itself: a signal has nothing to stop, and the JVM keeps
   * its own exit code (the failure is not a clean stop).
   */
  void startFailed() {
    startUpOver.countDown();
  }

  /**
   * A pipeline died of an {@link Error}: stops everything like a signal would, then exits with
   * {@code code} instead of 0, so that a supervisor (systemd, Kubernetes) restarts the process.
   */
  void fatal(int code) {
    exitCode = code;
    Thread exit = new Thread(() -> System.exit(code), "outbox-relay-fatal-exit");
    exit.start();
  }

  /** Blocks until a stop has finished (the JVM ends right after). */
  void awaitStopped() throws InterruptedException {
    stopped.await();
  }

  @Override
  public void run() {
    awaitUninterruptibly(startUpOver);
    Runnable s = stop;
    if (s == null) {
      return;
    }
    log.info("outbox-relay stopping (shutdown-timeout {})", timeout);
    s.run();
    log.info("outbox-relay stopped");
    stopped.countDown();
    System.out.flush();
    System.err.flush();
    // Decided here, never by the main thread: it wakes up from awaitStopped() concurrently.
    halt.accept(exitCode);
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        latch.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
