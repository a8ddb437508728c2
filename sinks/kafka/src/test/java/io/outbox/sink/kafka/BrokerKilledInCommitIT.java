package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.LedgerEntry;
import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.SinkTransaction;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivateKafka;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The exactly-once sink when its (private) broker is killed inside a lane's {@code
 * commitTransaction}, again and again, recovering each time as the pipeline does: fence, read the
 * ledger, send again the in-doubt batch only when its ledger record is not committed. A Kafka 4.3
 * broker killed there sometimes comes back with the transaction forgotten by its coordinator yet
 * still open on its partitions (a hanging transaction); left alone, the lane's next commit
 * committed it too, and the batch sent again was read twice. The sink must abort it when it fences:
 * at the end, a {@code read_committed} consumer reads every committed event exactly once.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class BrokerKilledInCommitIT {
  private static final Logger log = LoggerFactory.getLogger(BrokerKilledInCommitIT.class);

  /**
   * Rounds until a hanging transaction was met (and at least two): the recorded runs met one within
   * 2-3 rounds. A run that meets none fails: it would not have tested its fault.
   */
  private static final int MAX_ROUNDS = 12;

  private static final Duration DOWN = Duration.ofSeconds(6);
  private static final Duration READ = Duration.ofSeconds(60);

  private final String topic = KafkaTestSupport.uniqueTopic("eos.kill");
  private final AtomicBoolean armed = new AtomicBoolean();
  private volatile CountDownLatch committing = new CountDownLatch(1);
  private PrivateKafka kafka;
  private ExactlyOnceKafkaSink sink;

  @AfterEach
  void close() {
    if (sink != null) {
      sink.close(Duration.ofSeconds(5));
    }
    if (kafka != null) {
      kafka.close();
    }
  }

  /** The real clients, with a producer that says when a commit starts. */
  private final KafkaClients.Factory factory =
      new KafkaClients.Factory() {
        @Override
        public Producer<String, byte[]> producer(Map<String, Object> config) {
          return new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer()) {
            @Override
            public void commitTransaction() {
              if (armed.compareAndSet(true, false)) {
                committing.countDown();
              }
              super.commitTransaction();
            }
          };
        }

        @Override
        public Admin admin(Map<String, Object> config) {
          return Admin.create(config);
        }
      };

  @Test
  void aBatchInDoubtAfterABrokerKillIsReadOnceWhateverTheBrokerLeftOpen() throws Exception {
    kafka = PrivateKafka.start();
    KafkaTestSupport.createTopic(kafka.bootstrap(), topic, 6);
    sink =
        KafkaSinkProvider.createExactlyOnce(
            Contexts.context(
                "bootstrap-servers = \""
                    + kafka.bootstrap()
                    + "\", send-timeout = 5s, delivery = exactly-once, ledger.topic = \""
                    + topic
                    + ".ledger\", transactional-id-prefix = \""
                    + topic
                    + "\""),
            factory);
    fenceUntilBack(true);
    Random random = new Random();
    List<String> committed = new ArrayList<>();
    Map<Integer, Long> settled = new HashMap<>();
    int inDoubt = 0;
    int sentAgain = 0;
    int rounds = 0;
    int[] counter = {0};
    // The events of batches the broker committed on some partitions and that were sent again in
    // full: read twice, by their payload, with the partitions where they were committed.
    List<RoutedEvent> resentAfterPartial = new ArrayList<>();
    List<Set<TopicPartition>> keptByPartial = new ArrayList<>();
    while (rounds < MAX_ROUNDS && !(sink.hangingAborted() > 0 && rounds >= 2)) {
      rounds++;
      committing = new CountDownLatch(1);
      List<List<RoutedEvent>> last = new ArrayList<>();
      CompletableFuture<SinkTransaction> run =
          CompletableFuture.supplyAsync(
              () -> {
                while (true) {
                  List<RoutedEvent> batch = batch(counter);
                  last.add(batch);
                  SinkTransaction t = publish(batch);
                  if (!(t instanceof SinkTransaction.Committed c)) {
                    return t;
                  }
                  settle(batch, c, committed, settled);
                }
              });
      TimeUnit.MILLISECONDS.sleep(200 + random.nextInt(600));
      armed.set(true);
      assertThat(committing.await(60, TimeUnit.SECONDS)).as("a commit started").isTrue();
      TimeUnit.MICROSECONDS.sleep(random.nextInt(3000));
      kafka.kill();
      SinkTransaction outcome = run.get(60, TimeUnit.SECONDS);
      TimeUnit.MILLISECONDS.sleep(DOWN.toMillis());
      kafka.restart();
      List<RoutedEvent> unfinished = last.get(last.size() - 1);
      boolean doubt = outcome instanceof SinkTransaction.Failed f && f.inDoubt();
      inDoubt += doubt ? 1 : 0;
      // What the pipeline does: fence, then settle from the ledger what it says was committed.
      int partialBefore = sink.partiallyCommitted(0).size();
      fenceUntilBack(false);
      List<Set<TopicPartition>> partial = sink.partiallyCommitted(0);
      List<LedgerEntry> entries = sink.readLedger(settled, READ).entries();
      boolean inLedger = false;
      for (LedgerEntry e : entries) {
        settled.merge(e.position().partition(), e.position().offset(), Math::max);
        for (LedgerRecord.Event ev : e.record().events()) {
          inLedger |= unfinished.stream().anyMatch(r -> r.event().eventId().equals(ev.eventId()));
        }
      }
      if (inLedger) {
        unfinished.forEach(r -> committed.add(payload(r)));
      } else {
        sentAgain++;
        for (Set<TopicPartition> kept : partial.subList(partialBefore, partial.size())) {
          resentAfterPartial.addAll(unfinished);
          keptByPartial.add(kept);
        }
        SinkTransaction again = publish(unfinished);
        assertThat(again).as("the batch sent again").isInstanceOf(SinkTransaction.Committed.class);
        settle(unfinished, (SinkTransaction.Committed) again, committed, settled);
      }
      log.info(
          "round {}: batch {}..{}: {} ({}), in the ledger: {}, hanging transactions aborted so far:"
              + " {}",
          rounds,
          payload(unfinished.get(0)),
          payload(unfinished.get(unfinished.size() - 1)),
          outcome.getClass().getSimpleName(),
          doubt ? "in doubt" : "not in doubt",
          inLedger,
          sink.hangingAborted());
    }
    // More transactions on every partition: their commit markers would commit whatever the lane's
    // producer id still had open there.
    for (int i = 0; i < 3; i++) {
      List<RoutedEvent> batch = batch(counter);
      SinkTransaction t = publish(batch);
      assertThat(t).isInstanceOf(SinkTransaction.Committed.class);
      settle(batch, (SinkTransaction.Committed) t, committed, settled);
    }

    List<ConsumerRecord<String, byte[]>> read =
        KafkaTestSupport.readToEnd(kafka.bootstrap(), topic, READ);
    Map<String, Long> copies =
        read.stream()
            .map(KafkaTestSupport::valueAsString)
            .collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
    System.out.printf(
        "BrokerKilledInCommitIT: %d rounds, %d commits in doubt, %d batches sent again, %d hanging"
            + " transaction(s) aborted, %d partial commit(s), %d events committed, %d records"
            + " read%n",
        rounds,
        inDoubt,
        sentAgain,
        sink.hangingAborted(),
        sink.partialCommits(),
        committed.size(),
        read.size());
    assertThat(committed.stream().filter(c -> !copies.containsKey(c)).toList())
        .as("committed events not read")
        .isEmpty();
    assertThat(sink.hangingAborted())
        .as(
            "hanging transactions aborted in %d rounds: the broker left none open, so this run did"
                + " not meet the fault it tests",
            rounds)
        .isPositive();
    List<String> twice =
        copies.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey).toList();
    assertThat(copies.values()).as("no event read more than twice").allMatch(n -> n <= 2);
    // Exactly the events of a partially committed batch on the partitions where it was committed:
    // where each event went is read back (its key's partition).
    Map<String, Integer> partitionOf = new HashMap<>();
    read.forEach(r -> partitionOf.put(KafkaTestSupport.valueAsString(r), r.partition()));
    Set<String> expectedTwice = new java.util.HashSet<>();
    for (int i = 0; i < resentAfterPartial.size(); i += 30) {
      Set<TopicPartition> kept = keptByPartial.get(i / 30);
      for (RoutedEvent r : resentAfterPartial.subList(i, i + 30)) {
        if (kept.contains(new TopicPartition(topic, partitionOf.get(payload(r))))) {
          expectedTwice.add(payload(r));
        }
      }
    }
    System.out.printf(
        "BrokerKilledInCommitIT: %d event(s) read twice, %d expected from the partial commits%n",
        twice.size(), expectedTwice.size());
    assertThat(twice)
        .as("events read twice: exactly those of partially committed batches where committed")
        .containsExactlyInAnyOrderElementsOf(expectedTwice);
    assertThat(read).hasSize(committed.size() + expectedTwice.size());
  }

  private List<RoutedEvent> batch(int[] counter) {
    List<RoutedEvent> batch = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      batch.add(Events.routed(topic, "k" + i, "{\"n\":" + counter[0]++ + "}"));
    }
    return batch;
  }

  private SinkTransaction publish(List<RoutedEvent> batch) {
    try {
      return sink.publish(
              0,
              batch,
              new LedgerRecord(
                  0, "test", batch.stream().map(r -> LedgerRecord.Event.of(r.event())).toList()))
          .toCompletableFuture()
          .get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static void settle(
      List<RoutedEvent> batch,
      SinkTransaction.Committed c,
      List<String> committed,
      Map<Integer, Long> settled) {
    batch.forEach(r -> committed.add(payload(r)));
    settled.merge(c.position().partition(), c.position().offset(), Math::max);
  }

  private static String payload(RoutedEvent r) {
    return new String(r.event().payload(), java.nio.charset.StandardCharsets.UTF_8);
  }

  /**
   * Fences lane 0 at the activation or after its transaction ended in doubt, retrying while the
   * restarted broker is not ready (as the pipeline does).
   */
  private void fenceUntilBack(boolean activation) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (true) {
      try {
        if (activation) {
          sink.fence(List.of(0));
        } else {
          sink.fenceInDoubt(0);
        }
        return;
      } catch (RuntimeException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        log.info("fence failed, trying again: {}", e.getMessage());
        TimeUnit.MILLISECONDS.sleep(500);
      }
    }
  }
}
