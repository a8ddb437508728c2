package io.outbox.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The {@code raw} Kafka baseline: the bare {@link KafkaProducer}, with the relay's producer
 * settings, publishing the workload's records (built in memory beforehand) and waiting for every
 * acknowledgement: the broker side's limit.
 */
final class RawKafka {
  private static final String CLIENT = "bench-raw-latency";

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

  /**
   * The broker side of latency: the bare producer sends one record every {@code 1/rate} s for
   * {@code duration} and notes each send-to-ack time, in microseconds.
   */
  static Results.Latency latency(
      Brokers brokers, Workload workload, int rate, Duration duration, Map<String, Object> settings)
      throws Exception {
    // Acks complete on the producer's one network thread: the histogram has a single writer.
    Histogram micros = new Histogram(3);
    AtomicReference<Exception> failure = new AtomicReference<>();
    Instant now = Instant.now();
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(brokers.producerProperties(CLIENT))) {
      producer
          .send(brokers.record(UUID.randomUUID().toString(), "warm-up", new byte[0], now))
          .get(60, TimeUnit.SECONDS);
      long cpuBefore = producerCpuNanos(CLIENT);
      long start = System.nanoTime();
      long end = start + duration.toNanos();
      for (long k = 0; ; k++) {
        long due = start + (long) (k * 1e9 / rate);
        if (due >= end) {
          break;
        }
        long wait = due - System.nanoTime();
        if (wait > 0) {
          LockSupport.parkNanos(wait);
        }
        long sent = System.nanoTime();
        producer.send(
            brokers.record(
                UUID.randomUUID().toString(), workload.key(k), workload.payloadBytes(k), now),
            (meta, e) -> {
              if (e != null) {
                failure.compareAndSet(null, e);
              } else {
                micros.recordValue((System.nanoTime() - sent) / 1000);
              }
            });
      }
      producer.flush();
      // What the bare client itself costs at this rate: the floor under the relay's CPU figure.
      double cpuSeconds = (producerCpuNanos(CLIENT) - cpuBefore) / 1e9;
      double seconds = (System.nanoTime() - start) / 1e9;
      settings.put(
          "bare producer CPU during its latency run",
          String.format(
              Locale.ROOT,
              "%.2f cores (%.1f CPU s over %.1f s: the sending thread and the producer's network"
                  + " thread)",
              cpuSeconds / seconds,
              cpuSeconds,
              seconds));
    }
    if (failure.get() != null) {
      throw new IllegalStateException("raw producer: a send failed", failure.get());
    }
    return Results.Latency.of(
        "raw kafka send-to-ack",
        "the bare KafkaProducer (same settings) sending one record every 1/"
            + rate
            + " s for "
            + duration.toSeconds()
            + " s: from send() to the ack callback (the broker side of commit-to-ack)",
        micros,
        0);
  }

  /** CPU time of this thread and of the network thread of the producer {@code clientId}. */
  private static long producerCpuNanos(String clientId) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long total = Math.max(0, threads.getCurrentThreadCpuTime());
    for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info != null
          && info.getThreadName().equals("kafka-producer-network-thread | " + clientId)) {
        total += Math.max(0, threads.getThreadCpuTime(info.getThreadId()));
      }
    }
    return total;
  }
}
