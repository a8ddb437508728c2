package io.outbox.sink.nats;

import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.Message;
import io.nats.client.PublishOptions;
import io.nats.client.api.PublishAck;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkHealthLog;
import io.outbox.relay.spi.Verdict;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes batches to NATS JetStream: a sender thread checks that a stream binds each subject,
 * then publishes the batch's messages asynchronously in order, each with its event id as {@code
 * Nats-Msg-Id}, within a window of {@code max-pending} unacknowledged messages; each publish ack
 * yields its event's verdict ({@link PublishFailures}). A batch completes when every event has its
 * verdict or {@code publish-timeout} expired.
 */
final class NatsSink implements Sink {

  private static final Logger log = LoggerFactory.getLogger(NatsSink.class);

  private final String pipeline;
  private final NatsSinkSettings settings;
  private final JetStreamLink link;
  private final Semaphore window;
  private final ScheduledThreadPoolExecutor timers;
  private final ExecutorService senders;
  private final Set<PendingBatch> inFlight = ConcurrentHashMap.newKeySet();
  private final SinkHealthLog health;
  private volatile boolean closed;

  NatsSink(String pipeline, NatsSinkSettings settings, JetStreamLink link) {
    this.pipeline = pipeline;
    this.settings = settings;
    this.link = link;
    this.window = new Semaphore(settings.maxPending());
    this.health = new SinkHealthLog(log, "NATS", pipeline);
    this.timers = new ScheduledThreadPoolExecutor(1, threads("nats-" + pipeline + "-timer"));
    timers.setRemoveOnCancelPolicy(true);
    timers.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    this.senders = Executors.newCachedThreadPool(threads("nats-" + pipeline + "-send"));
  }

  private static ThreadFactory threads(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, "outbox-relay-" + name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  @Override
  public CompletionStage<List<Verdict>> publish(List<RoutedEvent> batch) {
    if (batch.isEmpty()) {
      return CompletableFuture.completedFuture(List.of());
    }
    long deadline = System.nanoTime() + settings.publishTimeout().toNanos();
    PendingBatch pending = new PendingBatch(batch, deadline, this::finish);
    if (closed) {
      pending.expire("the NATS sink is closed");
      return pending.result();
    }
    inFlight.add(pending);
    try {
      pending.timeout(
          timers.schedule(
              () ->
                  pending.expire(
                      "no publish ack from NATS within publish-timeout ("
                          + settings.publishTimeout().toMillis()
                          + " ms)"),
              settings.publishTimeout().toNanos(),
              TimeUnit.NANOSECONDS));
      // Sent on a sender thread: waiting for room in the window must not hold up the lane.
      senders.execute(() -> send(pending));
    } catch (RejectedExecutionException e) {
      pending.expire("the NATS sink is closed");
    }
    return pending.result();
  }

  /** Publishes the batch's events in order; failures found before a publish are verdicts too. */
  private void send(PendingBatch batch) {
    List<RoutedEvent> events = batch.events();
    Map<String, Verdict> subjects = new HashMap<>(); // per subject: null = bound, else its verdict
    JetStream js;
    try {
      js = link.jetStream();
    } catch (IOException | JetStreamApiException | RuntimeException e) {
      batch.failFrom(0, Verdict.unavailable("cannot connect to NATS: " + describe(e)));
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      batch.failFrom(0, Verdict.unavailable("interrupted while connecting to NATS"));
      return;
    }
    for (int i = 0; i < events.size(); i++) {
      if (batch.verdict(i) != null) {
        continue;
      }
      RoutedEvent routed = events.get(i);
      String subject = routed.destination();
      Verdict held = batch.keyFailure(i);
      if (held != null) {
        batch.complete(i, Verdict.heldBehind(held));
        continue;
      }
      try {
        if (!subjects.containsKey(subject)) {
          subjects.put(
              subject,
              link.bound(subject)
                  ? null
                  : Verdict.permanent(
                      "subject '" + subject + "': no JetStream stream binds this subject"));
        }
        if (subjects.get(subject) != null) {
          batch.complete(i, subjects.get(subject));
          continue;
        }
        Message message = NatsMessages.toMessage(routed);
        long left = batch.deadlineNanos() - System.nanoTime();
        if (!window.tryAcquire(Math.max(0, left), TimeUnit.NANOSECONDS)) {
          batch.failFrom(
              i,
              Verdict.unavailable(
                  "subject '"
                      + subject
                      + "': max-pending ("
                      + settings.maxPending()
                      + ") messages still unacknowledged at publish-timeout"));
          return;
        }
        publishOne(js, batch, i, subject, message);
      } catch (IllegalArgumentException e) {
        // An invalid subject or header, or a message over the server's max_payload.
        batch.complete(i, Verdict.permanent("subject '" + subject + "': " + describe(e)));
      } catch (IOException | JetStreamApiException | IllegalStateException e) {
        batch.failFrom(i, Verdict.unavailable("subject '" + subject + "': " + describe(e)));
        return;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        batch.failFrom(i, Verdict.unavailable("interrupted while publishing to NATS"));
        return;
      }
    }
  }

  private void publishOne(
      JetStream js, PendingBatch batch, int index, String subject, Message message) {
    PublishOptions options =
        PublishOptions.builder()
            .messageId(batch.events().get(index).event().eventId().toString())
            .build();
    CompletableFuture<PublishAck> ack;
    try {
      ack = js.publishAsync(message, options);
    } catch (RuntimeException e) {
      window.release();
      throw e;
    }
    ack.whenComplete(
        (a, error) -> {
          window.release();
          if (error == null) {
            batch.complete(index, Verdict.published());
            return;
          }
          PublishFailures.Failure f = PublishFailures.classify(error, subject);
          if (f.noStream()) {
            link.forget(subject); // checked again before the next publish to it
          }
          batch.complete(index, f.verdict());
        });
  }

  /** Runs once per batch, on the thread of its last verdict (often the client's). */
  private void finish(PendingBatch batch) {
    inFlight.remove(batch);
    List<Verdict> verdicts = batch.verdicts();
    health.batch(batch.events(), verdicts);
    // Complete off the client's thread: whatever the caller chains must not stall NATS.
    try {
      timers.execute(() -> batch.result().complete(verdicts));
    } catch (RejectedExecutionException e) {
      batch.result().complete(verdicts);
    }
  }

  @Override
  public boolean probe(Duration timeout) {
    if (closed) {
      return false;
    }
    Future<Boolean> check;
    try {
      check = senders.submit(link::answers);
    } catch (RejectedExecutionException e) {
      return false;
    }
    try {
      boolean ok = check.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      health.probeAnswered();
      return ok;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      check.cancel(true);
      return false;
    } catch (ExecutionException | TimeoutException e) {
      check.cancel(true);
      log.debug("NATS probe for pipeline {} failed: {}", pipeline, describe(e));
      return false;
    }
  }

  @Override
  public void close(Duration timeout) {
    log.info("Closing the NATS sink of pipeline {} (timeout {} ms)", pipeline, timeout.toMillis());
    closed = true;
    CompletableFuture<?> all =
        CompletableFuture.allOf(
            inFlight.stream().map(PendingBatch::result).toArray(CompletableFuture[]::new));
    try {
      all.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // whatever is left is expired below
    }
    for (PendingBatch batch : inFlight) {
      batch.expire("the NATS sink was closed before NATS acknowledged the message");
    }
    link.close();
    senders.shutdownNow();
    timers.shutdown();
  }

  /** Class and message, and the cause's; never payload data. */
  static String describe(Throwable e) {
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
