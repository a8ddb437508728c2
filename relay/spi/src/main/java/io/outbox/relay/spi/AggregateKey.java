package io.outbox.relay.spi;

import java.util.Objects;

/**
 * The per-key ordering unit: events with equal keys reach the broker in {@code id} order.
 *
 * @param aggregateType the row's {@code aggregate_type}
 * @param aggregateId the row's {@code aggregate_id}
 */
public record AggregateKey(String aggregateType, String aggregateId) {
  public AggregateKey {
    Objects.requireNonNull(aggregateType, "aggregateType");
    Objects.requireNonNull(aggregateId, "aggregateId");
  }

  /**
   * The key's lane in {@code [0, lanes)}: {@link LaneFunction}, the same in every JVM and in the
   * polling source's SQL.
   */
  public int lane(int lanes) {
    return LaneFunction.lane(aggregateType, aggregateId, lanes);
  }
}
