package io.outbox.relay.spi;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Publishes batches of routed events to one broker. Knows nothing about the database.
 *
 * <p>Implementations must be safe for concurrent {@link #publish} calls from several lanes, must
 * keep the order of events of one key within a batch (Kafka: same partition, in order; once an
 * event of a key failed, the broker should not take that key's later events of the batch), and must
 * complete each batch only when every event has a verdict from the broker (acks, publisher
 * confirms) or a bounded timeout expired.
 */
public interface Sink extends AutoCloseable {

  /**
   * Publishes a batch.
   *
   * @return a stage completing with exactly one verdict per event, in the batch's order; it never
   *     completes exceptionally (failures are verdicts)
   */
  CompletionStage<List<Verdict>> publish(List<RoutedEvent> batch);

  /**
   * Checks, without publishing, whether the broker answers; called while the pipeline is paused
   * after {@link Verdict.Outcome#SINK_UNAVAILABLE}.
   *
   * @return {@code true} when publishing may resume
   */
  boolean probe(Duration timeout);

  /**
   * Checks at start-up, where the broker can tell, that destinations the pipeline resolves
   * statically (a routing template without variables, the dead-letter destination) exist. An
   * unreachable broker is not a configuration error: then nothing is reported.
   *
   * @return one line per missing destination, naming it; empty when all exist or when the broker
   *     cannot be asked now
   */
  default java.util.List<String> missingDestinations(java.util.Set<String> destinations) {
    return java.util.List.of();
  }

  /**
   * The prefix of the header names under which this broker's CloudEvents binding carries the
   * attributes in binary content mode ({@code ce_} for Kafka, {@code cloudEvents_} for AMQP, {@code
   * ce-} for NATS); the pipeline adds them to {@link RoutedEvent#extraHeaders} when {@code
   * cloudevents.mode = binary}. The default is Kafka's.
   */
  default String cloudEventsHeaderPrefix() {
    return "ce_";
  }

  /** Flushes what can be flushed within {@code timeout}, then releases every resource. */
  void close(Duration timeout);

  @Override
  default void close() {
    close(Duration.ofSeconds(30));
  }
}
