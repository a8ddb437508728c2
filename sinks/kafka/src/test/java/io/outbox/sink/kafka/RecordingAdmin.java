package io.outbox.sink.kafka;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.DescribeProducersOptions;
import org.apache.kafka.clients.admin.DescribeProducersResult;
import org.apache.kafka.clients.admin.ForwardingAdmin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.ListTopicsResult;
import org.apache.kafka.common.TopicPartition;

/**
 * A real admin client that records the partitions asked for their producers and counts topic
 * listings: what a check for hanging transactions looked at.
 */
final class RecordingAdmin extends ForwardingAdmin {

  final List<TopicPartition> describedProducers = new CopyOnWriteArrayList<>();
  final AtomicInteger topicListings = new AtomicInteger();

  RecordingAdmin(Map<String, Object> configs) {
    super(configs);
  }

  @Override
  public DescribeProducersResult describeProducers(
      Collection<TopicPartition> partitions, DescribeProducersOptions options) {
    describedProducers.addAll(partitions);
    return super.describeProducers(partitions, options);
  }

  @Override
  public ListTopicsResult listTopics(ListTopicsOptions options) {
    topicListings.incrementAndGet();
    return super.listTopics(options);
  }

  void clear() {
    describedProducers.clear();
    topicListings.set(0);
  }
}
