package io.outbox.relay.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The spans of {@link EventTracing}, exported to a list; and that off leaves events untouched. */
class EventTracingTest {
  private static final String APP_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String APP_SPAN = "00f067aa0ba902b7";
  private static final String APP_TRACEPARENT = "00-" + APP_TRACE + "-" + APP_SPAN + "-01";

  private final SpanRecorder recorder = new SpanRecorder();
  private final List<SpanData> exported = recorder.spans();
  private final EventTracing tracing = recorder.tracing("orders", "kafka");

  @AfterEach
  void close() {
    recorder.close();
  }

  static OutboxEvent traced(long id, Map<String, String> headers) {
    return Events.event(id, "k" + id, 0, headers);
  }

  @Test
  void publishSpanIsAChildOfTheRowsContextAndTheMessageCarriesItsOwn() {
    OutboxEvent event =
        traced(1, Map.of("traceparent", APP_TRACEPARENT, "tracestate", "app=1", "seq", "1"));
    EventTracing.Wave wave =
        tracing.publishing(List.of(new RoutedEvent(event, "outbox.order", Map.of("x", "y"))));
    wave.answered(List.of(Verdict.published()));

    SpanData span = exported.get(0);
    assertThat(span.getName()).isEqualTo("publish outbox.order");
    assertThat(span.getKind()).isEqualTo(SpanKind.PRODUCER);
    assertThat(span.getTraceId()).isEqualTo(APP_TRACE);
    assertThat(span.getParentSpanId()).isEqualTo(APP_SPAN);
    assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    assertThat(span.getAttributes().get(AttributeKey.stringKey("messaging.system")))
        .isEqualTo("kafka");
    assertThat(span.getAttributes().get(AttributeKey.stringKey("messaging.destination.name")))
        .isEqualTo("outbox.order");
    assertThat(span.getAttributes().get(AttributeKey.stringKey("messaging.message.id")))
        .isEqualTo(event.eventId().toString());
    assertThat(span.getAttributes().get(AttributeKey.stringKey("outbox.aggregate.id")))
        .isEqualTo("k1");

    Map<String, String> sent = wave.routed().get(0).extraHeaders();
    assertThat(sent)
        .containsEntry("x", "y")
        .containsEntry("traceparent", "00-" + APP_TRACE + "-" + span.getSpanId() + "-01")
        .containsEntry("tracestate", "app=1");
  }

  @Test
  void rowWithoutContextStartsATraceAndAFailedVerdictIsAnError() {
    EventTracing.Wave wave =
        tracing.publishing(List.of(new RoutedEvent(traced(1, Map.of()), "outbox.order")));
    wave.answered(List.of(Verdict.permanent("too large")));

    SpanData span = exported.get(0);
    assertThat(span.getParentSpanContext().isValid()).isFalse();
    assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(span.getStatus().getDescription()).isEqualTo("too large");
    assertThat(span.getAttributes().get(AttributeKey.stringKey("outbox.verdict")))
        .isEqualTo("permanent");
    assertThat(wave.routed().get(0).extraHeaders().get("traceparent"))
        .contains(span.getTraceId())
        .contains(span.getSpanId());
  }

  @Test
  void abandonedWaveEndsEverySpanAsFailed() {
    EventTracing.Wave wave =
        tracing.publishing(
            List.of(
                new RoutedEvent(traced(1, Map.of()), "t"),
                new RoutedEvent(traced(2, Map.of()), "t")));
    assertThat(exported).isEmpty(); // not ended before the verdicts
    wave.failed("abandoned before the sink answered");
    assertThat(exported)
        .hasSize(2)
        .allMatch(s -> s.getStatus().getStatusCode() == StatusCode.ERROR);
  }

  @Test
  void claimSpanLinksToItsEventsContextsUpToTheCap() {
    List<OutboxEvent> events = new ArrayList<>();
    events.add(traced(0, Map.of())); // no context: not linked
    IntStream.rangeClosed(1, EventTracing.MAX_LINKS + 3)
        .forEach(i -> events.add(traced(i, Map.of("traceparent", APP_TRACEPARENT))));
    tracing.claimed(2, events, Instant.now().minusMillis(5));

    SpanData claim = exported.get(0);
    assertThat(claim.getName()).isEqualTo("claim orders");
    assertThat(claim.getKind()).isEqualTo(SpanKind.INTERNAL);
    assertThat(claim.getParentSpanContext().isValid()).isFalse();
    assertThat(claim.getLinks()).hasSize(EventTracing.MAX_LINKS);
    assertThat(claim.getLinks().get(0).getSpanContext().getSpanId()).isEqualTo(APP_SPAN);
    assertThat(claim.getAttributes().get(AttributeKey.longKey("outbox.claim.unlinked_events")))
        .isEqualTo(3L);
    assertThat(claim.getAttributes().get(AttributeKey.longKey("messaging.batch.message_count")))
        .isEqualTo((long) events.size());
  }

  @Test
  void offHandsTheSinkTheEventsAsTheyAre() {
    List<RoutedEvent> routed =
        List.of(new RoutedEvent(traced(1, Map.of("traceparent", APP_TRACEPARENT)), "t"));
    EventTracing.Wave wave = EventTracing.off().publishing(routed);
    assertThat(wave.routed()).isSameAs(routed);
    wave.answered(List.of(Verdict.published()));
    EventTracing.off().claimed(0, List.of(traced(1, Map.of())), Instant.now());
    assertThat(exported).isEmpty();
  }
}
