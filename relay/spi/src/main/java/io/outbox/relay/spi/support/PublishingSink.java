package io.outbox.relay.spi.support;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.slf4j.LoggerFactory;

/**
 * A {@link Sink} on a {@link BatchPublisher}: the sink gives only its broker code, {@link #send}
 * for one batch, {@link #answers} for a probe and {@link #closeClient}; this class wires them to
 * {@link #publish}, {@link #probe} (bounded, on a sender thread) and {@link #close} (in-flight
 * batches drained first).
 */
public abstract class PublishingSink implements Sink {

  private final BatchPublisher publisher;

  protected PublishingSink(BatchPublisher publisher) {
    this.publisher = publisher;
  }

  /**
   * The sink on a {@link BatchPublisher} of its own, logging under the sink's class name.
   *
   * @param broker the broker's name in messages and thread names, e.g. {@code NATS}
   * @param context the sink's context (its pipeline name)
   * @param timeout the bound on one batch, from the sink's settings
   * @param timeoutKey the setting that holds {@code timeout}, for the expiry message
   * @param where names an event's destination in messages, e.g. {@code subject 'orders.created'}
   */
  protected PublishingSink(
      String broker,
      PluginContext context,
      Duration timeout,
      String timeoutKey,
      Function<RoutedEvent, String> where) {
    this.publisher =
        new BatchPublisher(
            broker,
            context.pipeline(),
            LoggerFactory.getLogger(getClass()),
            timeout,
            timeoutKey,
            where,
            context.ticker());
  }

  /** The publisher, e.g. for {@link BatchPublisher#ask}. */
  protected final BatchPublisher publisher() {
    return publisher;
  }

  /** On a sender thread of its own: the lane writes the previous batch's settlement meanwhile. */
  @Override
  public final CompletionStage<List<Verdict>> publish(List<RoutedEvent> batch) {
    return publisher.publish(batch, this::send);
  }

  /**
   * Sends the events of one turn of a batch, in batch order (see {@link BatchPublisher.Sender}):
   * the batch decides which events may go ({@link PendingBatch#nextTurn}); the sink sends them and
   * reports verdicts.
   */
  protected abstract void send(PendingBatch batch, List<Integer> turn) throws InterruptedException;

  /**
   * Whether the broker answers, asked on a sender thread; a failure or no answer within {@code
   * timeout} is {@code false}.
   */
  protected abstract boolean answers(Duration timeout) throws Exception;

  @Override
  public boolean probe(Duration timeout) {
    return publisher.probe(() -> answers(timeout), timeout);
  }

  /** Closes the broker client once the batches in flight have their verdicts. */
  protected abstract void closeClient(Duration left);

  /**
   * Drains the batches in flight ({@link BatchPublisher#drain}), closes the client with what is
   * left of {@code timeout}, then stops the publisher's threads.
   */
  @Override
  public void close(Duration timeout) {
    Duration left = publisher.drain(timeout);
    closeClient(left);
    publisher.shutdown();
  }
}
