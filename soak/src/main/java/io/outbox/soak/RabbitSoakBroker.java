package io.outbox.soak;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Delivery;
import io.outbox.testkit.PrivateRabbit;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A private RabbitMQ node with one durable topic exchange per aggregate type, all bound to one
 * durable queue that a live consumer reads while the soak runs (reconnecting after each broker
 * restart), noting when each message arrived. A message the broker delivers again to the consumer
 * (its ack lost in a restart) is the same message, not a duplicate of the relay's, and is counted
 * once.
 *
 * <p>No retryable refusals: the RabbitMQ sink has no failure that is retryable for one event only.
 * A {@code basic.nack} (a full queue with {@code x-overflow = reject-publish}, a resource limit) is
 * back-pressure, "sink unavailable" (issue #12 point 6): no attempt is charged; a returned
 * (unroutable) message, a missing exchange and a body over {@code max_message_size} are permanent;
 * any other channel closure is retryable for every unconfirmed message of the channel, healthy ones
 * included. So the soak's writers send no {@link #FLAKY} events to RabbitMQ.
 */
final class RabbitSoakBroker implements SoakBroker {
  private static final Logger log = LoggerFactory.getLogger(RabbitSoakBroker.class);
  private static final int PREFETCH = 500;
  private static final Duration RECONNECT = Duration.ofMillis(500);
  private static final Duration QUIET = Duration.ofSeconds(3);

  private final PrivateRabbit rabbit;
  private final String prefix;
  private final String queue;
  private final ConnectionFactory factory = new ConnectionFactory();
  private final List<io.outbox.soak.Delivery> received = new ArrayList<>(); // guarded by this
  private final Set<UUID> seen = new HashSet<>(); // guarded by this
  private final Thread consumer;
  private volatile boolean running = true;
  private volatile Instant lastArrival = Instant.now();

  private RabbitSoakBroker(PrivateRabbit rabbit, String prefix) throws Exception {
    this.rabbit = rabbit;
    this.prefix = prefix;
    this.queue = prefix + ".all";
    factory.setUri(rabbit.amqpUri());
    factory.setAutomaticRecoveryEnabled(false);
    try (Connection c = factory.newConnection("outbox-soak-admin");
        Channel ch = c.createChannel()) {
      ch.queueDeclare(queue, true, false, false, Map.of());
      for (String type : List.of(ORDER, FLAKY)) {
        ch.exchangeDeclare(prefix + "." + type, "topic", true);
        ch.queueBind(queue, prefix + "." + type, "#");
      }
    }
    consumer = new Thread(this::consume, "soak-rabbit-consumer");
    consumer.setDaemon(true);
    consumer.start();
  }

  static RabbitSoakBroker start(String prefix) {
    PrivateRabbit rabbit = PrivateRabbit.startPlain(List.of());
    try {
      return new RabbitSoakBroker(rabbit, prefix);
    } catch (Exception e) {
      rabbit.close();
      throw new IllegalStateException("cannot declare the soak's exchanges on " + rabbit, e);
    }
  }

  @Override
  public String prefix() {
    return prefix;
  }

  @Override
  public String sinkConfig() {
    return "type = rabbitmq, rabbitmq { uri = \"" + rabbit.amqpUri() + "\" }";
  }

  @Override
  public boolean canRefuseRetryably() {
    return false;
  }

  @Override
  public void refuse(boolean refusing) {
    if (refusing) {
      throw new UnsupportedOperationException("RabbitMQ has no retryable refusal of one event");
    }
  }

  @Override
  public void stop() {
    rabbit.stop();
  }

  @Override
  public void kill() {
    throw new UnsupportedOperationException(
        "only the exactly-once soak kills the broker, and it runs on Kafka");
  }

  @Override
  public void restart() {
    rabbit.restart();
  }

  /** Reads until the consumer has connected and consumes; reconnects after each broker restart. */
  private void consume() {
    while (running) {
      try (Connection c = factory.newConnection("outbox-soak-consumer")) {
        Channel ch = c.createChannel();
        ch.basicQos(PREFETCH);
        ch.basicConsume(
            queue,
            false,
            (tag, message) -> {
              record(message);
              ch.basicAck(message.getEnvelope().getDeliveryTag(), false);
            },
            tag -> {});
        while (running && c.isOpen()) {
          Waits.pause(RECONNECT);
        }
      } catch (IOException | TimeoutException | RuntimeException e) {
        // The broker is down or restarting: try again.
        if (running) {
          log.debug("soak: RabbitMQ consumer reconnects: {}", e.toString());
        }
      }
      if (running) {
        Waits.pause(RECONNECT);
      }
    }
  }

  private void record(Delivery message) {
    String id = message.getProperties().getMessageId();
    if (id == null) {
      throw new IllegalStateException("a message without message_id in " + queue);
    }
    UUID eventId = UUID.fromString(id);
    Instant at = Instant.now();
    Object key =
        message.getProperties().getHeaders() == null
            ? null
            : message.getProperties().getHeaders().get("aggregate-id");
    synchronized (this) {
      // Delivered again to this consumer (the ack was lost): the same message, seen already.
      if (message.getEnvelope().isRedeliver() && seen.contains(eventId)) {
        return;
      }
      seen.add(eventId);
      received.add(
          new io.outbox.soak.Delivery(
              eventId,
              at,
              queue,
              received.size(),
              KafkaSoakBroker.fingerprint(key == null ? null : key.toString(), message.getBody())));
    }
    lastArrival = at;
  }

  /** What the consumer received, once each expected event arrived and the queue was quiet. */
  @Override
  public List<io.outbox.soak.Delivery> deliveries(Set<UUID> expected, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      boolean all;
      synchronized (this) {
        all = seen.containsAll(expected);
      }
      if (all && Duration.between(lastArrival, Instant.now()).compareTo(QUIET) > 0) {
        break;
      }
      Waits.pause(Duration.ofMillis(200));
    }
    synchronized (this) {
      return List.copyOf(received);
    }
  }

  @Override
  public void close() {
    running = false;
    try {
      consumer.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    rabbit.close();
  }

  @Override
  public String toString() {
    return rabbit + " (exchanges " + prefix + ".*, queue " + queue + ")";
  }
}
