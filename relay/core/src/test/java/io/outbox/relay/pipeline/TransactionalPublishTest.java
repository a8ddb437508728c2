package io.outbox.relay.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.SinkTransaction;
import io.outbox.relay.spi.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class TransactionalPublishTest {

  private static final String TOPIC = "orders";
  private static final String DEAD = "orders.dead";

  @Test
  void aPermanentFailureAbortsDeadLettersTheOffenderAndCommitsTheRestWithItsCopy()
      throws Exception {
    List<OutboxEvent> events =
        List.of(Events.event(1, "a"), Events.event(2, "b"), Events.event(3, "a"));
    ScriptedTransactionalSink sink = abortingFor(2, Verdict.permanent("too large"));
    Verdict[] verdicts = new Verdict[3];

    TransactionalPublish.Result result = publish(sink, events, verdicts);

    assertThat(result.ending()).isEqualTo(TransactionalPublish.Ending.DONE);
    assertThat(result.committed()).isEqualTo(new LedgerPosition(0, 1));
    assertThat(verdicts[0].isPublished()).isTrue();
    assertThat(verdicts[1].outcome()).isEqualTo(Verdict.Outcome.PERMANENT);
    assertThat(verdicts[2].isPublished()).isTrue();
    List<RoutedEvent> second = sink.transactions.get(1);
    assertThat(second)
        .extracting(r -> r.event().id() + "@" + r.destination())
        .containsExactly("1@orders", "3@orders", "2@orders.dead");
    assertThat(sink.ledgers.get(1).events())
        .extracting(LedgerRecord.Event::id)
        .containsExactly(1L, 3L);
  }

  @Test
  void aRetryableFailureHoldsBackTheKeysLaterEvents() throws Exception {
    List<OutboxEvent> events =
        List.of(Events.event(1, "a"), Events.event(2, "a"), Events.event(3, "b"));
    ScriptedTransactionalSink sink =
        new ScriptedTransactionalSink(
            batch ->
                batch.stream().anyMatch(r -> r.event().id() == 1)
                    ? aborted(batch, 1, Verdict.retryable("not enough replicas"))
                    : null);
    Verdict[] verdicts = new Verdict[3];

    publish(sink, events, verdicts);

    assertThat(verdicts[0].outcome()).isEqualTo(Verdict.Outcome.RETRYABLE);
    assertThat(verdicts[1].outcome()).isEqualTo(Verdict.Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts[1].error()).contains("held back");
    assertThat(verdicts[2].isPublished()).isTrue();
    assertThat(sink.transactions.get(1)).extracting(r -> r.event().id()).containsExactly(3L);
  }

  @Test
  void anAbortWithNoEventAtFaultIsSplitUntilTheOffenderIsAlone() throws Exception {
    List<OutboxEvent> events = new ArrayList<>();
    for (int i = 1; i <= 8; i++) {
      events.add(Events.event(i, "k" + i));
    }
    // Kafka aborts every transaction holding event 6 without naming it.
    ScriptedTransactionalSink sink =
        new ScriptedTransactionalSink(
            batch ->
                batch.stream().anyMatch(r -> r.event().id() == 6)
                    ? new SinkTransaction.Aborted(
                        java.util.Collections.nCopies(batch.size(), Verdict.published()))
                    : null);
    Verdict[] verdicts = new Verdict[8];

    TransactionalPublish.Result result = publish(sink, events, verdicts);

    assertThat(result.ending()).isEqualTo(TransactionalPublish.Ending.DONE);
    for (int i = 0; i < 8; i++) {
      assertThat(verdicts[i].outcome())
          .as("event " + (i + 1))
          .isEqualTo(i == 5 ? Verdict.Outcome.RETRYABLE : Verdict.Outcome.PUBLISHED);
    }
    // 8 -> [1-4 committed, 5-8 aborted] -> [5-6 aborted, 7-8 committed] -> [5, 6 alone]
    assertThat(sink.transactions).hasSize(7);
  }

  @Test
  void fencedAndInDoubtEndTheBatchWithoutVerdictsForTheRest() throws Exception {
    List<OutboxEvent> events = List.of(Events.event(1, "a"));
    Verdict[] verdicts = new Verdict[1];
    assertThat(
            publish(
                    new ScriptedTransactionalSink(b -> new SinkTransaction.Fenced("epoch")),
                    events,
                    verdicts)
                .ending())
        .isEqualTo(TransactionalPublish.Ending.FENCED);
    assertThat(verdicts[0]).isNull();
    assertThat(
            publish(
                    new ScriptedTransactionalSink(b -> new SinkTransaction.Failed("timeout", true)),
                    events,
                    verdicts)
                .ending())
        .isEqualTo(TransactionalPublish.Ending.IN_DOUBT);
    assertThat(verdicts[0]).isNull();
    TransactionalPublish.Result down =
        publish(
            new ScriptedTransactionalSink(b -> new SinkTransaction.Failed("down", false)),
            events,
            verdicts);
    assertThat(down.ending()).isEqualTo(TransactionalPublish.Ending.DONE);
    assertThat(verdicts[0].outcome()).isEqualTo(Verdict.Outcome.SINK_UNAVAILABLE);
  }

  @Test
  void eachTransactionsEventsHaveAPublishSpanEndedWithTheTransactionsOutcome() throws Exception {
    String app = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    List<OutboxEvent> events =
        List.of(
            EventTracingTest.traced(1, java.util.Map.of("traceparent", app)),
            EventTracingTest.traced(2, java.util.Map.of()));
    ScriptedTransactionalSink sink = abortingFor(2, Verdict.permanent("too large"));
    try (SpanRecorder recorder = new SpanRecorder()) {
      publish(sink, events, new Verdict[2], recorder.tracing("p", "kafka"));

      // First transaction [1, 2] aborted for 2; second [1, copy of 2] committed.
      assertThat(recorder.spans())
          .extracting(
              s ->
                  s.getName()
                      + " "
                      + s.getAttributes().get(AttributeKey.stringKey("outbox.verdict"))
                      + " "
                      + s.getStatus().getStatusCode())
          .containsExactly(
              "publish orders retryable ERROR",
              "publish orders permanent ERROR",
              "publish orders published UNSET",
              "publish orders.dead published UNSET");
      SpanData published = recorder.spans().get(2);
      assertThat(published.getParentSpanId()).isEqualTo("00f067aa0ba902b7");
      assertThat(sink.transactions.get(1).get(0).extraHeaders().get("traceparent"))
          .isEqualTo("00-4bf92f3577b34da6a3ce929d0e0e4736-" + published.getSpanId() + "-01");
    }
  }

  /**
   * A sink that aborts every transaction holding event {@code id} for its topic, with {@code v}.
   */
  private static ScriptedTransactionalSink abortingFor(long id, Verdict v) {
    return new ScriptedTransactionalSink(
        batch ->
            batch.stream().anyMatch(r -> r.event().id() == id && r.destination().equals(TOPIC))
                ? aborted(batch, id, v)
                : null);
  }

  private static SinkTransaction aborted(List<RoutedEvent> batch, long id, Verdict verdict) {
    List<Verdict> verdicts = new ArrayList<>();
    for (RoutedEvent r : batch) {
      verdicts.add(r.event().id() == id ? verdict : Verdict.published());
    }
    return new SinkTransaction.Aborted(verdicts);
  }

  private static TransactionalPublish.Result publish(
      ScriptedTransactionalSink sink, List<OutboxEvent> events, Verdict[] verdicts)
      throws Exception {
    return publish(sink, events, verdicts, EventTracing.off());
  }

  private static TransactionalPublish.Result publish(
      ScriptedTransactionalSink sink,
      List<OutboxEvent> events,
      Verdict[] verdicts,
      EventTracing tracing)
      throws Exception {
    SettlementPlanner planner =
        new SettlementPlanner(
            3,
            new RetryPolicy(
                new io.outbox.relay.config.PipelineSettings.Backoff(
                    Duration.ofSeconds(1), Duration.ofSeconds(10), 2.0, 0),
                () -> 0.5));
    String[] destinations = new String[events.size()];
    Arrays.fill(destinations, TOPIC);
    return new TransactionalPublish(
            sink, 0, new PipelineStats("p", new SimpleMeterRegistry()), MessageForm.PLAIN, tracing)
        .publish(
            "epoch 1",
            events,
            destinations,
            verdicts,
            new TransactionalPublish.Driver() {
              @Override
              public void started() {}

              @Override
              public SinkTransaction await(CompletableFuture<SinkTransaction> t) {
                return t.join();
              }

              @Override
              public Settlement planned(OutboxEvent event, Verdict verdict) {
                return planner.plan(List.of(event), List.of(verdict)).settlements().get(0);
              }

              @Override
              public RoutedEvent copyOf(Settlement.DeadLetter d) {
                return new RoutedEvent(d.event(), DEAD);
              }
            });
  }
}
