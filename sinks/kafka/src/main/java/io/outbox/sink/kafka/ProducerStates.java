package io.outbox.sink.kafka;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeProducersOptions;
import org.apache.kafka.clients.admin.DescribeProducersResult;
import org.apache.kafka.clients.admin.DescribeProducersResult.PartitionProducerState;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The producers of the partitions a check for hanging transactions asks about ({@link
 * HangingTransactions#find}): every partition of the cluster, or the lane's ledger partition and
 * the topics it wrote, with a bound for the partitions of other topics, which may be silent (issue
 * #30 point 3).
 */
final class ProducerStates {

  private static final Logger log = LoggerFactory.getLogger(HangingTransactions.class);

  /**
   * How long the partitions of topics the lane has not written may take to answer the check for
   * hanging transactions, once the lane's own answered; those that do not are left unchecked.
   */
  static final Duration OTHERS_BOUND = Duration.ofSeconds(5);

  /** How long a partition that did not answer is left out of the next checks (of every lane). */
  static final Duration SILENT_FOR = Duration.ofMinutes(1);

  // Partitions of topics the lanes have not written that did not answer, until when (nanoTime) they
  // are left out: the lanes fenced one after the other at an activation wait for them once.
  private final Map<TopicPartition, Long> silentUntil = new ConcurrentHashMap<>();

  private final String pipeline;
  private final String ledgerTopic;
  private final Ticker ticker;

  ProducerStates(String pipeline, String ledgerTopic, Ticker ticker) {
    this.pipeline = pipeline;
    this.ticker = ticker;
    this.ledgerTopic = ledgerTopic;
  }

  /**
   * The producers of every partition of the cluster ({@code everywhere}) or of the lane's {@code
   * ledger} partition and the topics {@code written}; a partition of those stops the check when it
   * does not answer by {@code deadline}, any other is left unchecked after {@link #OTHERS_BOUND}.
   */
  Map<TopicPartition, PartitionProducerState> of(
      Admin admin,
      boolean everywhere,
      Set<String> written,
      TopicPartition ledger,
      Deadline deadline) {
    Set<String> lanesTopics = new HashSet<>(written);
    lanesTopics.add(ledger.topic());
    Collection<TopicPartition> asked =
        everywhere ? partitions(admin, deadline) : partitions(admin, written, ledger, deadline);
    return producers(admin, asked, lanesTopics, deadline);
  }

  /** Every partition of every topic but the internal ones, and of the ledger. */
  private Collection<TopicPartition> partitions(Admin admin, Deadline deadline) {
    try {
      Set<String> topics =
          new HashSet<>(
              admin
                  .listTopics(new ListTopicsOptions().timeoutMs(KafkaTimeouts.ms(deadline)))
                  .names()
                  .get(KafkaTimeouts.ms(deadline), TimeUnit.MILLISECONDS));
      topics.add(ledgerTopic);
      return partitionsOf(admin, topics, deadline);
    } catch (ExecutionException | TimeoutException e) {
      throw HangingTransactions.unavailable(pipeline, "listing the topics", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while listing topics", e);
    }
  }

  /** Every partition of the topics {@code written}, and the lane's {@code ledger} partition. */
  private Collection<TopicPartition> partitions(
      Admin admin, Set<String> written, TopicPartition ledger, Deadline deadline) {
    try {
      List<TopicPartition> out = new ArrayList<>(partitionsOf(admin, written, deadline));
      out.add(ledger);
      return out;
    } catch (ExecutionException | TimeoutException e) {
      throw HangingTransactions.unavailable(
          pipeline, "describing the topics written " + written, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while describing topics", e);
    }
  }

  /** The partitions of {@code topics}; a topic deleted meanwhile has none. */
  private static List<TopicPartition> partitionsOf(
      Admin admin, Set<String> topics, Deadline deadline)
      throws ExecutionException, TimeoutException, InterruptedException {
    if (topics.isEmpty()) {
      return List.of();
    }
    Map<String, KafkaFuture<TopicDescription>> described =
        admin
            .describeTopics(
                topics, new DescribeTopicsOptions().timeoutMs(KafkaTimeouts.ms(deadline)))
            .topicNameValues();
    List<TopicPartition> all = new ArrayList<>();
    for (Map.Entry<String, KafkaFuture<TopicDescription>> e : described.entrySet()) {
      try {
        e.getValue()
            .get(KafkaTimeouts.ms(deadline), TimeUnit.MILLISECONDS)
            .partitions()
            .forEach(p -> all.add(new TopicPartition(e.getKey(), p.partition())));
      } catch (ExecutionException gone) {
        if (!(gone.getCause() instanceof UnknownTopicOrPartitionException)) {
          throw gone;
        }
        // deleted since it was listed: nothing of it can hang
      }
    }
    return all;
  }

  /**
   * The producers of each partition; a partition this principal may not describe (no READ on its
   * topic) is left out, with a warning naming its topics.
   */
  private Map<TopicPartition, PartitionProducerState> producers(
      Admin admin, Collection<TopicPartition> partitions, Set<String> ours, Deadline deadline) {
    Map<TopicPartition, PartitionProducerState> states = new HashMap<>();
    Set<String> unchecked = new TreeSet<>();
    Set<TopicPartition> unanswered =
        new TreeSet<>(
            Comparator.comparing(TopicPartition::topic)
                .thenComparingInt(TopicPartition::partition));
    long now = ticker.nanoTime();
    silentUntil.values().removeIf(until -> until - now <= 0);
    List<TopicPartition> own = new ArrayList<>();
    List<TopicPartition> others = new ArrayList<>();
    for (TopicPartition tp : partitions) {
      if (ours.contains(tp.topic())) {
        own.add(tp);
      } else if (silentUntil.containsKey(tp)) {
        unanswered.add(tp); // silent a moment ago: not waited for again
      } else {
        others.add(tp);
      }
    }
    List<TopicPartition> asked = new ArrayList<>(own);
    asked.addAll(others);
    DescribeProducersResult result =
        admin.describeProducers(
            asked, new DescribeProducersOptions().timeoutMs(KafkaTimeouts.ms(deadline)));
    // The lane's own partitions first, up to the deadline: a silent one stops the check. Then the
    // others, for OTHERS_BOUND more at most: a silent one is left unchecked.
    for (TopicPartition tp : own) {
      answer(result, tp, deadline, states, unchecked, null);
    }
    Deadline bound = ticker.deadline(OTHERS_BOUND);
    Deadline othersDeadline = deadline.nanos() - bound.nanos() > 0 ? bound : deadline;
    for (TopicPartition tp : others) {
      answer(result, tp, othersDeadline, states, unchecked, unanswered);
    }
    if (!unanswered.isEmpty()) {
      log.warn(
          "pipeline {}: partition(s) {} did not answer the check for hanging transactions in time"
              + " (offline?); this lane has not written them since it started, so they are left"
              + " unchecked: a hanging transaction of an earlier run there would be committed by"
              + " the lane's next commit on them (its events read twice)",
          pipeline,
          unanswered);
    }
    if (!unchecked.isEmpty()) {
      log.warn(
          "pipeline {}: not authorized to describe the producers of topic(s) {} (READ is needed):"
              + " hanging transactions there cannot be found",
          pipeline,
          unchecked);
    }
    return states;
  }

  /**
   * Puts {@code tp}'s producers into {@code states}, waiting until {@code deadline}. A topic this
   * principal may not describe goes to {@code unchecked}; a partition that does not answer goes to
   * {@code unanswered} (left out for {@link #SILENT_FOR}), or stops the check when that is {@code
   * null} (the lane's own partitions).
   */
  private void answer(
      DescribeProducersResult result,
      TopicPartition tp,
      Deadline deadline,
      Map<TopicPartition, PartitionProducerState> states,
      Set<String> unchecked,
      Set<TopicPartition> unanswered) {
    try {
      states.put(
          tp, result.partitionResult(tp).get(KafkaTimeouts.ms(deadline), TimeUnit.MILLISECONDS));
    } catch (ExecutionException | TimeoutException e) {
      Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
      if (cause instanceof UnknownTopicOrPartitionException) {
        return; // deleted since it was listed
      }
      if (cause instanceof AuthorizationException) {
        unchecked.add(tp.topic());
      } else if (unanswered == null) {
        throw HangingTransactions.unavailable(pipeline, "describing the producers of " + tp, e);
      } else {
        unanswered.add(tp);
        silentUntil.put(tp, ticker.nanoTime() + SILENT_FOR.toNanos());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while describing producers", e);
    }
  }
}
