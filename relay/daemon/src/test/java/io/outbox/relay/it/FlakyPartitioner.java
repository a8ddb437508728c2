package io.outbox.relay.it;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.producer.Partitioner;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.utils.Utils;

/**
 * A producer partitioner for tests (the relay process loads it through {@code sink.kafka.producer
 * .partitioner.class}): partitions by key as the default one does, but refuses the first {@link
 * #FAILURES} sends of each event whose payload contains {@link #MARK} with {@link
 * NotEnoughReplicasException}, which the Kafka sink counts as a retryable failure of that event.
 * Counts are per process: a restarted relay fails such an event again.
 */
public final class FlakyPartitioner implements Partitioner {

  /** What a payload carries to be refused at first. */
  static final String MARK = "\"flaky\": true";

  /** How many sends of such an event each process refuses. */
  static final int FAILURES = 2;

  private static final Map<ByteBuffer, Integer> REFUSED = new ConcurrentHashMap<>();

  @Override
  public int partition(
      String topic, Object key, byte[] keyBytes, Object value, byte[] valueBytes, Cluster cluster) {
    if (valueBytes != null && new String(valueBytes, StandardCharsets.UTF_8).contains(MARK)) {
      int refused = REFUSED.merge(ByteBuffer.wrap(valueBytes.clone()), 1, Integer::sum);
      if (refused <= FAILURES) {
        throw new NotEnoughReplicasException("test: refused send " + refused + " of a flaky event");
      }
    }
    int partitions = cluster.partitionCountForTopic(topic);
    return Utils.toPositive(Utils.murmur2(keyBytes)) % partitions;
  }

  @Override
  public void close() {}

  @Override
  public void configure(Map<String, ?> configs) {}
}
