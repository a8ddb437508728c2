package io.outbox.bench;

import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.PublishOptions;
import io.nats.client.impl.NatsMessage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The {@code raw} NATS baseline: jnats publishing the workload's messages (built in memory
 * beforehand, with the relay's headers and the event id as {@code Nats-Msg-Id}) asynchronously to
 * the run's JetStream stream, at most {@code window} unacknowledged at a time, as the relay's sink
 * does with its {@code max-pending}, until every publish ack is in.
 */
final class RawNats {
  private RawNats() {}

  @SuppressWarnings("try") // Connection.close() may throw InterruptedException: fine here
  static Results.Throughput run(Brokers brokers, Workload workload, int window) throws Exception {
    Instant now = Instant.now();
    List<NatsMessage> messages = new ArrayList<>(workload.events());
    List<PublishOptions> options = new ArrayList<>(workload.events());
    for (int i = 0; i < workload.events(); i++) {
      String id = UUID.randomUUID().toString();
      messages.add(
          NatsMessage.builder()
              .subject(brokers.destination())
              .headers(StreamBrokers.natsHeaders(id, workload.key(i), now))
              .data(workload.payloadBytes(i))
              .build());
      options.add(PublishOptions.builder().messageId(id).build());
    }
    Semaphore room = new Semaphore(window);
    AtomicLong acked = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    try (Connection c = StreamBrokers.nats(brokers, "bench-raw")) {
      JetStream js = c.jetStream();
      // The connection and the stream's subject are warmed up outside the timing.
      js.publish(brokers.destination(), new byte[0]);
      long start = System.nanoTime();
      for (int i = 0; i < messages.size(); i++) {
        if (!room.tryAcquire(60, TimeUnit.SECONDS)) {
          throw new IllegalStateException("raw NATS publisher: no publish ack within 60s");
        }
        js.publishAsync(messages.get(i), options.get(i))
            .whenComplete(
                (ack, e) -> {
                  if (e != null) {
                    failure.compareAndSet(null, e);
                  } else {
                    acked.incrementAndGet();
                  }
                  room.release();
                });
      }
      if (!room.tryAcquire(window, 60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("raw NATS publisher: no publish ack within 60s");
      }
      long nanos = System.nanoTime() - start;
      if (failure.get() != null) {
        throw new IllegalStateException("raw NATS publisher: a publish failed", failure.get());
      }
      return Results.Throughput.of(
          "raw nats",
          "jnats JetStream.publishAsync (Nats-Msg-Id, the relay's headers) with at most "
              + window
              + " unacknowledged, first publish to last publish ack",
          acked.get(),
          nanos);
    }
  }
}
