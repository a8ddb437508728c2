package io.outbox.relay;

import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException;
import io.outbox.relay.config.RelaySettings.TracingSettings;
import io.outbox.relay.pipeline.EventTracing;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * The daemon's OpenTelemetry SDK when {@code outbox-relay.tracing.enabled}: built at start by the
 * SDK's autoconfiguration, with {@code outbox-relay.tracing} as its defaults (so the standard
 * {@code OTEL_*} environment variables and {@code otel.*} system properties override them), spans
 * exported in batches by OTLP/HTTP on the SDK's own thread, flushed when the relay stops.
 */
final class TracingSdk {
  private static final Logger log = LoggerFactory.getLogger(TracingSdk.class);

  private static final TracingSdk OFF = new TracingSdk(null);

  /**
   * The SDK's own logger (java.util.logging), held so that its handler stays: its lines (a failed
   * export) go to the relay's log, in its format, instead of JUL's console.
   */
  private static final java.util.logging.Logger SDK_LOG =
      java.util.logging.Logger.getLogger("io.opentelemetry");

  private final OpenTelemetrySdk sdk; // null when off

  private TracingSdk(OpenTelemetrySdk sdk) {
    this.sdk = sdk;
  }

  /**
   * The SDK of {@code settings}; nothing when tracing is off.
   *
   * @throws StartupException when the {@code OTEL_*} environment is invalid
   */
  static TracingSdk start(TracingSettings settings) {
    if (!settings.enabled()) {
      return OFF;
    }
    Map<String, String> defaults =
        Map.of(
            "otel.service.name", settings.serviceName(),
            "otel.traces.exporter", "otlp",
            "otel.exporter.otlp.protocol", "http/protobuf",
            "otel.exporter.otlp.endpoint", settings.otlpEndpoint().toString(),
            // The relay's metrics are Prometheus's (/metrics) and its logs the log's.
            "otel.metrics.exporter", "none",
            "otel.logs.exporter", "none");
    logSdkToSlf4j();
    try {
      OpenTelemetrySdk sdk =
          AutoConfiguredOpenTelemetrySdk.builder()
              .addPropertiesSupplier(() -> defaults)
              .disableShutdownHook() // the relay's stop flushes it (close), then halts the JVM
              .build()
              .getOpenTelemetrySdk();
      log.info(
          "tracing: spans of claims and publishes exported by OTLP/HTTP (endpoint {} unless"
              + " OTEL_* variables say otherwise)",
          settings.otlpEndpoint());
      return new TracingSdk(sdk);
    } catch (ConfigurationException | IllegalStateException e) {
      // IllegalStateException: no sender for the protocol asked (grpc: only HTTP is bundled).
      throw new StartupException(
          "outbox-relay.tracing: the OpenTelemetry SDK cannot start (check the OTEL_* environment"
              + " variables and otel.* system properties): "
              + e.getMessage());
    }
  }

  private static synchronized void logSdkToSlf4j() {
    if (SDK_LOG.getUseParentHandlers()) {
      SDK_LOG.addHandler(new SLF4JBridgeHandler());
      SDK_LOG.setUseParentHandlers(false);
    }
  }

  /** The spans of pipeline {@code pipeline}, whose sink is of type {@code sinkType}. */
  EventTracing forPipeline(String pipeline, String sinkType) {
    return sdk == null ? EventTracing.off() : EventTracing.of(sdk, pipeline, sinkType);
  }

  /** Exports the spans still buffered and shuts the SDK down, waiting at most {@code timeout}. */
  void close(Duration timeout) {
    if (sdk == null) {
      return;
    }
    if (!sdk.shutdown().join(timeout.toMillis(), TimeUnit.MILLISECONDS).isSuccess()) {
      log.warn("tracing: the last spans were not all exported within {}", timeout);
    }
  }
}
