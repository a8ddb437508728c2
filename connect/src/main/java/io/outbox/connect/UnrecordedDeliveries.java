package io.outbox.connect;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * With a transaction per batch, per lane the deliveries Kafka committed that the database has not
 * recorded: what the lane's committed offset names ({@link LaneOffsets}: the offset of a batch
 * names its records and the rows of its claim found in Kafka already), read after the task started
 * and after a failed settlement, the only times a committed batch can be left unrecorded (a
 * predecessor died, or recording failed, between the Kafka commit and the database's). Kept until a
 * settlement records them: a claim that holds an earlier row first (a retry come due, a delayed
 * event, a late commit) pushes some of them into a later claim, which must skip them too (issue #29
 * point 4). Without transactions nothing is read: only a transaction ties a committed offset to the
 * records of its batch.
 */
final class UnrecordedDeliveries {

  // The task's lines, under the task's name.
  private static final Logger log = LoggerFactory.getLogger(OutboxSourceTask.class);

  private final String pipeline;
  private final Supplier<OffsetStorageReader> offsets; // null: no transaction per batch
  // Lanes whose last committed offsets have not been read yet (since the start, or since a
  // settlement failed).
  private final Set<Integer> uncheckedLanes = ConcurrentHashMap.newKeySet();
  private final Map<Integer, Set<String>> committedUnrecorded = new ConcurrentHashMap<>();

  /**
   * @param offsets the worker's offsets, or {@code null} without a transaction per batch
   */
  UnrecordedDeliveries(String pipeline, int[] lanes, Supplier<OffsetStorageReader> offsets) {
    this.pipeline = pipeline;
    this.offsets = offsets;
    for (int lane : lanes) {
      uncheckedLanes.add(lane);
    }
  }

  /** The deliveries of {@code claim}'s lane that Kafka has already; empty without transactions. */
  Set<String> committedBefore(int lane, Claim claim) {
    if (offsets == null) {
      return Set.of();
    }
    Set<String> known =
        committedUnrecorded.computeIfAbsent(lane, l -> ConcurrentHashMap.newKeySet());
    if (!uncheckedLanes.remove(lane)) {
      return Set.copyOf(known);
    }
    LaneOffsets.Committed committed = LaneOffsets.committed(offsets.get(), pipeline, lane);
    known.addAll(committed.deliveries());
    // Said at each read of the lane's offsets: what the dedup compares the claims with.
    log.info(
        "pipeline {} lane {}: the lane's committed offsets name {} deliveries (last row {});"
            + " the first claim holds rows {} to {}",
        pipeline,
        lane,
        committed.deliveries().size(),
        committed.lastRows().isEmpty() ? "none" : committed.lastRows(),
        claim.events().get(0).id(),
        claim.events().get(claim.events().size() - 1).id());
    return Set.copyOf(known);
  }

  /** A settlement recorded {@code events} of {@code lane}: no later claim needs to skip them. */
  void recorded(int lane, List<OutboxEvent> events) {
    Set<String> known = committedUnrecorded.get(lane);
    if (known != null) {
      events.forEach(e -> known.remove(OutboxRecords.delivery(e)));
    }
  }

  /**
   * A settlement of {@code lane} failed: its committed offsets are read again at its next claim.
   */
  void settlementFailed(int lane) {
    uncheckedLanes.add(lane);
  }
}
