package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.SinkTransaction;
import io.outbox.relay.spi.Ticker;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.junit.jupiter.api.Test;

/**
 * The lane's transactions against a mock producer and scripted answers of the coordinator ({@link
 * HangingTransactions}): the model of transaction protocol v2 (KIP-890) these tests script is the
 * broker's, as documented there: the epoch is bumped at the end of every transaction, and when it
 * runs out the coordinator hands the transactional id a new producer id, at epoch 0.
 */
class TransactionalLaneTest {

  /** The coordinator's answers, in order, and the producer ids the commit check was asked for. */
  private static final class ScriptedCoordinator extends HangingTransactions {
    final Deque<Identity> answers = new ArrayDeque<>();
    final List<Long> checkedCommitsOf = new CopyOnWriteArrayList<>();

    ScriptedCoordinator() {
      super("p", null, "ledger", Ticker.SYSTEM);
    }

    @Override
    Found find(
        String transactionalId,
        TopicPartition ledger,
        Set<Long> earlier,
        Set<String> written,
        boolean everywhere,
        Duration t) {
      Identity now = answers.removeFirst();
      return Found.none(now.producerId(), now.producerEpoch());
    }

    @Override
    List<TopicPartition> abortAll(Found found, Duration timeout) {
      return List.of();
    }

    @Override
    Identity current(String transactionalId, Duration timeout) {
      return answers.removeFirst();
    }

    @Override
    boolean markersWritten(long producerId, Map<TopicPartition, Long> written, Duration timeout) {
      checkedCommitsOf.add(producerId);
      return true;
    }
  }

  /**
   * Issue #30 point 5: registered at epoch 32,740 of producer id 7, the lane's transactions reach
   * the id's last epochs; before the first one that may be among them it asks the coordinator,
   * which by then has handed out id 8, and the commit check looks for 8 from there on. On the code
   * before, every commit was checked for id 7, which after the change has no transaction open
   * anywhere: the check answered "written" at once, whatever the broker did with the markers.
   */
  @Test
  void theCommitCheckFollowsTheProducerIdTheCoordinatorHandsOutWhenTheEpochsRunOut()
      throws Exception {
    ScriptedCoordinator coordinator = new ScriptedCoordinator();
    coordinator.answers.add(new HangingTransactions.Identity(7, 32_740)); // at registration
    coordinator.answers.add(new HangingTransactions.Identity(8, 0)); // asked later
    TransactionalLane lane = lane(new FakeClients(true), coordinator);
    try {
      lane.fence(Duration.ofSeconds(5), true);
      int margin = Short.MAX_VALUE - ProducerIdentity.EPOCH_MARGIN - 32_740; // 11
      for (int i = 0; i < margin + 3; i++) {
        SinkTransaction t = lane.publish(List.of(event(i)), ledger()).get();
        assertThat(t).isInstanceOf(SinkTransaction.Committed.class);
      }
    } finally {
      lane.close(Duration.ofSeconds(1));
    }
    assertThat(coordinator.checkedCommitsOf.subList(0, 11)).containsOnly(7L);
    assertThat(coordinator.checkedCommitsOf.subList(11, 14)).containsOnly(8L);
    assertThat(coordinator.answers).isEmpty();
  }

  /**
   * Issue #30 point 2: a producer dropped after a failure (here: a commit that timed out and an
   * abort that failed) is not registered again by the lane's next transaction, which ends in doubt
   * instead: only the pipeline's in-doubt path registers it, once the database confirmed the lease.
   * On the code before, the next transaction registered a new producer on its own, fencing the
   * instance that may have taken over meanwhile.
   */
  @Test
  void aProducerDroppedAfterAFailureIsRegisteredAgainOnlyThroughTheFence() throws Exception {
    ScriptedCoordinator coordinator = new ScriptedCoordinator();
    coordinator.answers.add(new HangingTransactions.Identity(7, 0));
    coordinator.answers.add(new HangingTransactions.Identity(7, 2)); // the second fence
    FakeClients clients = new FakeClients(true);
    TransactionalLane lane =
        laneWhoseNextCommitTimesOut(clients, coordinator, new KafkaException("abort failed"));
    try {
      SinkTransaction first = lane.publish(List.of(event(1)), ledger()).get();
      assertThat(first).isInstanceOf(SinkTransaction.Failed.class);
      assertThat(((SinkTransaction.Failed) first).inDoubt()).isTrue();

      SinkTransaction next = lane.publish(List.of(event(2)), ledger()).get();
      assertThat(next).isInstanceOf(SinkTransaction.Failed.class);
      assertThat(((SinkTransaction.Failed) next).inDoubt()).isTrue();
      assertThat(((SinkTransaction.Failed) next).error()).contains("confirmed the lease");
      assertThat(clients.producers).as("no producer registered by a transaction").hasSize(1);

      lane.fence(Duration.ofSeconds(5), false); // the in-doubt path, once the lease is confirmed
      assertThat(clients.producers).hasSize(2);
      assertThat(lane.publish(List.of(event(3)), ledger()).get())
          .isInstanceOf(SinkTransaction.Committed.class);
    } finally {
      lane.close(Duration.ofSeconds(1));
    }
  }

