package io.outbox.bench;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The {@code raw} Kafka baseline: the bare {@link KafkaProducer}, with the relay's producer
 * settings, publishing the workload's records (built in memory beforehand) and waiting for every
 * acknowledgement: the broker side's limit.
 */
final class RawKafka {
  private RawKafka() {}

  static Results.Throughput run(Brokers brokers, Workload workload) throws Exception {
    List<ProducerRecord<String, byte[]>> records = new ArrayList<>(workload.events());
    Instant now = Instant.now();
    for (int i = 0; i < workload.events(); i++) {
      records.add(
          brokers.record(
              UUID.randomUUID().toString(), workload.key(i), workload.payloadBytes(i), now));
    }
    AtomicLong acked = new AtomicLong();
    AtomicReference<Exception> failure = new AtomicReference<>();
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(brokers.producerProperties("bench-raw"))) {
      // Topic metadata and the producer id are fetched once, outside the timing.
      producer
          .send(brokers.record(UUID.randomUUID().toString(), "warm-up", new byte[0], now))
          .get(60, TimeUnit.SECONDS);
      long start = System.nanoTime();
      for (ProducerRecord<String, byte[]> r : records) {
        producer.send(
            r,
            (meta, e) -> {
              if (e != null) {
                failure.compareAndSet(null, e);
              } else {
                acked.incrementAndGet();
              }
            });
      }
      producer.flush();
      long nanos = System.nanoTime() - start;
      if (failure.get() != null) {
        throw new IllegalStateException("raw producer: a send failed", failure.get());
      }
      return Results.Throughput.of(
          "raw kafka",
          "KafkaProducer.send of the in-memory records, from the first send to the last ack",
          acked.get(),
          nanos);
    }
  }
}
