package io.outbox.relay.pipeline;

import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An OpenTelemetry SDK that keeps every ended span in {@link #spans()}, for {@link EventTracing}.
 */
final class SpanRecorder implements AutoCloseable {
  private final List<SpanData> spans = new CopyOnWriteArrayList<>();
  private final OpenTelemetrySdk sdk =
      OpenTelemetrySdk.builder()
          .setTracerProvider(
              SdkTracerProvider.builder()
                  .addSpanProcessor(SimpleSpanProcessor.create(new ListExporter(spans)))
                  .build())
          .build();

  /** Spans of pipeline {@code pipeline} whose sink is of type {@code system}, recorded here. */
  EventTracing tracing(String pipeline, String system) {
    return EventTracing.of(sdk, pipeline, system);
  }

  /** The spans ended so far, in the order they ended. */
  List<SpanData> spans() {
    return spans;
  }

  @Override
  public void close() {
    sdk.close();
  }

  private record ListExporter(List<SpanData> spans) implements SpanExporter {
    @Override
    public CompletableResultCode export(Collection<SpanData> batch) {
      spans.addAll(batch);
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }
}
