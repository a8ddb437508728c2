package io.outbox.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.pipeline.RetryPolicy;
import io.outbox.relay.pipeline.SettlementPlanner;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Verdict;
import io.outbox.testkit.TestEvents;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

class LaneBatchTest {

  private static final SettlementPlanner PLANNER =
      new SettlementPlanner(
          3,
          new RetryPolicy(
              new PipelineSettings.Backoff(Duration.ofSeconds(1), Duration.ofMinutes(1), 2.0, 0.0),
              () -> 0.5));

  /** Keys a, b, a, a, c: without a transaction per batch, a's events go one per wave. */
  private static LaneBatch batch(boolean oneEventOfAKeyPerWave) {
    List<OutboxEvent> events =
        List.of(event(1, "a"), event(2, "b"), event(3, "a"), event(4, "a"), event(5, "c"));
    LaneBatch batch = new LaneBatch(0, claim(events));
    for (OutboxEvent e : events) {
      batch.toSend(e, OutboxRecords.toRecord("p", 0, "t", e, ""));
    }
    batch.plan(oneEventOfAKeyPerWave);
    return batch;
  }

  @Test
  void aKeysNextEventGoesOnlyOnceThePreviousOneWasAcknowledged() {
    LaneBatch batch = batch(true);
    assertThat(ids(batch.nextWave())).containsExactly(1L, 2L, 5L);
    assertThat(batch.nextWaveDue()).isFalse();
    assertThat(batch.nextWave()).isEmpty(); // the wave is not answered yet
    batch.published(1);
    batch.published(2);
    assertThat(batch.nextWaveDue()).isFalse();
    batch.published(5);
    assertThat(ids(batch.nextWave())).containsExactly(3L);
    batch.published(3);
    assertThat(ids(batch.nextWave())).containsExactly(4L);
    assertThat(batch.answered()).isFalse();
    batch.published(4);
    assertThat(batch.complete()).isTrue();
    assertThat(batch.settlements(PLANNER)).allMatch(s -> s instanceof Settlement.Published);
  }

  @Test
  void aRecordTheWorkerGaveUpHoldsBackItsKeysLaterEventsWhichAreNotSent() {
    LaneBatch batch = batch(true);
    batch.nextWave();
    batch.failed(1, "refused");
    batch.published(2);
    batch.published(5);
    // a's later events (3, 4) are held back: nothing more to send, the batch is answered.
    assertThat(batch.nextWave()).isEmpty();
    assertThat(batch.complete()).isTrue();
    List<Settlement> s = batch.settlements(PLANNER);
    assertThat(s.get(0)).isInstanceOf(Settlement.Retry.class);
    assertThat(((Settlement.Retry) s.get(0)).attempts()).isEqualTo(1);
    assertThat(s.get(1)).isInstanceOf(Settlement.Published.class);
    assertThat(s.get(2)).isInstanceOf(Settlement.Release.class);
    assertThat(s.get(3)).isInstanceOf(Settlement.Release.class);
    assertThat(s.get(4)).isInstanceOf(Settlement.Published.class);
  }

  @Test
  void withATransactionPerBatchTheBatchIsOneWave() {
    LaneBatch batch = batch(false);
    assertThat(ids(batch.nextWave())).containsExactly(1L, 2L, 3L, 4L, 5L);
    List.of(1L, 2L, 3L, 4L, 5L).forEach(batch::published);
    assertThat(batch.complete()).isTrue();
  }

  @Test
  void stoppingReleasesTheWavesNotHandedOut() {
    LaneBatch batch = batch(true);
    batch.nextWave();
    batch.giveUpTheRemainingWaves();
    assertThat(batch.answered()).isFalse(); // the first wave is still with the worker
    List.of(1L, 2L, 5L).forEach(batch::published);
    assertThat(batch.complete()).isTrue();
    assertThat(batch.settlements(PLANNER))
        .extracting(s -> s.getClass().getSimpleName())
        .containsExactly("Published", "Published", "Release", "Release", "Published");
  }

  @Test
  void eventsJudgedAtClaimAreSettledWithTheRestAndTheirDeadLettersCopiedOnce() {
    List<OutboxEvent> events = List.of(event(1, "a"), event(2, "b"), event(3, "c"));
    LaneBatch batch = new LaneBatch(0, claim(events));
    batch.judged(events.get(0), Verdict.permanent("invalid topic name"));
    batch.judged(events.get(1), Verdict.published()); // in Kafka already
    batch.toSend(events.get(2), OutboxRecords.toRecord("p", 0, "t", events.get(2), ""));
    batch.plan(true);
    assertThat(ids(batch.nextWave())).containsExactly(3L);
    batch.published(3);
    List<Settlement> s = batch.settlements(PLANNER);
    assertThat(s.get(0)).isInstanceOf(Settlement.DeadLetter.class);
    assertThat(s.subList(1, 3)).allMatch(x -> x instanceof Settlement.Published);
    assertThat(batch.hasUncopiedDeadLetters()).isTrue();
    assertThat(batch.takeUncopiedDeadLetters()).hasSize(1);
    assertThat(batch.hasUncopiedDeadLetters()).isFalse();
    batch.settlements(PLANNER); // planned once: no second copy
    assertThat(batch.hasUncopiedDeadLetters()).isFalse();
  }

  @Test
  void anAnswerForARecordNotSentOrAnsweredAlreadyIsIgnored() {
    LaneBatch batch = batch(true);
    batch.nextWave();
    batch.published(3); // not handed out yet
    batch.published(1);
    batch.failed(1, "late"); // answered already
    batch.published(2);
    batch.published(5);
    assertThat(ids(batch.nextWave())).containsExactly(3L);
  }

  private static List<Long> ids(List<SourceRecord> records) {
    return records.stream().map(OutboxRecords::id).toList();
  }

  private static OutboxEvent event(long id, String key) {
    return TestEvents.event(id, key);
  }

  private static Claim claim(List<OutboxEvent> events) {
    return new Claim() {
      @Override
      public List<OutboxEvent> events() {
        return events;
      }

      @Override
      public Settled settle(List<Settlement> settlements) {
        throw new UnsupportedOperationException();
      }

      @Override
      public void release() {}
    };
  }
}
