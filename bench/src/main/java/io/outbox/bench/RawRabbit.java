package io.outbox.bench;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import java.util.Date;
import java.util.UUID;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code raw} RabbitMQ baseline: amqp-client publishing the workload's messages (persistent,
 * mandatory, the relay's properties and headers) on as many confirm-mode channels as the relay has
 * lanes, each with the relay's window of unconfirmed messages, until every one is confirmed.
 */
final class RawRabbit {
  private RawRabbit() {}

  static Results.Throughput run(Brokers brokers, Workload workload, int channels, int window)
      throws Exception {
    AtomicLong returned = new AtomicLong();
    AtomicLong nacked = new AtomicLong();
    try (Connection connection = brokers.rabbitConnection("bench-raw")) {
      long start = System.nanoTime();
      Parallel.run(
          "bench-raw-rabbit",
          channels,
          c -> {
            Channel ch = connection.createChannel();
            publish(ch, brokers, workload, c, channels, window, returned, nacked);
          });
      long nanos = System.nanoTime() - start;
      if (returned.get() + nacked.get() > 0) {
        throw new IllegalStateException(
            "raw RabbitMQ publisher: " + returned + " returned, " + nacked + " nacked");
      }
      return Results.Throughput.of(
          "raw rabbitmq",
          "amqp-client basicPublish (persistent, mandatory) on "
              + channels
              + " confirm channels, window "
              + window
              + ", first publish to last confirm",
          workload.events(),
          nanos);
    }
  }

  /** Publishes events first, first + step, ... on one channel and waits for all confirms. */
  private static void publish(
      Channel ch,
      Brokers brokers,
      Workload workload,
      int first,
      int step,
      int window,
      AtomicLong returned,
      AtomicLong nacked)
      throws Exception {
    ch.confirmSelect();
    Semaphore room = new Semaphore(window);
    ConcurrentNavigableMap<Long, Boolean> outstanding = new ConcurrentSkipListMap<>();
    ch.addReturnListener(r -> returned.incrementAndGet());
    ch.addConfirmListener(
        (tag, multiple) -> room.release(settle(outstanding, tag, multiple)),
        (tag, multiple) -> {
          int n = settle(outstanding, tag, multiple);
          nacked.addAndGet(n);
          room.release(n);
        });
    Date now = new Date();
    for (long i = first; i < workload.events(); i += step) {
      String key = workload.key(i);
      String id = UUID.randomUUID().toString();
      AMQP.BasicProperties props =
          new AMQP.BasicProperties.Builder()
              .messageId(id)
              .type(Workload.EVENT_TYPE)
              .timestamp(now)
              .deliveryMode(2)
              .contentType("application/json")
              .headers(new java.util.HashMap<>(Brokers.relayHeaders(id, key, now.toInstant())))
              .build();
      if (!room.tryAcquire(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("no confirm from RabbitMQ within 60s");
      }
      outstanding.put(ch.getNextPublishSeqNo(), Boolean.TRUE);
      ch.basicPublish(
          brokers.destination(), Brokers.ROUTING_KEY, true, props, workload.payloadBytes(i));
    }
    if (!room.tryAcquire(window, 60, TimeUnit.SECONDS)) {
      throw new IllegalStateException("no confirm from RabbitMQ within 60s");
    }
    ch.close();
  }

  private static int settle(
      ConcurrentNavigableMap<Long, Boolean> outstanding, long tag, boolean m) {
    if (!m) {
      return outstanding.remove(tag) != null ? 1 : 0;
    }
    ConcurrentNavigableMap<Long, Boolean> done = outstanding.headMap(tag, true);
    int n = done.size();
    done.clear();
    return n;
  }
}
