package io.outbox.relay.spi.support;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.Verdict;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;

/**
 * What a sink with asynchronous acks needs around its broker code: each batch becomes a {@link
 * PendingBatch} whose events are handed to the sink's sender turn by turn (the batch decides which
 * may go: per-key order) on a sender thread of its own (so that a broker that blocks never holds up
 * the lane), a timer gives every event still without a verdict at {@code timeout} a
 * sink-unavailable one, the verdicts are completed off the client's thread, probes and start-up
 * checks run with a bound, and {@link #drain} waits for what is in flight on close.
 */
public final class BatchPublisher {

  /**
   * Sends events of one batch: those of one {@linkplain PendingBatch#nextTurn turn}, in batch
   * order; gives verdicts itself or leaves them to the broker's acks.
   */
  @FunctionalInterface
  public interface Sender {
    void send(PendingBatch batch, List<Integer> turn) throws InterruptedException;
  }

  private final String broker;
  private final String pipeline;
  private final Logger log;
  private final Duration timeout;
  private final Ticker ticker;
  private final String timeoutReason;
  private final Function<RoutedEvent, String> where;
  private final SinkHealthLog health;
  private final ScheduledThreadPoolExecutor timers;
  private final ExecutorService senders;
  private final Set<PendingBatch> inFlight = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /**
   * @param broker the broker's name in messages and thread names, e.g. {@code NATS}
   * @param pipeline the pipeline name
   * @param log the sink's own logger
   * @param timeout the bound on one batch, from the sink's settings
   * @param timeoutKey the setting that holds {@code timeout}, for the expiry message
   * @param where names an event's destination in messages, e.g. {@code subject 'orders.created'}
   * @param ticker what batches' deadlines are measured on ({@link
   *     io.outbox.relay.spi.PluginContext#ticker})
   */
  public BatchPublisher(
      String broker,
      String pipeline,
      Logger log,
      Duration timeout,
      String timeoutKey,
      Function<RoutedEvent, String> where,
      Ticker ticker) {
    this.broker = broker;
    this.pipeline = pipeline;
    this.log = log;
    this.timeout = timeout;
    this.ticker = ticker;
    this.timeoutReason =
        "no answer from " + broker + " within " + timeoutKey + " (" + timeout.toMillis() + " ms)";
    this.where = where;
    this.health = new SinkHealthLog(log, broker, pipeline);
    String name = broker.toLowerCase(java.util.Locale.ROOT) + "-" + pipeline;
    this.timers =
        new ScheduledThreadPoolExecutor(
            1, PipelineThreads.daemons(pipeline, "outbox-relay-" + name + "-timer"));
    timers.setRemoveOnCancelPolicy(true);
    timers.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    this.senders =
        Executors.newCachedThreadPool(
            PipelineThreads.daemons(pipeline, "outbox-relay-" + name + "-send"));
  }

  /**
   * Publishes {@code batch} with {@code sender} on a sender thread.
   *
   * @return the verdicts, one per event in batch order, within {@code timeout}
   */
  public CompletionStage<List<Verdict>> publish(List<RoutedEvent> batch, Sender sender) {
    if (batch.isEmpty()) {
      return CompletableFuture.completedFuture(List.of());
    }
    PendingBatch pending = new PendingBatch(batch, ticker.deadline(timeout), where, this::finish);
    if (closed) {
      pending.expire("the " + broker + " sink is closed");
      return pending.result();
    }
    inFlight.add(pending);
    try {
      pending.timer(
          timers.schedule(
              () -> pending.expire(timeoutReason), timeout.toNanos(), TimeUnit.NANOSECONDS));
      senders.execute(() -> run(pending, sender));
    } catch (RejectedExecutionException e) {
      pending.expire("the " + broker + " sink is closed");
    }
    return pending.result();
  }

