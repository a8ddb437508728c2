package org.apache.kafka.clients.admin;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.KafkaFutureImpl;

/**
 * A real admin client, except that {@code describeProducers} never answers for the partitions
 * {@code silent} selects, as for a partition whose only replica is offline (a single-node test
 * broker cannot have one). In Kafka's package only because {@link DescribeProducersResult}'s
 * constructor is package-private; a test helper of {@code sinks/kafka}.
 */
public final class SilentPartitionsAdmin extends ForwardingAdmin {

  private final Predicate<TopicPartition> silent;

  public SilentPartitionsAdmin(Map<String, Object> configs, Predicate<TopicPartition> silent) {
    super(configs);
    this.silent = silent;
  }

  @Override
  public DescribeProducersResult describeProducers(
      Collection<TopicPartition> partitions, DescribeProducersOptions options) {
    List<TopicPartition> answered = partitions.stream().filter(silent.negate()).toList();
    DescribeProducersResult real = super.describeProducers(answered, options);
    Map<TopicPartition, KafkaFuture<DescribeProducersResult.PartitionProducerState>> futures =
        new HashMap<>();
    for (TopicPartition tp : partitions) {
      futures.put(tp, silent.test(tp) ? new KafkaFutureImpl<>() : real.partitionResult(tp));
    }
    return new DescribeProducersResult(futures);
  }
}
