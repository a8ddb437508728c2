package io.outbox.relay.pipeline;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.support.RelayHeaders;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The one owner of a pipeline's OpenTelemetry spans ({@code outbox-relay.tracing}): a PRODUCER span
 * per event handed to the sink, child of the trace context in the row's {@code traceparent} and
 * {@code tracestate} headers, whose own context the message carries on in those headers; and an
 * INTERNAL span per claimed batch, linked to its events' contexts. {@link #off()} does nothing and
 * hands the sink the events as they are.
 */
public abstract class EventTracing {

  /** The W3C header of a trace context. */
  public static final String TRACEPARENT = "traceparent";

  /** The W3C header of vendor trace state. */
  public static final String TRACESTATE = "tracestate";

  /** At most so many events of a claim are linked from its span (OpenTelemetry's own default). */
  static final int MAX_LINKS = 128;

  private static final EventTracing OFF = new Off();

  EventTracing() {}

  /** Tracing off: no span, no header. */
  public static EventTracing off() {
    return OFF;
  }

  /**
   * Spans of pipeline {@code pipeline} made with {@code openTelemetry}.
   *
   * @param messagingSystem the {@code messaging.system} of its publish spans: the sink's type
   */
  public static EventTracing of(
      OpenTelemetry openTelemetry, String pipeline, String messagingSystem) {
    return new Spans(openTelemetry.getTracer("io.outbox.relay"), pipeline, messagingSystem);
  }

  /**
   * A lane claimed a non-empty batch: a span from {@code startedAt} to now, linked to the contexts
   * of (at most {@value #MAX_LINKS} of) its events.
   */
  abstract void claimed(int lane, List<OutboxEvent> events, Instant startedAt);

  /** Starts the publish span of each of {@code routed}, which are about to go to the sink. */
  abstract Wave publishing(List<RoutedEvent> routed);

  /** Events on their way to the sink, each with its publish span. */
  interface Wave {
    /** What to hand the sink: each event with its span's context in its extra headers. */
    List<RoutedEvent> routed();

    /** The sink's verdicts, one per event of {@link #routed()}; ends every span. */
    void answered(List<Verdict> verdicts);

    /** Every event was published (a transaction committed); ends every span. */
    void published();

    /** No verdict will come (abandoned, fenced, in doubt): ends every span as failed. */
    void failed(String error);

    /**
     * Ends every span with the sink's {@code verdicts}, or as failed when they are {@code null}
     * (the wait for them was abandoned); gives the verdicts back.
     */
    default List<Verdict> ended(List<Verdict> verdicts) {
      if (verdicts == null) {
        failed("abandoned before the sink answered");
      } else {
        answered(verdicts);
      }
      return verdicts;
    }
  }

  /** Tracing off. */
  private static final class Off extends EventTracing {
    @Override
    void claimed(int lane, List<OutboxEvent> events, Instant startedAt) {}

    @Override
    Wave publishing(List<RoutedEvent> routed) {
      return new Wave() {
        @Override
        public List<RoutedEvent> routed() {
          return routed;
        }

        @Override
        public void answered(List<Verdict> verdicts) {}

        @Override
        public void published() {}

        @Override
        public void failed(String error) {}
      };
    }
  }

  /** Tracing on. */
  private static final class Spans extends EventTracing {
    private static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("messaging.system");
    private static final AttributeKey<String> DESTINATION =
        AttributeKey.stringKey("messaging.destination.name");
    private static final AttributeKey<String> OPERATION_TYPE =
        AttributeKey.stringKey("messaging.operation.type");
    private static final AttributeKey<String> OPERATION_NAME =
        AttributeKey.stringKey("messaging.operation.name");
    private static final AttributeKey<String> MESSAGE_ID =
        AttributeKey.stringKey("messaging.message.id");
    private static final AttributeKey<Long> BATCH_COUNT =
        AttributeKey.longKey("messaging.batch.message_count");
    private static final AttributeKey<String> PIPELINE = AttributeKey.stringKey("outbox.pipeline");
    private static final AttributeKey<Long> LANE = AttributeKey.longKey("outbox.lane");
    private static final AttributeKey<String> AGGREGATE_TYPE =
        AttributeKey.stringKey("outbox.aggregate.type");
    private static final AttributeKey<String> AGGREGATE_ID =
        AttributeKey.stringKey("outbox.aggregate.id");
    private static final AttributeKey<String> EVENT_TYPE =
        AttributeKey.stringKey("outbox.event.type");
    private static final AttributeKey<Long> ATTEMPTS = AttributeKey.longKey("outbox.attempts");
    private static final AttributeKey<String> DEAD_LETTER_REASON =
        AttributeKey.stringKey("outbox.dead_letter.reason");
    private static final AttributeKey<Long> UNLINKED =
        AttributeKey.longKey("outbox.claim.unlinked_events");
    private static final AttributeKey<String> VERDICT = AttributeKey.stringKey("outbox.verdict");

    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();
    private static final TextMapGetter<Map<String, String>> ROW_HEADERS =
        (headers, key) -> headers == null ? null : headers.get(key);

