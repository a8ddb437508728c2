package io.outbox.sink.rabbitmq;

import com.rabbitmq.client.AMQP;
import io.outbox.relay.spi.EventTemplate;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkHealthLog;
import io.outbox.relay.spi.Verdict;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
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
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes batches to RabbitMQ over one connection and a small pool of confirm-mode channels. A
 * sender thread takes a channel, publishes its batch in order with {@code mandatory = true}
 * (waiting only for room in the channel's confirm window) and gives the channel back; the broker's
 * confirms, returns and channel closures then yield the verdicts. A batch completes when every
 * event has its verdict or {@code confirm-timeout} expired. A nack is back-pressure: the event is
 * sink-unavailable and the probe holds the pipeline back for a while ({@link BackPressure}).
 */
final class RabbitSink implements Sink {

  private static final Logger log = LoggerFactory.getLogger(RabbitSink.class);

  private final String pipeline;
  private final RabbitSinkSettings settings;
  private final EventTemplate routingKey;
  private final RabbitConnection connection;
  private final ScheduledThreadPoolExecutor timers;
  private final ExecutorService senders;
  private final ChannelPool channels;
  private final Set<BatchPublish> inFlight = ConcurrentHashMap.newKeySet();
  private final BackPressure backPressure = new BackPressure(System::nanoTime);
  private volatile boolean closed;
  private final SinkHealthLog health;

  RabbitSink(String pipeline, RabbitSinkSettings settings, RabbitConnection connection) {
    this.pipeline = pipeline;
    this.health = new SinkHealthLog(log, "RabbitMQ", pipeline);
    this.settings = settings;
    this.routingKey = EventTemplate.parse(settings.routingKey());
    this.connection = connection;
    this.channels =
        new ChannelPool(
            connection,
            settings.channels(),
            settings.maxUnconfirmed(),
            new BrokerSignals(pipeline, connection, backPressure, this::resendLater));
    this.timers = new ScheduledThreadPoolExecutor(1, threads("rabbitmq-" + pipeline + "-timer"));
    timers.setRemoveOnCancelPolicy(true);
    timers.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    this.senders = Executors.newCachedThreadPool(threads("rabbitmq-" + pipeline + "-send"));
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
    long deadline = System.nanoTime() + settings.confirmTimeout().toNanos();
    BatchPublish pending = new BatchPublish(batch, deadline, this::finish);
    if (closed) {
      pending.expire("the RabbitMQ sink is closed");
      return pending.result();
    }
    inFlight.add(pending);
    try {
      pending.timeout(
          timers.schedule(
              () ->
                  pending.expire(
                      "not confirmed by RabbitMQ within confirm-timeout ("
                          + settings.confirmTimeout().toMillis()
                          + " ms)"),
              settings.confirmTimeout().toNanos(),
              TimeUnit.NANOSECONDS));
    } catch (RejectedExecutionException e) {
      pending.expire("the RabbitMQ sink is closed");
      return pending.result();
    }
    List<Integer> all = new ArrayList<>(batch.size());
    for (int i = 0; i < batch.size(); i++) {
      all.add(i);
    }
    // Sent on a sender thread, never the caller's: a broker that blocks publishing (a resource
    // alarm) can stop reading mid-write, and the lane must still get its verdicts by the deadline.
    try {
      senders.execute(() -> drive(pending, all));
    } catch (RejectedExecutionException e) {
      pending.expire("the RabbitMQ sink is closed");
    }
    return pending.result();
  }

  /**
   * Sends {@code first}, then whatever of the batch had to be sent again, in batch order, holding
   * the batch's sending lock so that a resend never overtakes the sender.
   */
  private void drive(BatchPublish batch, List<Integer> first) {
    batch.sending().lock();
    try {
      // Resends are taken only under the lock: taken earlier, they could go out after later events.
      List<Integer> todo = first.isEmpty() ? batch.takeResends() : first;
      while (!todo.isEmpty() && !batch.isDone()) {
        send(batch, todo);
        todo = batch.takeResends();
      }
    } catch (RuntimeException e) {
      // A defect, not an outage: count an attempt so that it ends as a dead letter, not a loop.
      log.warn("RabbitMQ sink of pipeline {} failed unexpectedly while sending", pipeline, e);
      batch.failUnanswered(
          Verdict.retryable("unexpected failure of the RabbitMQ sink: " + describe(e)));
    } finally {
      batch.sending().unlock();
    }
  }

  /** Called by a channel whose closure sent some of {@code batch}'s events back. */
  private void resendLater(BatchPublish batch) {
    try {
      senders.execute(() -> drive(batch, List.of()));
    } catch (RejectedExecutionException e) {
      batch.expire("the RabbitMQ sink was closed before the message could be sent again");
    }
  }

  private void send(BatchPublish batch, List<Integer> todo) {
    List<RoutedEvent> events = batch.events();
    PublishChannel channel = null;
    Set<String> missing = new HashSet<>(); // checked once per send, not once per event
    int n = 0;
    try {
      for (; n < todo.size(); n++) {
        int i = todo.get(n);
        if (batch.verdict(i) != null) {
          continue;
        }
        RoutedEvent routed = events.get(i);
        String exchange = routed.destination();
        Verdict held = batch.keyFailure(i);
        if (held != null) {
          batch.complete(i, Verdict.heldBehind(held));
          continue;
        }
        // No check of `closed` here: a batch taken before close() is still sent, and close()
        // waits for it (up to its timeout, then expires what is left).
        if (System.nanoTime() - batch.deadlineNanos() > 0) {
          failFrom(batch, todo, n, unavailable(exchange, "confirm-timeout expired before sending"));
          return;
        }
        String key = routingKey.render(routed.event());
        String problem = RabbitMessages.problem(exchange, key, routed, connection.maxMessageSize());
        if (problem != null) {
          batch.complete(i, Verdict.permanent(problem));
          continue;
        }
        if (settings.checkExchanges()
            && (missing.contains(exchange) || !connection.exchangeExists(exchange))) {
          missing.add(exchange);
          batch.complete(
              i,
              Verdict.permanent("exchange '" + exchange + "' does not exist (checked passively)"));
          continue;
        }
        if (connection.isBlocked()) {
          failFrom(batch, todo, n, unavailable(exchange, "RabbitMQ blocks publishing (alarm)"));
          return;
        }
        if (channel == null) {
          channel = channels.borrow(batch.deadlineNanos());
          if (channel == null) {
            failFrom(
                batch, todo, n, unavailable(exchange, "no free channel within confirm-timeout"));
            return;
          }
        }
        if (!channel.acquire(batch.deadlineNanos())) {
          failFrom(
              batch,
              todo,
              n,
              unavailable(
                  exchange,
                  "max-unconfirmed ("
                      + settings.maxUnconfirmed()
                      + ") messages still unconfirmed at confirm-timeout"));
          return;
        }
        held = batch.keyFailure(i); // again: a verdict may have come while waiting for room
        if (held != null) {
          channel.release();
          batch.complete(i, Verdict.heldBehind(held));
          continue;
        }
        AMQP.BasicProperties properties = RabbitMessages.properties(routed);
        PublishChannel.Entry entry =
            new PublishChannel.Entry(
                batch,
                i,
                exchange,
                key,
                properties.getMessageId(),
                routed.event().payload().length);
        if (!channel.publish(entry, properties, routed.event().payload())) {
          if (channel.connectionLost()) {
            failFrom(
                batch,
                todo,
                n,
                unavailable(exchange, "connection to RabbitMQ lost: " + channel.closeReason()));
          } else {
            // The channel died (a missing exchange, say): the rest goes out on another channel.
            for (int m = n; m < todo.size(); m++) {
              batch.resendLater(todo.get(m));
            }
          }
          return;
        }
      }
    } catch (IOException | TimeoutException e) {
      String exchange = n < todo.size() ? events.get(todo.get(n)).destination() : "?";
      failFrom(batch, todo, n, unavailable(exchange, "cannot reach RabbitMQ: " + describe(e)));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failFrom(batch, todo, n, Verdict.unavailable("interrupted while publishing to RabbitMQ"));
    } finally {
      if (channel != null) {
        channels.giveBack(channel);
      }
    }
  }

  private static Verdict unavailable(String exchange, String reason) {
    return Verdict.unavailable("exchange '" + exchange + "': " + reason);
  }

  /** Gives events {@code todo[from..]} without a verdict {@code verdict}. */
  private static void failFrom(BatchPublish batch, List<Integer> todo, int from, Verdict verdict) {
    for (int m = from; m < todo.size(); m++) {
      batch.complete(todo.get(m), verdict);
    }
  }

  /** Runs once per batch, on the thread of its last verdict (often the connection's thread). */
  private void finish(BatchPublish batch) {
    inFlight.remove(batch);
    List<Verdict> verdicts = batch.verdicts();
    health.batch(batch.events(), verdicts);
    // Complete off the connection's thread: whatever the caller chains must not stall RabbitMQ.
    try {
      timers.execute(() -> batch.result().complete(verdicts));
    } catch (RejectedExecutionException e) {
      batch.result().complete(verdicts);
    }
  }

  @Override
  public List<String> missingDestinations(Set<String> exchanges) {
    Future<List<String>> check;
    try {
      check =
          senders.submit(
              () -> {
                List<String> missing = new ArrayList<>();
                for (String exchange : exchanges) {
                  if (!connection.exchangeExists(exchange)) {
                    missing.add(
                        "RabbitMQ exchange '"
                            + exchange
                            + "' does not exist; declare it (or list it under"
                            + " sink.rabbitmq.declare)");
                  }
                }
                return missing;
              });
    } catch (RejectedExecutionException e) {
      return List.of();
    }
    try {
      return check.get(settings.connectionTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      check.cancel(true);
      return List.of();
    } catch (ExecutionException | TimeoutException e) {
      check.cancel(true);
      log.warn(
          "pipeline {}: cannot check the RabbitMQ exchanges at start-up ({}); publishing will tell",
          pipeline,
          describe(e));
      return List.of();
    }
  }

  @Override
  public boolean probe(Duration timeout) {
    if (closed) {
      return false;
    }
    if (backPressure.holds()) {
      // A full queue answers like a healthy broker: wait out the hold before publishing again.
      log.debug("RabbitMQ probe for pipeline {}: holding back after basic.nack", pipeline);
      return false;
    }
    Future<Boolean> check;
    try {
      check = senders.submit(connection::answers);
    } catch (RejectedExecutionException e) {
      return false; // closed meanwhile
    }
    try {
      boolean ok = check.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (ok) {
        health.probeAnswered();
      }
      return ok;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      check.cancel(true);
      return false;
    } catch (ExecutionException | TimeoutException e) {
      check.cancel(true);
      log.debug("RabbitMQ probe for pipeline {} failed: {}", pipeline, describe(e));
      return false;
    }
  }

  @Override
  public void close(Duration timeout) {
    log.info(
        "Closing the RabbitMQ sink of pipeline {} (timeout {} ms)", pipeline, timeout.toMillis());
    closed = true;
    long deadline = System.nanoTime() + timeout.toNanos();
    CompletableFuture<?> all =
        CompletableFuture.allOf(
            inFlight.stream().map(BatchPublish::result).toArray(CompletableFuture[]::new));
    try {
      all.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // whatever is left is expired below
    }
    for (BatchPublish batch : inFlight) {
      batch.expire("the RabbitMQ sink was closed before RabbitMQ confirmed the message");
    }
    channels.close();
    connection.close((int) Math.max(1, Math.min(5000, (deadline - System.nanoTime()) / 1_000_000)));
    senders.shutdownNow();
    timers.shutdown();
  }

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
