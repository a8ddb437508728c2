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

  /** A stable, non-negative lane index in {@code [0, lanes)}. */
  public int lane(int lanes) {
    return Math.floorMod(hashCode(), lanes);
  }
}
