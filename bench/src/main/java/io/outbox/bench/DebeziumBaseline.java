package io.outbox.bench;

import io.debezium.embedded.Connect;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.debezium.engine.format.Json;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * The {@code debezium} baseline, run in its own JVM: what users run instead of the relay. The
 * Debezium embedded engine (PostgreSQL connector, pgoutput, existing slot, no snapshot) with the
 * outbox event router feeds a {@link KafkaProducer} that, like Debezium Server's Kafka sink, sends
 * a batch, waits for all its acks, then marks the batch processed.
 *
 * <p>Arguments: {@code default|tuned host port database user slot publication topic-prefix
 * bootstrap-servers}; the password comes from {@code OUTBOX_BENCH_DB_PASSWORD}. Prints {@code
 * BENCH-ACKED <total> <epoch micros>} after each batch, for the harness.
 */
public final class DebeziumBaseline {
  static final String ACKED = "BENCH-ACKED ";
  static final String FAILED = "BENCH-FAILED ";

  private final KafkaProducer<byte[], byte[]> producer;
  private final AtomicLong acked = new AtomicLong();

  private DebeziumBaseline(KafkaProducer<byte[], byte[]> producer) {
    this.producer = producer;
  }

  public static void main(String[] args) throws Exception {
    boolean tuned = args[0].equals("tuned");
    Properties props = engineProperties(tuned, args);
    Brokers brokers = new Brokers(args[8], "", "", "", args[7], 1, Brokers.DEFAULT_LINGER_MS);
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(
            withByteArrayKeys(brokers.producerProperties("bench-debezium-" + args[0])))) {
      DebeziumBaseline baseline = new DebeziumBaseline(producer);
      CountDownLatch stopped = new CountDownLatch(1);
      DebeziumEngine.CompletionCallback done =
          (success, message, error) -> {
            if (!success) {
              System.out.println(FAILED + message + (error != null ? ": " + error : ""));
            }
            stopped.countDown();
          };
      ExecutorService executor = Executors.newSingleThreadExecutor();
      try (DebeziumEngine<?> engine =
          tuned
              ? DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
                  .using(props)
                  .using(done)
                  .notifying(baseline::connectBatch)
                  .build()
              : DebeziumEngine.create(Json.class, Json.class, Json.class)
                  .using(props)
                  .using(done)
                  .notifying(baseline::jsonBatch)
                  .build()) {
        executor.execute(engine);
        Runtime.getRuntime().addShutdownHook(new Thread(stopped::countDown, "bench-stop"));
        stopped.await();
      } finally {
        executor.shutdownNow();
      }
    }
  }

  private static Properties engineProperties(boolean tuned, String[] a) {
    Properties p = new Properties();
    p.setProperty("name", "bench-debezium");
    p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
    p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
    p.setProperty("database.hostname", a[1]);
    p.setProperty("database.port", a[2]);
    p.setProperty("database.dbname", a[3]);
    p.setProperty("database.user", a[4]);
    String password = System.getenv("OUTBOX_BENCH_DB_PASSWORD");
    p.setProperty("database.password", password == null ? "" : password);
    p.setProperty("topic.prefix", "bench");
    p.setProperty("plugin.name", "pgoutput");
    p.setProperty("slot.name", a[5]);
    p.setProperty("publication.name", a[6]);
    p.setProperty("publication.autocreate.mode", "disabled");
    // The slot exists since before the backlog: stream it from the WAL, no snapshot.
    p.setProperty("snapshot.mode", "no_data");
    p.setProperty("table.include.list", "public." + BenchDatabase.TABLE);
    p.setProperty("transforms", "outbox");
    String router = "transforms.outbox.";
    p.setProperty(router + "type", "io.debezium.transforms.outbox.EventRouter");
    p.setProperty(router + "table.field.event.id", "event_id");
    p.setProperty(router + "table.field.event.key", "aggregate_id");
    p.setProperty(router + "table.field.event.payload", "payload");
    p.setProperty(router + "route.by.field", "aggregate_type");
    p.setProperty(router + "route.topic.replacement", a[7] + "${routedByValue}");
    // The relay's headers (the router adds the event id as header "id").
    p.setProperty(
        router + "table.fields.additional.placement",
        "event_type:header:event-type,aggregate_type:header:aggregate-type,"
            + "aggregate_id:header:aggregate-id,created_at:header:created-at");
    if (tuned) {
      p.setProperty("poll.interval.ms", "10");
      p.setProperty("max.batch.size", "8192");
      p.setProperty("max.queue.size", "32768");
      p.setProperty(
          "column.exclude.list",
          "public.outbox.(destination|headers|available_at|published_at|attempts"
              + "|next_attempt_at|last_error)");
    }
    return p;
  }

  /** The settings the report lists for each mode. */
  static String describe(boolean tuned) {
    return tuned
        ? "Connect format (no JSON conversion), poll.interval.ms=10, max.batch.size=8192,"
            + " max.queue.size=32768, unused columns excluded"
        : "Json format for key, value and headers, Debezium's defaults (poll.interval.ms=500,"
            + " max.batch.size=2048, max.queue.size=8192)";
  }

  private static Properties withByteArrayKeys(Properties p) {
    p.put("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
    return p;
  }

  private void jsonBatch(
      List<ChangeEvent<String, String>> records,
      DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> committer)
      throws InterruptedException {
    List<Future<RecordMetadata>> sent = new ArrayList<>(records.size());
    for (ChangeEvent<String, String> r : records) {
      RecordHeaders headers = new RecordHeaders();
      for (io.debezium.engine.Header<String> h : r.<String>headers()) {
        headers.add(h.getKey(), utf8(h.getValue()));
      }
      sent.add(
          producer.send(
              new ProducerRecord<>(
                  r.destination(), null, null, utf8(r.key()), utf8(r.value()), headers)));
    }
    awaitAll(sent);
    for (ChangeEvent<String, String> r : records) {
      committer.markProcessed(r);
    }
    committer.markBatchFinished();
    report(records.size());
  }

  private void connectBatch(
      List<RecordChangeEvent<SourceRecord>> records,
      DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
      throws InterruptedException {
    List<Future<RecordMetadata>> sent = new ArrayList<>(records.size());
    for (RecordChangeEvent<SourceRecord> e : records) {
      SourceRecord r = e.record();
      RecordHeaders headers = new RecordHeaders();
      for (Header h : r.headers()) {
        headers.add(h.key(), utf8(String.valueOf(h.value())));
      }
      sent.add(
          producer.send(
              new ProducerRecord<>(
                  r.topic(),
                  null,
                  null,
                  utf8(String.valueOf(r.key())),
                  utf8(String.valueOf(r.value())),
                  headers)));
    }
    awaitAll(sent);
    for (RecordChangeEvent<SourceRecord> r : records) {
      committer.markProcessed(r);
    }
    committer.markBatchFinished();
    report(records.size());
  }

  private static void awaitAll(List<Future<RecordMetadata>> sent) throws InterruptedException {
    for (Future<RecordMetadata> f : sent) {
      try {
        f.get();
      } catch (java.util.concurrent.ExecutionException e) {
        // Debezium Server fails the batch (and the engine) on a send error; so does the baseline.
        throw new IllegalStateException("send failed", e.getCause());
      }
    }
  }

  private void report(int n) {
    long total = acked.addAndGet(n);
    System.out.println(
        ACKED + total + " " + ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now()));
  }

  private static byte[] utf8(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }
}
