package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.outbox.client.OutboxMessage;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One trace from the application's insert to the consumer's receipt ({@code outbox-relay.tracing}):
 * the test is the application (a span of its own, whose {@code traceparent} the outbox row's
 * headers carry), the collector (an OTLP/HTTP receiver the relay process exports to) and the
 * consumer (the Kafka record's {@code traceparent}).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class TracingIT {
  private static final HexFormat HEX = HexFormat.of();

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();

  @Test
  void oneTraceFromTheApplicationsInsertToTheConsumer() throws Exception {
    RelayFixture fx = relays.closeAfter(new RelayFixture("tracing"));
    KafkaTestSupport.createTopic(fx.topic("order"), 1);
    OtlpReceiver collector = relays.closeAfter(OtlpReceiver.start());

    // The application: its span, exported to the same collector, and the row written inside it
    // with the span's context.
    Span app;
    Map<String, String> context = new HashMap<>();
    SpanExporter exporter =
        OtlpHttpSpanExporter.builder()
            .setEndpoint("http://127.0.0.1:" + collector.port() + "/v1/traces")
            .build();
    try (OpenTelemetrySdk sdk =
        OpenTelemetrySdk.builder()
            .setTracerProvider(
                SdkTracerProvider.builder()
                    .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                    .build())
            .build()) {
      app = sdk.getTracer("app").spanBuilder("place order").startSpan();
      W3CTraceContextPropagator.getInstance().inject(Context.root().with(app), context, Map::put);
      fx.commit(
          List.of(
              OutboxMessage.builder()
                  .aggregate("order", "o-1")
                  .eventType("OrderPlaced")
                  .payload("{}")
                  .headers(context)
                  .build()));
      app.end();
    }
    String traceId = app.getSpanContext().getTraceId();
    String appSpanId = app.getSpanContext().getSpanId();
    assertThat(app.getSpanContext().isValid()).isTrue();

    RelayProcess relay =
        relays.start(
            "traced",
            fx.config("")
                + "outbox-relay.tracing { enabled = true, service-name = \"relay-it\","
                + " otlp-endpoint = \"http://127.0.0.1:"
                + collector.port()
                + "\" }\n");

    // The consumer: the message carries the relay's publish span as its parent.
    ConsumerRecord<String, byte[]> record =
        fx.read(fx.topic("order"), 1, Duration.ofSeconds(30)).get(0);
    String[] traceparent = KafkaTestSupport.header(record, "traceparent").split("-");
    assertThat(traceparent[1]).as("the application's trace").isEqualTo(traceId);
    String publishSpanId = traceparent[2];
    assertThat(publishSpanId).as("the relay's span, not the application's").isNotEqualTo(appSpanId);

    // A stop exports the spans still buffered.
    assertThat(relay.terminate(Duration.ofSeconds(20))).contains(0);
    io.opentelemetry.proto.trace.v1.Span publish =
        collector
            .span(publishSpanId)
            .orElseThrow(
                () ->
                    new AssertionError("no span " + publishSpanId + " among " + collector.names()));
    assertThat(publish.getName()).isEqualTo("publish " + fx.topic("order"));
    assertThat(publish.getKind())
        .isEqualTo(io.opentelemetry.proto.trace.v1.Span.SpanKind.SPAN_KIND_PRODUCER);
    assertThat(hex(publish.getTraceId())).isEqualTo(traceId);
    assertThat(hex(publish.getParentSpanId()))
        .as("child of the application's span")
        .isEqualTo(appSpanId);
    assertThat(attribute(publish.getAttributesList(), "messaging.system")).isEqualTo("kafka");
    assertThat(attribute(publish.getAttributesList(), "messaging.message.id"))
        .isEqualTo(KafkaTestSupport.header(record, "event-id"));
    assertThat(collector.span(appSpanId)).as("the application's own span").isPresent();
    assertThat(collector.serviceNames()).contains("relay-it");

    assertThat(collector.spans())
        .as("a claim span linked to the application's span")
        .anySatisfy(
            claim -> {
              assertThat(claim.getName()).isEqualTo("claim it");
              assertThat(claim.getLinksList())
                  .anySatisfy(
                      link -> {
                        assertThat(hex(link.getTraceId())).isEqualTo(traceId);
                        assertThat(hex(link.getSpanId())).isEqualTo(appSpanId);
                      });
            });
  }

  private static String hex(ByteString bytes) {
    return HEX.formatHex(bytes.toByteArray());
  }

  private static String attribute(List<KeyValue> attributes, String key) {
    return attributes.stream()
        .filter(a -> a.getKey().equals(key))
        .map(a -> a.getValue().getStringValue())
        .findFirst()
        .orElse(null);
  }

  /** A tiny OTLP/HTTP (protobuf) trace receiver: keeps every span exported to it. */
  private static final class OtlpReceiver implements AutoCloseable {
    private final HttpServer server;
    private final List<ResourceSpans> received = new CopyOnWriteArrayList<>();

    private OtlpReceiver(HttpServer server) {
      this.server = server;
    }

    static OtlpReceiver start() throws IOException {
      HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      OtlpReceiver receiver = new OtlpReceiver(server);
      server.createContext(
          "/v1/traces",
          exchange -> {
            try (InputStream body = exchange.getRequestBody()) {
              receiver.received.addAll(
                  ExportTraceServiceRequest.parseFrom(body).getResourceSpansList());
            }
            byte[] response = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
            exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
            exchange.sendResponseHeaders(200, response.length == 0 ? -1 : response.length);
            exchange.getResponseBody().write(response);
            exchange.close();
          });
      server.start();
      return receiver;
    }

    int port() {
      return server.getAddress().getPort();
    }

    List<io.opentelemetry.proto.trace.v1.Span> spans() {
      return received.stream()
          .flatMap(r -> r.getScopeSpansList().stream())
          .flatMap((ScopeSpans s) -> s.getSpansList().stream())
          .toList();
    }

    Optional<io.opentelemetry.proto.trace.v1.Span> span(String spanId) {
      return spans().stream().filter(s -> hex(s.getSpanId()).equals(spanId)).findFirst();
    }

    List<String> names() {
      return spans().stream().map(io.opentelemetry.proto.trace.v1.Span::getName).toList();
    }

    List<String> serviceNames() {
      return received.stream()
          .map(r -> attribute(r.getResource().getAttributesList(), "service.name"))
          .toList();
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }
}
