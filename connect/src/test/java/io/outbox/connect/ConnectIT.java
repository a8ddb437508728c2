package io.outbox.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outbox.client.OutboxMessage;
import io.outbox.client.OutboxTables;
import io.outbox.client.OutboxWriter;
import io.outbox.schema.Migrator;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The connector on a real distributed Connect cluster (two workers of {@code services.sh connect
 * up}, exactly-once source support on), against the real PostgreSQL and Kafka: created through the
 * REST API, under steady writes raised from one task to four, then one worker killed with SIGKILL;
 * its tasks move to the other and every event arrives, in per-key order, duplicates counted.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConnectIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int KEYS = 20;
  private static ConnectWorkers workers;
  private static TestDatabase db;

  @BeforeAll
  static void startWorkers() {
    workers = ConnectWorkers.ofThisCheckout();
    workers.restart();
    db = TestDatabase.create("connect_it");
    new Migrator(OutboxTables.of("outbox")).migrate(db.url(), db.user(), db.password());
  }

  @AfterAll
  static void stopWorkers() {
    if (workers != null) {
      workers.down();
    }
    if (db != null) {
      db.close();
    }
  }

  /**
   * With a transaction per batch, a batch that Kafka committed but the database did not record is
   * not sent again: settlements of {@code outbox_dedup} fail (an injected trigger) until the test
   * lifts the fault, so its rows are claimed again and again meanwhile; they must reach the topic
   * once each.
   */
  @Test
  @Order(2)
  void aCommittedBatchWhoseRecordingFailedIsNotSentAgain() throws Exception {
    refuseSettlements("outbox_dedup");
    String name = "outbox-dedup-" + UUID.randomUUID().toString().substring(0, 8);
    String topic = KafkaTestSupport.uniqueTopic("connect-dedup");
    KafkaTestSupport.createTopic(topic, 3);
    int events = 50;
    try (Connection c = db.connect()) {
      OutboxWriter.forTable("outbox_dedup").writeAll(c, inKeyOrder(events, 10));
    }
    ConnectRest rest = new ConnectRest(ConnectWorkers.PORTS[0]);
    Map<String, String> config = config(topic, "1");
    config.put("table", "outbox_dedup");
    config.put("dead-letter-table", "outbox_dedup_dead_letter");
    rest.putConfig(name, config);
    assertThat(KafkaTestSupport.readRecords(topic, events, Duration.ofSeconds(90))).hasSize(events);
    // Recording keeps failing: the rows are claimed again and again, and stay unpublished.
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> count("SELECT count(*) FROM outbox_dedup WHERE published_at IS NOT NULL") == 0);
    liftTheFaultAndCheckEachEventReadOnce("outbox_dedup", topic, events);
    rest.delete(name);
  }

  /**
   * Issue #29 point 4: the rows Kafka committed but the database did not record are skipped by
   * every later claim until recorded, not only by the first one after the failure. One lane,
   * batches of 5; settlements refused. The first batch (rows 1-5) reaches Kafka; then a delayed row
   * written before them (row 0) comes due, so the next claim holds rows 0-4 and row 5 is pushed
   * into a later claim, and that claim's transaction names row 0 only on the code before: rows 1-5
   * were produced again.
   */
  @Test
  @Order(2)
  void rowsCommittedButUnrecordedAreSkippedByEveryLaterClaimUntilRecorded() throws Exception {
    String table = "outbox_dedup_later";
    refuseSettlements(table);
    String name = "outbox-dedup-later-" + UUID.randomUUID().toString().substring(0, 8);
    String topic = KafkaTestSupport.uniqueTopic("connect-dedup-later");
    KafkaTestSupport.createTopic(topic, 3);
    int events = 20;
    try (Connection c = db.connect()) {
      List<OutboxMessage> batch = new ArrayList<>();
      batch.add(
          OutboxMessage.builder()
              .aggregate("order", "late")
              .eventType("OrderChanged")
              .payload("{\"key\":\"late\",\"seq\":0}")
              .availableAt(Instant.now().plus(Duration.ofHours(1)))
              .build());
      batch.addAll(inKeyOrder(events - 1, 4));
      OutboxWriter.forTable(table).writeAll(c, batch);
    }
    ConnectRest rest = new ConnectRest(ConnectWorkers.PORTS[0]);
    Map<String, String> config = config(topic, "1");
    config.put("table", table);
    config.put("dead-letter-table", table + "_dead_letter");
    config.put("lanes", "1");
    config.put("batch-size", "5");
    rest.putConfig(name, config);
    assertThat(KafkaTestSupport.readRecords(topic, 5, Duration.ofSeconds(90))).hasSize(5);
    // The first batch is in Kafka, unrecorded: now the delayed row comes due.
    execute(
        "BEGIN",
        "SET LOCAL it.allow = 'on'",
        "UPDATE " + table + " SET available_at = now() WHERE aggregate_id = 'late'",
        "COMMIT");
    assertThat(KafkaTestSupport.readRecords(topic, 6, Duration.ofSeconds(30))).hasSize(6);
    // Claims go on holding rows 0-4 while settlements are refused; row 5 waits behind them.
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> count("SELECT count(*) FROM " + table + " WHERE published_at IS NOT NULL") == 0);
    liftTheFaultAndCheckEachEventReadOnce(table, topic, events);
    rest.delete(name);
  }

  /**
   * Ends {@link #refuseSettlements}' fault: every event of {@code table} must then be recorded as
   * published, and {@code topic} hold each once, in per-key order.
   */
  private static void liftTheFaultAndCheckEachEventReadOnce(String table, String topic, int events)
      throws Exception {
    execute("UPDATE it_fault_" + table + " SET active = false");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                count("SELECT count(*) FROM " + table + " WHERE published_at IS NOT NULL")
                    == events);
    List<ConsumerRecord<String, byte[]>> records =
        KafkaTestSupport.readToEnd(Services.kafkaBootstrap(), topic, Duration.ofSeconds(60));
    checkDelivery(records, events);
    assertThat(records).as("records, duplicates included").hasSize(events);
  }

  /**
   * {@code count} events on {@code keys} keys, each key's events numbered in write order ({@code
   * seq}), as {@link #checkDelivery} reads them.
   */
  static List<OutboxMessage> inKeyOrder(int count, int keys) {
    List<OutboxMessage> events = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String key = "key-" + (i % keys);
      events.add(
          OutboxMessage.of(
              "order", key, "OrderChanged", "{\"key\":\"" + key + "\",\"seq\":" + i / keys + "}"));
    }
    return events;
  }

  /**
   * Creates {@code table} and a trigger that refuses every update and delete of its rows (a
   * settlement) while {@code it_fault_<table>.active} is true, which it is at first, unless the
   * transaction set {@code it.allow} to {@code on} (the test's own updates).
   */
  private static void refuseSettlements(String table) throws SQLException {
    new Migrator(OutboxTables.of(table)).migrate(db.url(), db.user(), db.password());
    String fault = "it_fault_" + table;
    execute(
        "CREATE TABLE " + fault + " (active boolean NOT NULL)",
        "INSERT INTO " + fault + " VALUES (true)",
        "CREATE FUNCTION it_refuse_"
            + table
            + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " IF (SELECT active FROM "
            + fault
            + ") AND coalesce(current_setting('it.allow', true), '') <> 'on' THEN"
            + " RAISE EXCEPTION 'injected: settlement refused'; END IF;"
            + " RETURN COALESCE(NEW, OLD); END $$",
        "CREATE TRIGGER it_refuse_settlement BEFORE UPDATE OR DELETE ON "
            + table
            + " FOR EACH ROW EXECUTE FUNCTION it_refuse_"
            + table
            + "()");
  }

  /**
   * {@code dead-letter.destination}: an event the connector dead-letters (here: its row names a
   * topic Kafka refuses) is moved to the dead-letter table and its copy produced to the dead-letter
   * topic, with the daemon's headers; the other events are published as usual.
   */
  @Test
  @Order(2)
  void copiesDeadLettersToTheDeadLetterDestination() throws Exception {
    new Migrator(OutboxTables.of("outbox_dlq")).migrate(db.url(), db.user(), db.password());
    String name = "outbox-dlq-" + UUID.randomUUID().toString().substring(0, 8);
    String topic = KafkaTestSupport.uniqueTopic("connect-dlq-main");
    String deadTopic = KafkaTestSupport.uniqueTopic("connect-dlq-dead");
    KafkaTestSupport.createTopic(topic, 1);
    KafkaTestSupport.createTopic(deadTopic, 1);
    Set<String> bad = new HashSet<>();
    OutboxMessage big;
    try (Connection c = db.connect()) {
      List<OutboxMessage> batch = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        OutboxMessage.Builder m =
            OutboxMessage.builder()
                .aggregate("order", "key-" + i)
                .eventType("OrderChanged")
                .payload("{\"key\":\"key-" + i + "\",\"seq\":0}");
        if (i % 5 == 0) {
          m.destination("not a topic!"); // Kafka refuses the name: dead-lettered at once
        }
        OutboxMessage built = m.build();
        if (i % 5 == 0) {
          bad.add(built.eventId().toString());
        }
        batch.add(built);
      }
      // Issue #29 point 8: a record Kafka would refuse as too large (1.2 MB, above the producer's
      // and the broker's 1 MiB defaults) is dead-lettered, not produced (which failed the task and
      // stopped its lane); its copy is too large as well, so it is not copied; its key goes on.
      big =
          OutboxMessage.builder()
              .aggregate("order", "big")
              .eventType("OrderChanged")
              .payload("{\"key\":\"big\",\"seq\":0,\"pad\":\"" + "x".repeat(1_200_000) + "\"}")
              .build();
      batch.add(big);
      batch.add(
          OutboxMessage.builder()
              .aggregate("order", "big")
              .eventType("OrderChanged")
              .payload("{\"key\":\"big\",\"seq\":1}")
              .build());
      OutboxWriter.forTable("outbox_dlq").writeAll(c, batch);
    }
    ConnectRest rest = new ConnectRest(ConnectWorkers.PORTS[0]);
    Map<String, String> config = config(topic, "1");
    config.put("table", "outbox_dlq");
    config.put("dead-letter-table", "outbox_dlq_dead_letter");
    config.put("dead-letter.destination", deadTopic);
    rest.putConfig(name, config);
    List<ConsumerRecord<String, byte[]>> copies =
        KafkaTestSupport.readRecords(deadTopic, bad.size(), Duration.ofSeconds(90));
    assertThat(copies)
        .extracting(r -> KafkaTestSupport.header(r, "event-id"))
        .containsExactlyInAnyOrderElementsOf(bad);
    for (ConsumerRecord<String, byte[]> r : copies) {
      assertThat(KafkaTestSupport.header(r, "dead-letter-reason")).isEqualTo("permanent");
      assertThat(KafkaTestSupport.header(r, "dead-letter-attempts")).isEqualTo("1");
      assertThat(KafkaTestSupport.header(r, "dead-letter-error")).contains("invalid topic name");
      JsonNode payload = JSON.readTree(r.value());
      assertThat(r.key()).isEqualTo(payload.get("key").asText());
      assertThat(payload.get("seq").asInt()).isZero();
    }
    assertThat(KafkaTestSupport.readRecords(topic, 17, Duration.ofSeconds(60)))
        .extracting(r -> KafkaTestSupport.header(r, "event-id"))
        .doesNotContainAnyElementsOf(bad)
        .doesNotContain(big.eventId().toString())
        .hasSize(17);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                count("SELECT count(*) FROM outbox_dlq_dead_letter") == bad.size() + 1
                    && count("SELECT count(*) FROM outbox_dlq WHERE published_at IS NOT NULL")
                        == 17);
    assertThat(
            count(
                "SELECT count(*) FROM outbox_dlq_dead_letter WHERE reason = 'permanent'"
                    + " AND last_error LIKE '%above max-record-bytes = 1048576%'"
                    + " AND event_id = '"
                    + big.eventId()
                    + "'"))
        .isEqualTo(1);
    assertThat(
            KafkaTestSupport.readToEnd(
                Services.kafkaBootstrap(), deadTopic, Duration.ofSeconds(30)))
        .as("the too large dead letter is not copied")
        .hasSize(bad.size());
    rest.delete(name);
  }

  private static void execute(String... statements) throws SQLException {
    try (Connection c = db.connect();
        Statement st = c.createStatement()) {
      for (String sql : statements) {
        st.execute(sql);
      }
    }
  }

  private static Map<String, String> config(String topic, String tasksMax) {
    Map<String, String> c = atLeastOnce(db, topic, tasksMax);
    c.put("exactly.once.support", "required");
    c.put("transaction.boundary", "connector");
    return c;
  }

  /** A connector of {@code db}'s outbox into {@code topic}: 4 lanes, batches of 100. */
  static Map<String, String> atLeastOnce(TestDatabase db, String topic, String tasksMax) {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("connector.class", OutboxSourceConnector.class.getName());
    c.put("tasks.max", tasksMax);
    c.put("database.url", db.url());
    c.put("database.user", db.user());
    if (db.password() != null && !db.password().isEmpty()) {
      c.put("database.password", db.password());
    }
    c.put("lanes", "4");
    c.put("batch-size", "100");
    c.put("routing.destination", topic);
    c.put("source.polling.poll-interval", "200ms");
    return c;
  }

  @Test
  @Order(1) // while both workers run
  void validateEndpointNamesEachBadKey() {
    Map<String, String> c = config("t", "1");
    c.put("name", "bad-config");
    c.remove("database.url");
    c.put("retry.max-attempts", "many");
    c.put("source.polling.lease-timeout", "5ms");
    c.put("on-publish", "archive");
    JsonNode result = new ConnectRest(ConnectWorkers.PORTS[0]).validate(c);
    Map<String, String> errors = new HashMap<>();
    for (JsonNode config : result.get("configs")) {
      JsonNode value = config.get("value");
      if (value.get("errors").size() > 0) {
        errors.put(value.get("name").asText(), value.get("errors").get(0).asText());
      }
    }
    assertThat(errors)
        .containsOnlyKeys(
            "database.url", "retry.max-attempts", "source.polling.lease-timeout", "on-publish");
    assertThat(result.get("error_count").asInt()).isEqualTo(4);
  }

  @Test
  @Order(3) // kills a worker
  void survivesAKilledWorkerAndMoreTasksWithoutLossOrReorder() throws Exception {
    String name = "outbox-it-" + UUID.randomUUID().toString().substring(0, 8);
    String topic = KafkaTestSupport.uniqueTopic("connect-it");
    KafkaTestSupport.createTopic(topic, 3);
    ConnectRest rest = new ConnectRest(ConnectWorkers.PORTS[0]);
    Writer writer = new Writer();
    Thread writing = new Thread(writer, "connect-it-writer");
    try {
      rest.putConfig(name, config(topic, "1"));
      writing.start();
      awaitTasksRunning(rest, name, 1);
      // 100 events (half a second of writes) at each step show the tasks publishing.
      await().atMost(Duration.ofSeconds(60)).until(() -> published() >= 100);

      rest.putConfig(name, config(topic, "4"));
      awaitTasksRunning(rest, name, 4);
      long before = published();
      await().atMost(Duration.ofSeconds(60)).until(() -> published() >= before + 100);

      int victim = busiestWorker(rest.status(name));
      int survivor =
          victim == ConnectWorkers.PORTS[0] ? ConnectWorkers.PORTS[1] : ConnectWorkers.PORTS[0];
      ProcessHandle.of(workers.pid(victim)).orElseThrow().destroyForcibly(); // SIGKILL
      ConnectRest alive = new ConnectRest(survivor);
      long killedAt = System.nanoTime();
      await()
          .atMost(Duration.ofSeconds(90))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> allTasksOn(alive.status(name), 4, survivor));
      System.out.printf(
          "ConnectIT: tasks of the killed worker %d running on %d after %d ms%n",
          victim, survivor, (System.nanoTime() - killedAt) / 1_000_000);
      long afterKill = published();
      await().atMost(Duration.ofSeconds(60)).until(() -> published() >= afterKill + 100);
      writer.stop();
      writing.join();
      await()
          .atMost(Duration.ofSeconds(90))
          .until(() -> published() == writer.written.get() && pending() == 0);

      List<ConsumerRecord<String, byte[]>> records =
          KafkaTestSupport.readToEnd(Services.kafkaBootstrap(), topic, Duration.ofSeconds(60));
      checkDelivery(records, writer.written.get());
      checkOffsetKeys(name, 4);
      alive.delete(name);
    } finally {
      writer.stop();
      writing.join(10_000);
    }
  }

  /** Every event once at least, each key's first deliveries in write order; prints duplicates. */
  static void checkDelivery(List<ConsumerRecord<String, byte[]>> records, int written)
      throws Exception {
    Set<String> seen = new HashSet<>();
    Map<String, Integer> lastSeq = new HashMap<>();
    List<String> reorders = new ArrayList<>();
    for (ConsumerRecord<String, byte[]> r : records) {
      String eventId = KafkaTestSupport.header(r, "event-id");
      if (!seen.add(eventId)) {
        continue; // a duplicate
      }
      JsonNode payload = JSON.readTree(r.value());
      String key = payload.get("key").asText();
      int seq = payload.get("seq").asInt();
      assertThat(r.key()).isEqualTo(key);
      int last = lastSeq.getOrDefault(key, -1);
      if (seq != last + 1) {
        reorders.add(key + ": " + last + " then " + seq);
      }
      lastSeq.put(key, Math.max(seq, last));
    }
    System.out.printf(
        "ConnectIT: %d events written, %d records read, %d distinct, %d duplicates%n",
        written, records.size(), seen.size(), records.size() - seen.size());
    assertThat(seen).as("events delivered").hasSize(written);
    assertThat(reorders).as("first deliveries out of key order").isEmpty();
  }

  /**
   * The connector's offsets in the workers' offsets topic: one key per lane, the partition's keys
   * in {@link LaneOffsets#partition}'s order, whichever worker's JVM committed them. A task
   * restarted on the other worker looks its lanes' offsets up under these bytes; with the
   * partition's keys in a per-JVM order it missed its predecessor's last batch and sent it again
   * (issue #17).
   */
  private static void checkOffsetKeys(String connector, int lanes) {
    String prefix = "[\"" + connector + "\",";
    List<String> keys =
        KafkaTestSupport.readToEnd(
                Services.kafkaBootstrap(), ConnectWorkers.OFFSETS_TOPIC, Duration.ofSeconds(60))
            .stream()
            .map(ConsumerRecord::key)
            .filter(k -> k != null && k.startsWith(prefix))
            .distinct()
            .toList();
    System.out.printf("ConnectIT: offset keys of %s: %s%n", connector, keys);
    assertThat(keys)
        .hasSize(lanes)
        .allMatch(
            k ->
                k.substring(prefix.length()).matches("\\{\"pipeline\":\"[^\"]*\",\"lane\":\\d+}]"));
  }

  private static void awaitTasksRunning(ConnectRest rest, String name, int tasks) {
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> allTasksOn(rest.status(name), tasks, 0));
  }

  /** Whether exactly {@code tasks} tasks run, on the worker of {@code port} (0: any). */
  private static boolean allTasksOn(JsonNode status, int tasks, int port) {
    if (status == null || status.get("tasks").size() != tasks) {
      return false;
    }
    for (JsonNode t : status.get("tasks")) {
      if (!"RUNNING".equals(t.get("state").asText())
          || port != 0 && !t.get("worker_id").asText().endsWith(":" + port)) {
        return false;
      }
    }
    return true;
  }

  private static int busiestWorker(JsonNode status) {
    Map<Integer, Integer> count = new HashMap<>();
    for (JsonNode t : status.get("tasks")) {
      String worker = t.get("worker_id").asText();
      count.merge(Integer.parseInt(worker.substring(worker.lastIndexOf(':') + 1)), 1, Integer::sum);
    }
    return count.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
  }

  private static long published() throws SQLException {
    return count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL");
  }

  private static long pending() throws SQLException {
    return count(
        "SELECT (SELECT count(*) FROM outbox WHERE published_at IS NULL)"
            + " + (SELECT count(*) FROM outbox_dead_letter)");
  }

  private static long count(String sql) throws SQLException {
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Steady writes: 10 events per transaction, about 200 events/s, over {@link #KEYS} keys. */
  private static final class Writer implements Runnable {
    final AtomicInteger written = new AtomicInteger();
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final int[] seq = new int[KEYS];

    void stop() {
      stopped.set(true);
    }

    @Override
    public void run() {
      OutboxWriter outbox = OutboxWriter.forTable("outbox");
      try (Connection c = db.connect()) {
        c.setAutoCommit(false);
        int n = 0;
        while (!stopped.get()) {
          List<OutboxMessage> batch = new ArrayList<>();
          for (int i = 0; i < 10; i++, n++) {
            int k = n % KEYS;
            String key = "key-" + k;
            batch.add(
                OutboxMessage.of(
                    "order",
                    key,
                    "OrderChanged",
                    "{\"key\":\"" + key + "\",\"seq\":" + seq[k]++ + "}"));
          }
          outbox.writeAll(c, batch);
          c.commit();
          written.addAndGet(batch.size());
          Thread.sleep(50);
        }
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
