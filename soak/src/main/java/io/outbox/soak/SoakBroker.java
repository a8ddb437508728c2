package io.outbox.soak;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * The soak's private broker: started for the soak alone so that it can be stopped and started as a
 * fault, with the destinations the writers' events are routed to, and a way to read back every
 * message the relays published.
 */
interface SoakBroker extends AutoCloseable {

  /** The aggregate type of the events that go to the destination that refuses them at times. */
  String FLAKY = "flaky";

  /** The aggregate type of every other event. */
  String ORDER = "order";

  /**
   * Starts a private broker of {@code sink}'s kind for destinations named {@code prefix.<type>},
   * for relays that publish exactly once (Kafka only) or at least once.
   */
  static SoakBroker start(SoakOptions.Sink sink, String prefix, boolean exactlyOnce) {
    return switch (sink) {
      case KAFKA -> KafkaSoakBroker.start(prefix, exactlyOnce);
      case RABBITMQ -> RabbitSoakBroker.start(prefix);
    };
  }

  /** The destinations' common prefix: events go to {@code <prefix>.<aggregate_type>}. */
  String prefix();

  /** The {@code sink { ... }} block of the relays' configuration, HOCON. */
  String sinkConfig();

  /**
   * Whether the broker can refuse the {@link #FLAKY} events in a way the sink counts as a retryable
   * failure of those events only (Kafka: yes; RabbitMQ: no, see {@link RabbitSoakBroker}).
   */
  boolean canRefuseRetryably();

  /**
   * Starts or stops refusing the {@link #FLAKY} events.
   *
   * @throws IllegalStateException when the broker did not take the change (it is down)
   */
  void refuse(boolean refusing);

  /** Stops the broker as an operator would; its data stays. */
  void stop();

  /**
   * Kills the broker (SIGKILL) whatever it is doing; its data stays.
   *
   * @throws UnsupportedOperationException for a broker the exactly-once soak does not run
   */
  void kill();

  /** Starts the stopped broker again and waits until it answers. */
  void restart();

  /**
   * Every message published so far, per stream in stream order; waits (up to {@code timeout}) until
   * each of {@code expected} was read, for a broker read by a live consumer.
   */
  List<Delivery> deliveries(Set<UUID> expected, Duration timeout);

  /** Stops the broker and deletes its data. */
  @Override
  void close();
}
