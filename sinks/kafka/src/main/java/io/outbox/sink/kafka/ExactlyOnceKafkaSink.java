package io.outbox.sink.kafka;

import io.outbox.relay.spi.LedgerRead;
import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.SinkTransaction;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.TransactionalSink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.support.SinkHealthLog;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.ToIntFunction;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka sink in {@code delivery = exactly-once}: one transactional producer per lane ({@link
 * TransactionalLane}), each batch one Kafka transaction with its ledger record ({@link
 * LedgerTopic}).
 */
final class ExactlyOnceKafkaSink implements TransactionalSink {

  private static final Logger log = LoggerFactory.getLogger(ExactlyOnceKafkaSink.class);
  private static final Duration ACTIVATION_BOUND = Duration.ofSeconds(30);

  private final String pipeline;
  private final KafkaSinkSettings settings;
  private final KafkaClients clients;
  private final LedgerTopic ledger;
  private final TransactionalLane[] lanes;
  private final SinkHealthLog health;
  // What a lane is made of, kept to fence the lanes of a former configuration with more lanes.
  private final Map<String, Object> producerConfig;
  private final KafkaClients.Factory factory;
  private final TopicCheck topics;
  private final HangingTransactions hanging;
  private final Ticker ticker;

  ExactlyOnceKafkaSink(
      String pipeline,
      KafkaSinkSettings settings,
      KafkaClients clients,
      TopicCheck topics,
      Map<String, Object> producerConfig,
      KafkaClients.Factory factory,
      int lanes,
      HangingTransactions hanging,
      Ticker ticker) {
    this.pipeline = pipeline;
    this.ticker = ticker;
    this.settings = settings;
    this.clients = clients;
    this.health = new SinkHealthLog(log, "Kafka", pipeline);
    this.ledger =
        new LedgerTopic(
            settings.ledgerTopic(),
            pipeline,
            settings.ledgerRetention(),
            producerConfig,
            clients,
            ticker);
    this.lanes = new TransactionalLane[lanes];
    this.producerConfig = producerConfig;
    this.factory = factory;
    this.topics = topics;
    this.hanging = hanging;
    for (int i = 0; i < lanes; i++) {
      this.lanes[i] = newLane(i);
    }
  }

  /** Lane {@code lane}'s transactional publisher (not registered yet). */
  private TransactionalLane newLane(int lane) {
    return new TransactionalLane(
        lane,
        pipeline,
        settings.transactionalIdPrefix(),
        producerConfig,
        factory,
        settings.ledgerTopic(),
        topics,
        settings.sendTimeout(),
        hanging,
        KafkaRecords.of(settings),
        ticker);
  }

  @Override
  public void fence(List<Integer> which) {
    Duration bound = activationBound();
    int partitions = ledger.ensure(lanes.length, bound);
    for (int lane : which) {
      lanes[lane].fence(bound, true);
    }
    if (which.size() == lanes.length) {
      // An activation: the lanes of a former configuration with more lanes (the ledger's
      // partitions beyond today's lanes) are fenced too, so that an instance of it, frozen in a
      // commit, cannot commit rows this one publishes (issue #30 point 4); the ledger read that
      // follows settles what they committed.
      for (int former = lanes.length; former < partitions; former++) {
        fenceFormerLane(former, bound);
      }
    }
  }

  @Override
  public void fenceInDoubt(int lane) {
    lanes[lane].fence(activationBound(), false);
  }

  /** Registers lane {@code former}'s transactional id once (fencing its holders), then lets go. */
  private void fenceFormerLane(int former, Duration bound) {
    TransactionalLane lane = newLane(former);
    try {
      lane.fence(bound, true);
      log.info(
          "pipeline {}: lane {} of a former configuration (the ledger has a partition for it) fenced;"
              + " its committed batches are settled from the ledger",
          pipeline,
          former);
    } finally {
      lane.close(bound);
    }
  }

  /** A generous bound for a fence (a slow first metadata request is no outage). */
  private Duration activationBound() {
    return settings.sendTimeout().compareTo(ACTIVATION_BOUND) > 0
        ? settings.sendTimeout()
        : ACTIVATION_BOUND;
  }

  /** How many transactions the broker committed on only some partitions; for tests. */
  int partialCommits() {
    return sum(l -> l.hangingCheck().partiallyCommitted().size());
  }

  /** Lane {@code lane}'s partial commits so far: the partitions the broker had committed. */
  List<Set<TopicPartition>> partiallyCommitted(int lane) {
    return lanes[lane].hangingCheck().partiallyCommitted();
  }

  /** How many hanging transactions (partitions) the lanes aborted; for tests. */
  int hangingAborted() {
    return sum(l -> l.hangingCheck().aborted());
  }

  private int sum(ToIntFunction<TransactionalLane> count) {
    return Arrays.stream(lanes).mapToInt(count).sum();
  }

  @Override
  public CompletionStage<SinkTransaction> publish(
      int lane, List<RoutedEvent> events, LedgerRecord record) {
    return lanes[lane]
        .publish(events, record)
        .whenComplete(
            (t, e) -> {
              if (t instanceof SinkTransaction.Committed) {
                health.batch(
                    events, java.util.Collections.nCopies(events.size(), Verdict.published()));
              }
            });
  }

  @Override
  public LedgerRead readLedger(Map<Integer, Long> settled, Duration timeout) {
    // Records a lane must not trust are dropped by the read itself: a distrust marker in the
    // ledger follows them (TransactionalLane, LedgerTopic). Each lane's batch the coordinator
    // decided learns which way (BatchFate).
    LedgerTopic.Read read = ledger.read(settled, timeout);
    for (TransactionalLane lane : lanes) {
      lane.ledgerRead(read, settled);
    }
    return read.read();
  }

  @Override
  public String ledgerName() {
    return ledger.name();
  }

  /** Not used by the pipeline for a transactional sink (see {@link TransactionalSink}). */
  @Override
  public CompletionStage<List<Verdict>> publish(List<RoutedEvent> batch) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException(
            "the exactly-once Kafka sink of pipeline "
                + pipeline
                + " publishes only in transactions"));
  }

  @Override
  public boolean probe(Duration timeout) {
    return clients.probe(timeout, settings.probeTimeout(), health);
  }

  @Override
  public void close(Duration timeout) {
    log.info(
        "Closing the exactly-once Kafka sink of pipeline {} (timeout {} ms)",
        pipeline,
        timeout.toMillis());
    for (TransactionalLane lane : lanes) {
      lane.close(timeout);
    }
    clients.close(timeout);
  }
}