  /**
   * Hands the batch's events to {@code sender} turn by turn ({@link PendingBatch#nextTurn}) until
   * every event has its verdict or the deadline passed.
   */
  private void run(PendingBatch batch, Sender sender) {
    try {
      for (List<Integer> turn = batch.nextTurn(); !turn.isEmpty(); turn = batch.nextTurn()) {
        sender.send(batch, turn);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      batch.expire("interrupted while publishing to " + broker);
    } catch (RuntimeException e) {
      // A defect, not an outage: count an attempt so that it ends as a dead letter, not a loop.
      log.warn("{} sink of pipeline {} failed unexpectedly while sending", broker, pipeline, e);
      for (int i = 0; i < batch.events().size(); i++) {
        batch.complete(
            i, Verdict.retryable("unexpected failure of the " + broker + " sink: " + describe(e)));
      }
    }
  }

  /** Runs once per batch, on the thread of its last verdict (often the client's). */
  private void finish(PendingBatch batch) {
    inFlight.remove(batch);
    health.batch(batch.events(), batch.completeOn(timers));
  }

  /**
   * {@link io.outbox.relay.spi.Sink#probe}: {@code check} on a sender thread, {@code false} when it
   * fails or takes longer than {@code timeout}.
   */
  public boolean probe(Callable<Boolean> check, Duration timeout) {
    if (closed) {
      return false;
    }
    Boolean ok = ask(check, timeout, "probe");
    if (Boolean.TRUE.equals(ok)) {
      health.probeAnswered();
      return true;
    }
    return false;
  }

  /**
   * {@code question} on a sender thread, bounded by {@code timeout}.
   *
   * @return its answer, or {@code null} when it failed or took too long (logged at debug level)
   */
  public <T> T ask(Callable<T> question, Duration timeout, String what) {
    Future<T> answer;
    try {
      answer = senders.submit(question);
    } catch (RejectedExecutionException e) {
      return null; // closed
    }
    try {
      return answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      answer.cancel(true);
    } catch (ExecutionException | TimeoutException e) {
      answer.cancel(true);
      log.debug("{} {} for pipeline {} failed: {}", broker, what, pipeline, describe(e));
    }
    return null;
  }

  /** Whether {@link #drain} was called. */
  public boolean isClosed() {
    return closed;
  }

  /**
   * Refuses new batches, waits up to {@code timeout} for the verdicts of those in flight, then
   * gives the missing ones sink-unavailable verdicts. Call {@link #shutdown} after closing the
   * client.
   *
   * @return what is left of {@code timeout}
   */
  public Duration drain(Duration timeout) {
    log.info(
        "Closing the {} sink of pipeline {} (timeout {} ms)", broker, pipeline, timeout.toMillis());
    closed = true;
    Deadline deadline = ticker.deadline(timeout);
    CompletableFuture<?> all =
        CompletableFuture.allOf(
            inFlight.stream().map(PendingBatch::result).toArray(CompletableFuture[]::new));
    try {
      all.get(deadline.nanosLeft(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // whatever is left is expired below
    }
    for (PendingBatch batch : inFlight) {
      batch.expire("the " + broker + " sink was closed before " + broker + " answered");
    }
    return deadline.left();
  }

  /** Stops the sender and timer threads. */
  public void shutdown() {
    senders.shutdownNow();
    timers.shutdown();
  }

  /**
   * The failure inside the wrappers an asynchronous client puts around it ({@link
   * java.util.concurrent.CompletionException}, {@link ExecutionException}, a bare {@link
   * RuntimeException} with a cause), for classifying it.
   */
  public static Throwable unwrap(Throwable error) {
    Throwable t = error;
    while ((t instanceof java.util.concurrent.CompletionException
            || t instanceof ExecutionException
            || t.getClass() == RuntimeException.class)
        && t.getCause() != null
        && t.getCause() != t) {
      t = t.getCause();
    }
    return t;
  }

  /** Class and message of a failure, and its cause's; never payload data. */
  public static String describe(Throwable e) {
    Throwable t = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
    String message = t.getMessage() == null ? "" : ": " + t.getMessage();
    Throwable cause = t.getCause();
    String because =
        cause != null && cause != t && cause.getMessage() != null
            ? " (caused by " + cause.getClass().getSimpleName() + ": " + cause.getMessage() + ")"
            : "";
    return t.getClass().getSimpleName() + message + because;
  }
}