    private final Tracer tracer;
    private final String pipeline;
    private final String system;

    Spans(Tracer tracer, String pipeline, String system) {
      this.tracer = tracer;
      this.pipeline = pipeline;
      this.system = system;
    }

    /** The trace context the application wrote into the row's headers, or the root. */
    private static Context parentOf(OutboxEvent event) {
      Map<String, String> headers = event.headers();
      if (!headers.containsKey(TRACEPARENT)) {
        return Context.root();
      }
      return W3C.extract(Context.root(), headers, ROW_HEADERS);
    }

    @Override
    void claimed(int lane, List<OutboxEvent> events, Instant startedAt) {
      SpanBuilder b =
          tracer
              .spanBuilder("claim " + pipeline)
              .setSpanKind(SpanKind.INTERNAL)
              .setNoParent()
              .setStartTimestamp(startedAt)
              .setAttribute(PIPELINE, pipeline)
              .setAttribute(LANE, (long) lane)
              .setAttribute(BATCH_COUNT, (long) events.size());
      int linked = 0;
      int unlinked = 0;
      for (OutboxEvent e : events) {
        SpanContext context = Span.fromContext(parentOf(e)).getSpanContext();
        if (!context.isValid()) {
          continue;
        }
        if (linked == MAX_LINKS) {
          unlinked++;
          continue;
        }
        b.addLink(context, Attributes.of(MESSAGE_ID, e.eventId().toString()));
        linked++;
      }
      if (unlinked > 0) {
        b.setAttribute(UNLINKED, (long) unlinked);
      }
      b.startSpan().end();
    }

    @Override
    Wave publishing(List<RoutedEvent> routed) {
      List<RoutedEvent> traced = new ArrayList<>(routed.size());
      List<Span> spans = new ArrayList<>(routed.size());
      for (RoutedEvent r : routed) {
        OutboxEvent e = r.event();
        SpanBuilder b =
            tracer
                .spanBuilder("publish " + r.destination())
                .setSpanKind(SpanKind.PRODUCER)
                .setParent(parentOf(e))
                .setAttribute(SYSTEM, system)
                .setAttribute(DESTINATION, r.destination())
                .setAttribute(OPERATION_TYPE, "send")
                .setAttribute(OPERATION_NAME, "publish")
                .setAttribute(MESSAGE_ID, e.eventId().toString())
                .setAttribute(PIPELINE, pipeline)
                .setAttribute(AGGREGATE_TYPE, e.aggregateType())
                .setAttribute(AGGREGATE_ID, e.aggregateId())
                .setAttribute(EVENT_TYPE, e.eventType())
                .setAttribute(ATTEMPTS, (long) e.attempts());
        String reason = r.extraHeaders().get(RelayHeaders.DEAD_LETTER_REASON);
        if (reason != null) {
          b.setAttribute(DEAD_LETTER_REASON, reason);
        }
        Span span = b.startSpan();
        spans.add(span);
        // The message carries the publish span's context, so the consumer's span is its child.
        // Extra headers win over the row's own, which hold the application's context.
        Map<String, String> headers = new HashMap<>(r.extraHeaders());
        W3C.inject(Context.root().with(span), headers, Map::put);
        traced.add(new RoutedEvent(e, r.destination(), headers));
      }
      return new SpanWave(traced, spans);
    }
  }

  /** The spans of one wave, ended once the sink answered. */
  private record SpanWave(List<RoutedEvent> routed, List<Span> spans) implements Wave {
    @Override
    public void answered(List<Verdict> verdicts) {
      for (int i = 0; i < spans.size(); i++) {
        Span span = spans.get(i);
        Verdict v = i < verdicts.size() ? verdicts.get(i) : null;
        if (v == null) {
          span.setStatus(StatusCode.ERROR, "no verdict for this event");
        } else {
          span.setAttribute(Spans.VERDICT, v.outcome().name().toLowerCase(Locale.ROOT));
          if (!v.isPublished()) {
            span.setStatus(StatusCode.ERROR, v.error() == null ? "" : v.error());
          }
        }
        span.end();
      }
    }

    @Override
    public void published() {
      for (Span span : spans) {
        span.setAttribute(Spans.VERDICT, "published");
        span.end();
      }
    }

    @Override
    public void failed(String error) {
      for (Span span : spans) {
        span.setStatus(StatusCode.ERROR, error == null ? "" : error);
        span.end();
      }
    }
  }
}
