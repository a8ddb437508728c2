package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.outbox.relay.config.RelaySettings.TracingSettings;
import io.outbox.relay.pipeline.EventTracing;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What the SDK is built from: the file's keys, overridden by OpenTelemetry's own settings. */
class TracingSdkTest {

  @Test
  void offMakesNoSdk() {
    TracingSdk sdk = TracingSdk.start(TracingSettings.off());
    assertThat(sdk.forPipeline("orders", "kafka")).isSameAs(EventTracing.off());
    sdk.close(Duration.ofSeconds(1));
  }

  @Test
  void onTracesThePipelines() {
    TracingSdk sdk =
        TracingSdk.start(
            new TracingSettings(true, URI.create("http://127.0.0.1:1"), "outbox-relay"));
    try {
      assertThat(sdk.forPipeline("orders", "kafka")).isNotSameAs(EventTracing.off());
    } finally {
      sdk.close(Duration.ofSeconds(1));
    }
  }

  /** The SDK's own lines (java.util.logging, e.g. a failed export) reach the relay's log. */
  @Test
  void theSdksLinesGoToTheRelaysLog() {
    ch.qos.logback.classic.Logger otel =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("io.opentelemetry");
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    otel.addAppender(lines);
    otel.setLevel(ch.qos.logback.classic.Level.INFO); // the tests' log is off
    TracingSdk sdk =
        TracingSdk.start(new TracingSettings(true, URI.create("http://127.0.0.1:1"), "relay"));
    try {
      java.util.logging.Logger.getLogger("io.opentelemetry.exporter.internal.http.HttpExporter")
          .log(java.util.logging.Level.SEVERE, "Failed to export spans.");
    } finally {
      sdk.close(Duration.ofSeconds(1));
      otel.detachAppender(lines);
      otel.setLevel(null);
    }
    assertThat(lines.list)
        .extracting(ILoggingEvent::getFormattedMessage)
        .contains("Failed to export spans.");
  }

  /** An otel.* system property (like an OTEL_* variable) wins over the file; a bad one is named. */
  @Test
  void aProtocolWithoutASenderIsAStartupError() {
    System.setProperty("otel.exporter.otlp.protocol", "grpc");
    try {
      assertThatThrownBy(
              () ->
                  TracingSdk.start(
                      new TracingSettings(true, URI.create("http://127.0.0.1:1"), "outbox-relay")))
          .isInstanceOf(StartupException.class)
          .hasMessageStartingWith("outbox-relay.tracing: the OpenTelemetry SDK cannot start");
    } finally {
      System.clearProperty("otel.exporter.otlp.protocol");
    }
  }
}