  /**
   * Issue #30 point 1: a batch whose commit ended in doubt is decided after the next fence, by what
   * the check finds (here nothing hanging: the coordinator decided it) and then by the ledger.
   */
  @Test
  void aBatchInDoubtIsDecidedByTheFenceAndThenByTheLedger() throws Exception {
    ScriptedCoordinator coordinator = new ScriptedCoordinator();
    coordinator.answers.add(new HangingTransactions.Identity(7, 0));
    coordinator.answers.add(new HangingTransactions.Identity(7, 2));
    coordinator.answers.add(new HangingTransactions.Identity(7, 4));
    FakeClients clients = new FakeClients(true);
    TransactionalLane lane =
        laneWhoseNextCommitTimesOut(clients, coordinator, new KafkaException("abort failed"));
    LedgerTopic.Read nothing =
        new LedgerTopic.Read(new io.outbox.relay.spi.LedgerRead(List.of(), Map.of()), Set.of());
    try {
      lane.publish(List.of(event(1)), ledger()).get();
      assertThat(lane.lastBatch()).isEqualTo(BatchFate.State.IN_DOUBT);
      lane.fence(Duration.ofSeconds(5), false);
      assertThat(lane.lastBatch()).as("nothing of it hangs").isEqualTo(BatchFate.State.DECIDED);
      lane.ledgerRead(nothing, Map.of(0, Long.MAX_VALUE)); // settled already: it was committed
      assertThat(lane.lastBatch()).isEqualTo(BatchFate.State.COMMITTED);

      clients.last().commitTransactionException =
          new org.apache.kafka.common.errors.TimeoutException("commit timed out");
      clients.last().abortTransactionException = new KafkaException("abort failed");
      lane.publish(List.of(event(2)), ledger()).get();
      lane.fence(Duration.ofSeconds(5), false);
      lane.ledgerRead(nothing, Map.of()); // not in the ledger: aborted
      assertThat(lane.lastBatch()).isEqualTo(BatchFate.State.ABORTED);
    } finally {
      lane.close(Duration.ofSeconds(1));
    }
  }

  /** An abort refused because another instance fenced the producer: the lane stands down. */
  @Test
  void anAbortRefusedAsFencedStandsTheLaneDown() throws Exception {
    ScriptedCoordinator coordinator = new ScriptedCoordinator();
    coordinator.answers.add(new HangingTransactions.Identity(7, 0));
    FakeClients clients = new FakeClients(true);
    TransactionalLane lane =
        laneWhoseNextCommitTimesOut(
            clients, coordinator, new ProducerFencedException("another instance registered"));
    try {
      lane.publish(List.of(event(1)), ledger()).get();
      assertThat(lane.publish(List.of(event(2)), ledger()).get())
          .isInstanceOf(SinkTransaction.Fenced.class);
      assertThat(clients.producers).hasSize(1);
    } finally {
      lane.close(Duration.ofSeconds(1));
    }
  }

  /** A registered lane whose next commit times out, and whose abort then fails so. */
  private static TransactionalLane laneWhoseNextCommitTimesOut(
      FakeClients clients, HangingTransactions coordinator, RuntimeException abortFailure) {
    TransactionalLane lane = lane(clients, coordinator);
    lane.fence(Duration.ofSeconds(5), true);
    clients.last().commitTransactionException =
        new org.apache.kafka.common.errors.TimeoutException("commit timed out");
    clients.last().abortTransactionException = abortFailure;
    return lane;
  }

  private static TransactionalLane lane(FakeClients clients, HangingTransactions coordinator) {
    return new TransactionalLane(
        0,
        "p",
        "tx",
        Map.of("client.id", "test"),
        clients,
        "ledger",
        null,
        Duration.ofSeconds(5),
        coordinator,
        KafkaRecords.RELAY,
        Ticker.SYSTEM);
  }

  private static RoutedEvent event(int n) {
    return Events.routed("orders", "k" + n, "{\"n\":" + n + "}");
  }

  private static LedgerRecord ledger() {
    return new LedgerRecord(0, "claim", List.of());
  }
}
