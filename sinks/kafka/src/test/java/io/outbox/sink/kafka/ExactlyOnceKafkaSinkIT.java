package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.LedgerEntry;
import io.outbox.relay.spi.LedgerException;
import io.outbox.relay.spi.LedgerRead;
import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.SinkTransaction;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.Verdict;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.Services;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.SilentPartitionsAdmin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The exactly-once Kafka sink against the real broker: a batch and its ledger record commit
 * together and read back with {@code read_committed}; a second instance fences the first; an event
 * Kafka refuses aborts the transaction with that event at fault; a ledger that is gone or compacted
 * is refused.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ExactlyOnceKafkaSinkIT {
  private static final Duration READ = Duration.ofSeconds(30);

  private final String topic = KafkaTestSupport.uniqueTopic("eos.it");
  private final String ledger = topic + ".ledger";
  private final List<ExactlyOnceKafkaSink> sinks = new ArrayList<>();

  @AfterEach
  void close() {
    sinks.forEach(s -> s.close(Duration.ofSeconds(5)));
  }

  private ExactlyOnceKafkaSink sink(String extra) {
    return sink(extra, 4, KafkaClients.KAFKA);
  }

  private ExactlyOnceKafkaSink sink(String extra, int lanes, KafkaClients.Factory factory) {
    return sink(
        extra,
        lanes,
        factory,
        (clients, settings) ->
            new HangingTransactions("p", clients, settings.ledgerTopic(), Ticker.SYSTEM));
  }

  private ExactlyOnceKafkaSink sink(
      String extra,
      int lanes,
      KafkaClients.Factory factory,
      BiFunction<KafkaClients, KafkaSinkSettings, HangingTransactions> hanging) {
    ExactlyOnceKafkaSink sink =
        KafkaSinkProvider.createExactlyOnce(
            Contexts.context(
                "bootstrap-servers = \""
                    + Services.kafkaBootstrap()
                    + "\", send-timeout = 10s, delivery = exactly-once, ledger.topic = \""
                    + ledger
                    + "\", transactional-id-prefix = \""
                    + topic
                    + "\"\n"
                    + extra,
                lanes),
            factory,
            hanging);
    sinks.add(sink);
    return sink;
  }

  /** Real producers, and the admin clients {@code admin} makes. */
  private static KafkaClients.Factory withAdmin(
      java.util.function.Function<Map<String, Object>, Admin> admin) {
    return new KafkaClients.Factory() {
      @Override
      public Producer<String, byte[]> producer(Map<String, Object> config) {
        return KafkaClients.KAFKA.producer(config);
      }

      @Override
      public Admin admin(Map<String, Object> config) {
        return admin.apply(config);
      }
    };
  }

  private static LedgerRecord ledgerOf(List<RoutedEvent> batch) {
    return new LedgerRecord(
        0, "test", batch.stream().map(r -> LedgerRecord.Event.of(r.event())).toList());
  }

  @Test
  void aBatchAndItsLedgerRecordCommitTogether() throws Exception {
    KafkaTestSupport.createTopic(topic, 3);
    ExactlyOnceKafkaSink sink = sink("");
    sink.fence(List.of(0, 1, 2, 3));
    List<RoutedEvent> batch =
        List.of(
            Events.routed(topic, "a", "{\"n\":1}"),
            Events.routed(topic, "b", "{\"n\":2}"),
            Events.routed(topic, "a", "{\"n\":3}"));

    SinkTransaction outcome =
        sink.publish(0, batch, ledgerOf(batch)).toCompletableFuture().get(30, TimeUnit.SECONDS);

    assertThat(outcome).isInstanceOf(SinkTransaction.Committed.class);
    long offset = ((SinkTransaction.Committed) outcome).position().offset();
    assertThat(KafkaTestSupport.readToEnd(Services.kafkaBootstrap(), topic, READ)).hasSize(3);
    List<LedgerEntry> entries = sink.readLedger(Map.of(), READ).entries();
    assertThat(entries).hasSize(1);
    assertThat(entries.get(0).position().partition()).isZero();
    assertThat(entries.get(0).position().offset()).isEqualTo(offset);
    assertThat(entries.get(0).record().events())
        .extracting(LedgerRecord.Event::eventId)
        .containsExactly(
            batch.get(0).event().eventId(),
            batch.get(1).event().eventId(),
            batch.get(2).event().eventId());
    assertThat(sink.readLedger(Map.of(0, offset), READ).entries())
        .as("past the watermark")
        .isEmpty();
  }

  @Test
  void theInstanceThatTakesOverFencesTheOldOne() throws Exception {
    KafkaTestSupport.createTopic(topic, 3);
    ExactlyOnceKafkaSink zombie = sink("");
    zombie.fence(List.of(0));
    ExactlyOnceKafkaSink successor = sink("");
    successor.fence(List.of(0));
    List<RoutedEvent> batch = List.of(Events.routed(topic, "a", "{\"from\":\"zombie\"}"));

    SinkTransaction outcome =
        zombie.publish(0, batch, ledgerOf(batch)).toCompletableFuture().get(30, TimeUnit.SECONDS);

    assertThat(outcome).isInstanceOf(SinkTransaction.Fenced.class);
    assertThat(KafkaTestSupport.readToEnd(Services.kafkaBootstrap(), topic, READ)).isEmpty();
    assertThat(successor.readLedger(Map.of(), READ).entries()).isEmpty();
    // The fenced instance stays fenced until it registers again (a new activation).
    assertThat(zombie.publish(0, batch, ledgerOf(batch)).toCompletableFuture().get())
        .isInstanceOf(SinkTransaction.Fenced.class);
  }

  /**
   * Issue #30 point 4: an instance on 4 lanes is frozen inside lane 3's commit while one on 2 lanes
   * takes over. The new instance's activation fences the former lanes too (the ledger has a
   * partition for each), so the frozen commit fails when it wakes; on the code before only lanes 0
   * and 1 were fenced, and the woken instance committed a batch whose rows the new one publishes.
   */
  @Test
  void anActivationWithFewerLanesFencesTheFormerLanesToo() throws Exception {
    KafkaTestSupport.createTopic(topic, 3);
    CountDownLatch committing = new CountDownLatch(1);
    CountDownLatch wake = new CountDownLatch(1);
    KafkaClients.Factory freezesLane3InItsCommit =
        new KafkaClients.Factory() {
          @Override
          public Producer<String, byte[]> producer(Map<String, Object> config) {
            boolean lane3 = String.valueOf(config.get("transactional.id")).endsWith(".lane-3");
            return new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer()) {
              @Override
              public void commitTransaction() {
                if (lane3) {
                  committing.countDown();
                  try {
                    wake.await(60, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
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
    ExactlyOnceKafkaSink frozen = sink("", 4, freezesLane3InItsCommit);
    frozen.fence(List.of(0, 1, 2, 3));
    List<RoutedEvent> batch = List.of(Events.routed(topic, "a", "{\"from\":\"lane 3\"}"));
    CompletableFuture<SinkTransaction> commit =
        frozen
            .publish(
                3,
                batch,
                new LedgerRecord(3, "test", List.of(LedgerRecord.Event.of(batch.get(0).event()))))
            .toCompletableFuture();
    assertThat(committing.await(30, TimeUnit.SECONDS)).as("lane 3 inside its commit").isTrue();

    ExactlyOnceKafkaSink successor = sink("", 2, KafkaClients.KAFKA);
    successor.fence(List.of(0, 1));
    wake.countDown();

    assertThat(commit.get(60, TimeUnit.SECONDS))
        .as("the woken commit of a former lane")
        .isNotInstanceOf(SinkTransaction.Committed.class);
    assertThat(KafkaTestSupport.readToEnd(Services.kafkaBootstrap(), topic, READ)).isEmpty();
    assertThat(successor.readLedger(Map.of(), READ).entries()).isEmpty();
  }

  @Test
  void anEventKafkaRefusesAbortsTheTransactionWithThatEventAtFault() throws Exception {
    KafkaTestSupport.createTopic(topic, 3);
    ExactlyOnceKafkaSink sink = sink("producer { \"max.request.size\" = 20000 }");
    sink.fence(List.of(0));
    List<RoutedEvent> batch =
        List.of(
            Events.routed(topic, "a", "{\"n\":1}"),
            Events.routed(topic, "b", "{\"big\":\"" + "x".repeat(50_000) + "\"}"),
            Events.routed(topic, "c", "{\"n\":3}"));

    SinkTransaction outcome =
        sink.publish(0, batch, ledgerOf(batch)).toCompletableFuture().get(30, TimeUnit.SECONDS);

    assertThat(outcome).isInstanceOf(SinkTransaction.Aborted.class);
    List<Verdict> verdicts = ((SinkTransaction.Aborted) outcome).verdicts();
    assertThat(verdicts).hasSize(3);
    assertThat(verdicts.get(0).isPublished())
        .as("rolled back, not at fault: %s", verdicts)
        .isTrue();
    assertThat(verdicts.get(1).outcome()).isEqualTo(Verdict.Outcome.PERMANENT);
    assertThat(verdicts.get(2).isPublished()).isTrue();
    assertThat(KafkaTestSupport.readToEnd(Services.kafkaBootstrap(), topic, READ))
        .as("nothing of an aborted transaction is read_committed")
        .isEmpty();
    List<RoutedEvent> rest = List.of(batch.get(0), batch.get(2));
    assertThat(sink.publish(0, rest, ledgerOf(rest)).toCompletableFuture().get())
        .as("the producer goes on after an abort")
        .isInstanceOf(SinkTransaction.Committed.class);
    assertThat(KafkaTestSupport.readToEnd(Services.kafkaBootstrap(), topic, READ)).hasSize(2);
  }

  @Test
  void aLedgerThatIsGoneOrCompactedIsRefused() throws Exception {
    ExactlyOnceKafkaSink sink = sink("");
    assertThatThrownBy(() -> sink.readLedger(Map.of(0, 41L), READ).entries())
        .isInstanceOf(LedgerException.class)
        .hasMessageContaining("deleted or recreated")
        .hasMessageContaining("_relay_ledger");

    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, Services.kafkaBootstrap()))) {
      admin
          .createTopics(
              List.of(
                  new NewTopic(ledger, 4, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
          .all()
          .get(30, TimeUnit.SECONDS);
    }
    assertThatThrownBy(() -> sink.fence(List.of(0)))
        .isInstanceOf(LedgerException.class)
        .hasMessageContaining("cleanup.policy=compact");
  }

  /**
   * Issue #30 point 4: after the last settled record, the ledger partition holds only an aborted
   * transaction. The read reports the partition decided past it; once retention deletes it, a read
   * from the old watermark is refused (unsettled records lost, the activation exits), while one
   * from the watermark moved to what the read reported goes on (LedgerRecoveryTest moves it).
   */
  @Test
  void aLedgerTailOfAbortedTransactionsIsReportedDecided() throws Exception {
    KafkaTestSupport.createTopic(topic, 3);
    ExactlyOnceKafkaSink sink = sink("");
    sink.fence(List.of(0, 1, 2, 3));
    List<RoutedEvent> batch = List.of(Events.routed(topic, "a", "{\"n\":1}"));
    SinkTransaction committed =
        sink.publish(0, batch, ledgerOf(batch)).toCompletableFuture().get(30, TimeUnit.SECONDS);
    long settled = ((SinkTransaction.Committed) committed).position().offset();
    try (KafkaProducer<String, byte[]> other =
        new KafkaProducer<>(
            Map.of(
                "bootstrap.servers",
                Services.kafkaBootstrap(),
                "transactional.id",
                topic + ".aborting"),
            new StringSerializer(),
            new ByteArraySerializer())) {
      other.initTransactions();
      other.beginTransaction();
      other.send(new ProducerRecord<>(ledger, 0, "lane-0", new byte[] {1})).get();
      other.abortTransaction();
    }

    LedgerRead read = sink.readLedger(Map.of(0, settled), READ);
    assertThat(read.entries()).isEmpty();
    long decided = read.decidedTo().get(0);
    assertThat(decided).as("past the aborted record and its marker").isEqualTo(settled + 4);

    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, Services.kafkaBootstrap()))) {
      admin
          .deleteRecords(
              Map.of(new TopicPartition(ledger, 0), RecordsToDelete.beforeOffset(decided)))
          .all()
          .get(30, TimeUnit.SECONDS);
    }
    assertThatThrownBy(() -> sink.readLedger(Map.of(0, settled), READ))
        .isInstanceOf(LedgerException.class)
        .hasMessageContaining("expired");
    assertThat(sink.readLedger(Map.of(0, decided - 1), READ).entries()).isEmpty();
  }

  /**
   * Issue #30 point 1: lane 0 aborted a hanging transaction that the broker had decided apart from
   * its ledger record (scripted: the check's answer says so), so its records past the watermark
   * must not be trusted. On the code before that was a flag in memory, taken by the first read of
   * the ledger: a second read (another lane's in-doubt recovery) or a fresh instance trusted the
   * record again and would settle its events as published although they were aborted elsewhere. Now
   * a distrust marker in the ledger makes every read drop them.
   */
  @Test
  void aRecordTheLaneDistrustsIsDroppedByEveryLaterReadAndByAFreshInstance() throws Exception {
    ApartOnce hanging = new ApartOnce();
    ExactlyOnceKafkaSink sink = committedOnLane0(hanging);

    hanging.apart.set(true);
    sink.fenceInDoubt(0); // lane 0's in-doubt recovery: its hanging check finds one apart
    assertThat(sink.readLedger(Map.of(), READ).entries()).as("the first read").isEmpty();
    assertThat(sink.readLedger(Map.of(), READ).entries())
        .as("a second read, as another lane's")
        .isEmpty();
    ExactlyOnceKafkaSink fresh = sink("");
    fresh.fence(List.of(0, 1, 2, 3));
    assertThat(fresh.readLedger(Map.of(), READ).entries()).as("a fresh instance's").isEmpty();

    List<RoutedEvent> next = List.of(Events.routed(topic, "a", "{\"n\":2}"));
    assertThat(
            fresh.publish(0, next, ledgerOf(next)).toCompletableFuture().get(30, TimeUnit.SECONDS))
        .isInstanceOf(SinkTransaction.Committed.class);
    assertThat(fresh.readLedger(Map.of(), READ).entries())
        .as("a record after the marker is trusted")
        .hasSize(1);
  }

  /**
   * Issue #30 point 3: a partition of a topic the pipeline never wrote does not answer the check
   * for hanging transactions (as when its only replica is offline). On the code before, the check
   * waited for it until its timeout and failed, and so did every activation: the exactly-once
   * pipeline stayed stopped. Now it is left unchecked after a short bound, with a WARN; a partition
   * of the lane's own topics that does not answer still stops the lane (an outage).
   */
  @Test
  void aSilentPartitionOfAnUnrelatedTopicDoesNotStopTheActivation() throws Exception {
    KafkaTestSupport.createTopic(topic, 3);
    String unrelated = KafkaTestSupport.uniqueTopic("eos.unrelated");
    KafkaTestSupport.createTopic(unrelated, 1);
    KafkaClients.Factory silentUnrelated =
        withAdmin(config -> new SilentPartitionsAdmin(config, tp -> tp.topic().equals(unrelated)));
    ExactlyOnceKafkaSink sink = sink("", 4, silentUnrelated);
    long started = System.nanoTime();
    sink.fence(List.of(0, 1, 2, 3));
    long fenceMillis = (System.nanoTime() - started) / 1_000_000;
    System.out.printf("ExactlyOnceKafkaSinkIT: activation fenced in %d ms%n", fenceMillis);
    List<RoutedEvent> batch = List.of(Events.routed(topic, "a", "{\"n\":1}"));
    assertThat(
            sink.publish(0, batch, ledgerOf(batch)).toCompletableFuture().get(30, TimeUnit.SECONDS))
        .isInstanceOf(SinkTransaction.Committed.class);
    assertThat(KafkaTestSupport.readToEnd(Services.kafkaBootstrap(), topic, READ)).hasSize(1);
  }

  /**
   * Issue #30 point 3: an activation looks for hanging transactions on every partition (what an
   * earlier instance wrote with the lane's id is unknown); a lane's fence after its own transaction
   * ended in doubt looks only at its ledger partition and the partitions of the topics it wrote. On
   * the code before, every fence listed the cluster's topics and asked all their partitions.
   */
  @Test
  void anInDoubtFenceChecksOnlyWhatTheLaneWrote() throws Exception {
    KafkaTestSupport.createTopic(topic, 3);
    String unrelated = KafkaTestSupport.uniqueTopic("eos.unrelated");
    KafkaTestSupport.createTopic(unrelated, 2);
    List<RecordingAdmin> admins = new java.util.concurrent.CopyOnWriteArrayList<>();
    KafkaClients.Factory recording =
        withAdmin(
            config -> {
              RecordingAdmin admin = new RecordingAdmin(config);
              admins.add(admin);
              return admin;
            });
    ExactlyOnceKafkaSink sink = sink("", 2, recording);
    sink.fence(List.of(0, 1));
    assertThat(admins).hasSize(1);
    RecordingAdmin admin = admins.get(0);
    assertThat(admin.describedProducers)
        .as("the activation's check")
        .contains(new TopicPartition(unrelated, 0), new TopicPartition(unrelated, 1));
    List<RoutedEvent> batch = List.of(Events.routed(topic, "a", "{\"n\":1}"));
    assertThat(
            sink.publish(0, batch, ledgerOf(batch)).toCompletableFuture().get(30, TimeUnit.SECONDS))
        .isInstanceOf(SinkTransaction.Committed.class);
    admin.clear();

    sink.fenceInDoubt(0);

    assertThat(admin.topicListings).as("topic listings").hasValue(0);
    assertThat(Set.copyOf(admin.describedProducers))
        .as("the in-doubt fence's check")
        .containsExactlyInAnyOrder(
            new TopicPartition(topic, 0),
            new TopicPartition(topic, 1),
            new TopicPartition(topic, 2),
            new TopicPartition(ledger, 0));
    List<RoutedEvent> next = List.of(Events.routed(topic, "a", "{\"n\":2}"));
    assertThat(
            sink.publish(0, next, ledgerOf(next)).toCompletableFuture().get(30, TimeUnit.SECONDS))
        .isInstanceOf(SinkTransaction.Committed.class);
  }

  /**
   * Issue #30 point 1, the order of the two steps: a hanging transaction decided apart from its
   * ledger record is aborted only once the distrust marker is in the ledger. Here the check finds
   * one (scripted) and the process dies right after the abort (the scripted abort throws once it is
   * done). A fresh instance must not trust the record: its events were aborted elsewhere. With the
   * order of before (abort, then marker) nothing was written before the crash, the fresh instance
   * trusted the record and would have settled its events as published: lost.
   */
  @Test
  void aCrashRightAfterAbortingAHangingTransactionApartLeavesTheRecordDistrusted()
      throws Exception {
    ApartOnce hanging = new ApartOnce();
    ExactlyOnceKafkaSink sink = committedOnLane0(hanging);

    hanging.apart.set(true);
    hanging.crashAfterAbort.set(true);
    assertThatThrownBy(() -> sink.fenceInDoubt(0)).hasMessageContaining("died after the abort");

    ExactlyOnceKafkaSink fresh = sink("");
    fresh.fence(List.of(0, 1, 2, 3));
    assertThat(fresh.readLedger(Map.of(), READ).entries())
        .as("a fresh instance's read after the crash")
        .isEmpty();
  }

  /** A sink on 4 lanes whose checks {@code hanging} scripts, with one batch committed on lane 0. */
  private ExactlyOnceKafkaSink committedOnLane0(ApartOnce hanging) throws Exception {
    KafkaTestSupport.createTopic(topic, 3);
    ExactlyOnceKafkaSink sink = sink("", 4, KafkaClients.KAFKA, hanging::over);
    sink.fence(List.of(0, 1, 2, 3));
    List<RoutedEvent> batch = List.of(Events.routed(topic, "a", "{\"n\":1}"));
    assertThat(
            sink.publish(0, batch, ledgerOf(batch)).toCompletableFuture().get(30, TimeUnit.SECONDS))
        .isInstanceOf(SinkTransaction.Committed.class);
    return sink;
  }

  /**
   * Real checks for hanging transactions, except that the next one after {@link #apart} is set also
   * finds a transaction open on partition 1 of the events' topic and not on the ledger (a producer
   * id no lane has): one the broker decided apart from its ledger record. Aborting it is a no-op;
   * after {@link #crashAfterAbort} is set, the next abort throws once it is done, as a process that
   * dies right there.
   */
  private final class ApartOnce {
    static final long SCRIPTED_ID = 999_999_999L;
    final AtomicBoolean apart = new AtomicBoolean();
    final AtomicBoolean crashAfterAbort = new AtomicBoolean();

    HangingTransactions over(KafkaClients clients, KafkaSinkSettings settings) {
      return new HangingTransactions("p", clients, settings.ledgerTopic(), Ticker.SYSTEM) {
        @Override
        Found find(
            String transactionalId,
            TopicPartition ledgerPartition,
            Set<Long> earlier,
            Set<String> written,
            boolean everywhere,
            Duration timeout) {
          Found found =
              super.find(transactionalId, ledgerPartition, earlier, written, everywhere, timeout);
          if (!apart.getAndSet(false)) {
            return found;
          }
          List<BatchFate.Hanging> more = new ArrayList<>(found.hanging());
          more.add(new BatchFate.Hanging(new TopicPartition(topic, 1), SCRIPTED_ID, 0));
          return found.withHanging(more);
        }

        @Override
        List<TopicPartition> abortAll(Found found, Duration timeout) {
          List<BatchFate.Hanging> real =
              found.hanging().stream().filter(h -> h.producerId() != SCRIPTED_ID).toList();
          List<TopicPartition> aborted = super.abortAll(found.withHanging(real), timeout);
          if (crashAfterAbort.getAndSet(false)) {
            throw new IllegalStateException("scripted: the process died after the abort");
          }
          return aborted;
        }
      };
    }
  }
}
