package io.outbox.connect;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.connect.storage.OffsetStorageReader;

/**
 * Where Kafka Connect stores a lane's source offsets, and the deliveries its committed offsets
 * name.
 *
 * <p>Connect stores an offset under the serialized bytes of its source partition ({@code
 * ["<connector>",{"pipeline":...,"lane":...}]}, the JSON object's keys in the map's iteration
 * order) and looks it up by the bytes of the partition it is asked for. So the partition's keys
 * must come in the same order in every JVM: {@link #partition} fixes it. Before, the partition was
 * a {@code Map.of}, whose iteration order is chosen at random in each JVM, so a task restarted on
 * another worker asked for its lanes' offsets under the other order about every second time and
 * found none (or an older one): the committed batch of a killed predecessor was sent again (issue
 * #17). Offsets written that way are still read ({@link #committed}).
 */
final class LaneOffsets {

  private LaneOffsets() {}

  /** The source partition of a lane: {@code pipeline} first, then {@code lane}, in every JVM. */
  static Map<String, Object> partition(String pipeline, int lane) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put(OutboxRecords.PIPELINE, pipeline);
    p.put(OutboxRecords.LANE, lane);
    return Collections.unmodifiableMap(p);
  }

  /**
   * The lane's partition in each key order an offset may have been stored under: {@link
   * #partition}'s, then the other one, which tasks before the fix wrote from about half of the
   * JVMs.
   */
  static List<Map<String, Object>> storedPartitions(String pipeline, int lane) {
    Map<String, Object> reversed = new LinkedHashMap<>();
    reversed.put(OutboxRecords.LANE, lane);
    reversed.put(OutboxRecords.PIPELINE, pipeline);
    return List.of(partition(pipeline, lane), Collections.unmodifiableMap(reversed));
  }

  /**
   * What the lane's committed offsets name, under either key order. Each offset was committed in
   * the transaction of the batch it names, so every delivery it names reached Kafka (in that
   * transaction, or in an earlier one whose rows the batch found in Kafka already): the union is
   * safe to skip, whichever of the two is the newer.
   */
  static Committed committed(OffsetStorageReader reader, String pipeline, int lane) {
    Set<String> deliveries = new HashSet<>();
    List<Object> lastRows = new ArrayList<>();
    // One read per order: offsets() would key both answers by equal maps and keep only one.
    for (Map<String, Object> p : storedPartitions(pipeline, lane)) {
      Map<String, Object> offset = reader.offset(p);
      if (offset != null) {
        deliveries.addAll(OutboxRecords.committedBatch(offset));
        lastRows.add(offset.get(OutboxRecords.ID));
      }
    }
    return new Committed(Set.copyOf(deliveries), List.copyOf(lastRows));
  }

  /**
   * The deliveries ({@code id:attempts}) the lane's committed offsets name, and the last row of
   * each offset found (for the log).
   */
  record Committed(Set<String> deliveries, List<Object> lastRows) {}
}
