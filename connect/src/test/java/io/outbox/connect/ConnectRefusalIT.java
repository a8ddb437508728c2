package io.outbox.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxTables;
import io.outbox.client.OutboxWriter;
import io.outbox.schema.Migrator;
import io.outbox.testkit.BackdatingInterceptor;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.Sql;
import io.outbox.testkit.TestDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The ordering contract for the connector (issue #29): Kafka refuses one record of a key while the
 * key's later records are in flight. A standalone worker of its own (at least once: no exactly-once
 * source support) whose producer back-dates one record in {@link BackdatingInterceptor#EVERY} by a
 * day, into a topic that refuses records over an hour old (INVALID_TIMESTAMP for that record only),
 * one record per produce request ({@code batch.size = 0}), so that a key's next records are in the
 * partition's next requests. With {@code errors.tolerance = all} the worker hands a refused record
 * back to the task ({@code commitRecord} without metadata) instead of failing the task.
 */
class ConnectRefusalIT {

  /** Not one of services.sh's workers' ports (8083, 8084): this worker is the test's own. */
  private static final int PORT = 8085;

  private static final long ONE_HOUR_MS = Duration.ofHours(1).toMillis();

  private static TestDatabase db;
  private static ConnectWorkers.Standalone worker;

  @BeforeAll
  static void start() throws Exception {
    db = TestDatabase.create("connect_refusal_it");
    new Migrator(OutboxTables.of("outbox")).migrate(db.url(), db.user(), db.password());
    Path interceptor =
        Path.of(
            BackdatingInterceptor.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
    worker =
        ConnectWorkers.ofThisCheckout()
            .standalone(
                PORT,
                Map.of(
                    "producer.interceptor.classes",
                    BackdatingInterceptor.class.getName(),
                    "producer.batch.size",
                    "0"),
                interceptor);
  }

  @AfterAll
  static void stop() {
    if (worker != null) {
      worker.close();
    }
    if (db != null) {
      db.close();
    }
  }

  /**
   * Every event arrives; no key's first delivery comes after a later event of its key (a later
   * record handed to the worker with the refused one must not reach Kafka before it); no later
   * event of a key is recorded as published before an earlier one; and the refusals were met (rows
   * with attempts counted). On the code before, {@code errors.tolerance = all} was refused, and
   * with {@code none} the first refusal failed the task and stopped its lanes until a restart.
   */
  @Test
  void aRefusedRecordHoldsBackTheLaterEventsOfItsKeyAlreadyHandedToTheWorker() throws Exception {
    String topic = KafkaTestSupport.uniqueTopic("connect-refusal");
    KafkaTestSupport.createTopic(
        topic, 3, Map.of("message.timestamp.before.max.ms", String.valueOf(ONE_HOUR_MS)));
    int events = 1_000;
    try (Connection c = db.connect()) {
      OutboxWriter.forTable("outbox").writeAll(c, ConnectIT.inKeyOrder(events, 20));
    }
    Map<String, String> config = ConnectIT.atLeastOnce(db, topic, "1");
    config.put("lanes", "2");
    config.put("retry.initial-backoff", "200ms");
    config.put("retry.max-backoff", "1s");
    config.put("errors.tolerance", "all");
    ConnectRest rest = new ConnectRest(PORT);
    rest.putConfig("outbox-refusal", config);

    await()
        .atMost(Duration.ofSeconds(120))
        .until(() -> count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL") == events);
    List<ConsumerRecord<String, byte[]>> records =
        KafkaTestSupport.readToEnd(Services.kafkaBootstrap(), topic, Duration.ofSeconds(60));
    long retried = count("SELECT count(*) FROM outbox WHERE attempts > 0");
    // The transaction that marked each row published (its xmin): a lane's claims, and so its
    // settlements, follow one another, so per key a later transaction settled later.
    // (published_at is clock_timestamp() per row, in no particular order within a statement.)
    long settledEarly =
        count(
            "SELECT count(*) FROM (SELECT xmin::text::bigint < max(xmin::text::bigint) OVER"
                + " (PARTITION BY aggregate_type, aggregate_id ORDER BY id ROWS BETWEEN UNBOUNDED"
                + " PRECEDING AND 1 PRECEDING) AS early FROM outbox) t WHERE early");
    System.out.printf(
        "ConnectRefusalIT: %d events, %d records in the topic, %d rows charged an attempt, %d"
            + " recorded as published before an earlier event of their key%n",
        events, records.size(), retried, settledEarly);
    assertThat(retried).as("rows whose record Kafka refused (the fault was met)").isPositive();
    assertThat(settledEarly)
        .as("events recorded published before an earlier one of their key")
        .isZero();
    ConnectIT.checkDelivery(records, events);
    rest.delete("outbox-refusal");
  }

  private static long count(String sql) throws Exception {
    return Sql.number(db::connect, sql);
  }
}
