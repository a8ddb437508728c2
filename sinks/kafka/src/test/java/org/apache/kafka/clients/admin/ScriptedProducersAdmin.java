package org.apache.kafka.clients.admin;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * An admin client whose {@code describeProducers} answers at once from a script, without a broker:
 * the producers each partition reports. In Kafka's package only because {@link
 * DescribeProducersResult}'s constructor is package-private; a test helper of {@code sinks/kafka}.
 */
public final class ScriptedProducersAdmin extends ForwardingAdmin {

  private final Function<TopicPartition, List<ProducerState>> producers;

  /** {@code configs}: of the real client underneath, which nothing here asks. */
  public ScriptedProducersAdmin(
      Map<String, Object> configs, Function<TopicPartition, List<ProducerState>> producers) {
    super(configs);
    this.producers = producers;
  }

  @Override
  public DescribeProducersResult describeProducers(
      Collection<TopicPartition> partitions, DescribeProducersOptions options) {
    Map<TopicPartition, KafkaFuture<DescribeProducersResult.PartitionProducerState>> answers =
        new HashMap<>();
    for (TopicPartition tp : partitions) {
      answers.put(
          tp,
          KafkaFuture.completedFuture(
              new DescribeProducersResult.PartitionProducerState(producers.apply(tp))));
    }
    return new DescribeProducersResult(answers);
  }
}
