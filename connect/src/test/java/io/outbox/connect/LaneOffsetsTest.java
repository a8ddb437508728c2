package io.outbox.connect;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A lane's offsets through Connect's own offset writer and reader (the worker's internal JSON
 * converter, a store keyed by the serialized partition like the offsets topic): what a task
 * restarted on another worker finds of its predecessor's committed batch (issue #17).
 */
class LaneOffsetsTest {

  private static final String CONNECTOR = "orders-connector";

  private WorkerOffsets offsets = new WorkerOffsets();

  @AfterEach
  void stop() {
    offsets.close();
  }

  @Test
  void aLanesPartitionIsSerializedTheSameInEveryJvm() {
    // Connect's key of an offset; with a Map.of partition the object's keys came in an order
    // chosen at random per JVM.
    byte[] key =
        WorkerOffsets.converter()
            .fromConnectData(
                CONNECTOR, null, List.of(CONNECTOR, LaneOffsets.partition("orders", 3)));
    assertThat(new String(key, StandardCharsets.UTF_8))
        .isEqualTo("[\"orders-connector\",{\"pipeline\":\"orders\",\"lane\":3}]");
  }

  /**
   * A predecessor on another worker committed a batch's offset under its JVM's key order of the
   * partition (before the fix, either order; after it, {@link LaneOffsets#partition}'s): the
   * successor finds the batch's deliveries under each.
   */
  @Test
  void aSuccessorFindsTheCommittedBatchWhicheverKeyOrderThePredecessorStoredItUnder()
      throws Exception {
    for (Map<String, Object> asWritten : bothKeyOrders("orders", 2)) {
      commit(asWritten, Map.of(OutboxRecords.ID, 8L, OutboxRecords.BATCH, "7:0,8:0"));
      LaneOffsets.Committed found = LaneOffsets.committed(reader(), "orders", 2);
      assertThat(found.deliveries())
          .as("the batch committed under %s", asWritten.keySet())
          .containsExactlyInAnyOrder("7:0", "8:0");
      offsets.close();
      offsets = new WorkerOffsets(); // the next order on an empty store
    }
  }

  @Test
  void theOffsetsUnderBothKeyOrdersAreUnited() throws Exception {
    List<Map<String, Object>> orders = bothKeyOrders("orders", 0);
    commit(orders.get(1), Map.of(OutboxRecords.ID, 4L, OutboxRecords.BATCH, "3:0,4:1"));
    commit(orders.get(0), Map.of(OutboxRecords.ID, 9L, OutboxRecords.BATCH, "9:0"));
    // Another lane's and another connector's offsets are not this lane's.
    commit(LaneOffsets.partition("orders", 1), Map.of(OutboxRecords.BATCH, "5:0"));
    commit("another-connector", orders.get(0), Map.of(OutboxRecords.BATCH, "6:0"));
    LaneOffsets.Committed found = LaneOffsets.committed(reader(), "orders", 0);
    assertThat(found.deliveries()).containsExactlyInAnyOrder("3:0", "4:1", "9:0");
    assertThat(found.lastRows()).containsExactlyInAnyOrder(4L, 9L);
    assertThat(LaneOffsets.committed(reader(), "orders", 3).deliveries()).isEmpty();
    assertThat(LaneOffsets.committed(reader(), "orders", 3).lastRows()).isEmpty();
  }

  /**
   * The partition as a predecessor's JVM may have iterated it: {@code pipeline} first (as {@link
   * LaneOffsets#partition} now always does), or {@code lane} first.
   */
  private static List<Map<String, Object>> bothKeyOrders(String pipeline, int lane) {
    Map<String, Object> pipelineFirst = new LinkedHashMap<>();
    pipelineFirst.put("pipeline", pipeline);
    pipelineFirst.put("lane", lane);
    Map<String, Object> laneFirst = new LinkedHashMap<>();
    laneFirst.put("lane", lane);
    laneFirst.put("pipeline", pipeline);
    return List.of(pipelineFirst, laneFirst);
  }

  private void commit(Map<String, Object> partition, Map<String, Object> offset) throws Exception {
    commit(CONNECTOR, partition, offset);
  }

  private void commit(String connector, Map<String, Object> partition, Map<String, Object> offset)
      throws Exception {
    offsets.commit(connector, Map.of(partition, offset));
  }

  private OffsetStorageReader reader() {
    return offsets.reader(CONNECTOR);
  }
}
