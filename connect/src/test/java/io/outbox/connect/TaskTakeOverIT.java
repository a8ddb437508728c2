package io.outbox.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxMessage;
import io.outbox.client.OutboxTables;
import io.outbox.client.OutboxWriter;
import io.outbox.schema.Migrator;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.source.TransactionContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue #17 at the task's level, against the real PostgreSQL: task A claims a batch, the worker
 * commits the batch's records and offsets (Connect's own offset writer, the worker's JSON
 * converter, a store keyed by the serialized partition like the offsets topic) and then dies before
 * A records it; task B, the lane's next owner, must mark the rows published without sending them
 * again, whichever key order A's JVM gave the partition (before the fix a {@code Map.of}, whose
 * order each JVM chooses at random). The worker's part is played by the test; Kafka is not needed:
 * what is checked is what B hands to the worker.
 */
class TaskTakeOverIT {

  private static TestDatabase db;

  @BeforeAll
  static void createDatabase() {
    db = TestDatabase.create("connect_takeover");
  }

  @AfterAll
  static void dropDatabase() {
    if (db != null) {
      db.close();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"pipeline", "lane"})
  void theNextOwnerDoesNotResendABatchItsPredecessorGotCommitted(String firstKey) throws Exception {
    String table = "outbox_" + firstKey + "_first";
    new Migrator(OutboxTables.of(table)).migrate(db.url(), db.user(), db.password());
    try (Connection c = db.connect()) {
      List<OutboxMessage> events = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        events.add(OutboxMessage.of("order", "key-" + i, "OrderChanged", "{\"seq\":" + i + "}"));
      }
      OutboxWriter.forTable(table).writeAll(c, events);
    }
    Map<String, String> props = props(table);
    try (WorkerOffsets offsets = new WorkerOffsets()) {
      OutboxSourceTask a = new OutboxSourceTask();
      a.initialize(new Context(props, offsets.reader(table)));
      a.start(props);
      List<SourceRecord> sent =
          await()
              .atMost(Duration.ofSeconds(60))
              .pollInterval(Duration.ZERO)
              .until(a::poll, r -> r != null && !r.isEmpty());
      assertThat(sent).hasSize(3);
      // The worker commits the batch's transaction with its offsets, the partition's keys in the
      // order of A's JVM; then it dies: commitRecord is never called, A's claim rolls back.
      Map<Map<String, Object>, Map<String, Object>> committed = new LinkedHashMap<>();
      for (SourceRecord r : sent) {
        committed.put(inOrder(r.sourcePartition(), firstKey), new HashMap<>(r.sourceOffset()));
      }
      offsets.commit(table, committed);
      a.stop();

      OutboxSourceTask b = new OutboxSourceTask();
      b.initialize(new Context(props, offsets.reader(table)));
      b.start(props);
      List<SourceRecord> resent = new ArrayList<>();
      try {
        await()
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ZERO)
            .until(
                () -> {
                  List<SourceRecord> r = b.poll();
                  if (r != null) {
                    resent.addAll(r);
                  }
                  return !resent.isEmpty() || published(table) == 3;
                });
      } finally {
        b.stop();
      }
      assertThat(resent).as("records B sent again").isEmpty();
      assertThat(published(table)).isEqualTo(3);
    }
  }

  private static Map<String, String> props(String table) {
    Map<String, String> p = new HashMap<>();
    p.put("name", table);
    p.put("database.url", db.url());
    p.put("database.user", db.user());
    if (db.password() != null && !db.password().isEmpty()) {
      p.put("database.password", db.password());
    }
    p.put("table", table);
    p.put("dead-letter-table", table + "_dead_letter");
    p.put("lanes", "1");
    p.put("batch-size", "100");
    p.put("routing.destination", "orders");
    p.put("source.polling.poll-interval", "100ms");
    p.put(ConnectorSettings.TASK_LANES, "0");
    p.put(ConnectorSettings.TASK_INDEX, "0");
    return p;
  }

  /**
   * The partition with {@code firstKey} first, as a JVM whose {@code Map.of} iterates so has it.
   */
  private static Map<String, Object> inOrder(Map<String, ?> partition, String firstKey) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put(firstKey, partition.get(firstKey));
    partition.forEach(p::putIfAbsent);
    return p;
  }

  private static long published(String table) throws SQLException {
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT count(*) FROM " + table + " WHERE published_at IS NOT NULL")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The worker's side of a task with a transaction per batch. */
  private record Context(Map<String, String> configs, OffsetStorageReader offsetStorageReader)
      implements SourceTaskContext {

    @Override
    public TransactionContext transactionContext() {
      return new TransactionContext() {
        @Override
        public void commitTransaction() {}

        @Override
        public void commitTransaction(SourceRecord record) {}

        @Override
        public void abortTransaction() {}

        @Override
        public void abortTransaction(SourceRecord record) {}
      };
    }

    @Override
    public PluginMetrics pluginMetrics() {
      return null;
    }
  }
}
