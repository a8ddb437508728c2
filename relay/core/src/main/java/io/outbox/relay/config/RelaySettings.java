package io.outbox.relay.config;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * The whole daemon's settings, built eagerly from {@code outbox-relay} and immutable.
 *
 * @param http where the HTTP endpoints listen
 * @param tracing whether and where OpenTelemetry spans of claims and publishes are exported
 * @param shutdownTimeout how long a stop may take before in-flight work is abandoned
 * @param pipelines every pipeline by name, in the order of the file
 */
public record RelaySettings(
    HttpSettings http,
    TracingSettings tracing,
    Duration shutdownTimeout,
    Map<String, PipelineSettings> pipelines) {

  public RelaySettings {
    Objects.requireNonNull(http, "http");
    Objects.requireNonNull(tracing, "tracing");
    Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    pipelines = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(pipelines));
  }

  /**
   * The HTTP endpoint settings.
   *
   * @param host interface to bind
   * @param port TCP port; 0 picks a free one
   * @param backlogInterval how often the backlog gauges of {@code /metrics} are read from the
   *     database
   */
  public record HttpSettings(String host, int port, Duration backlogInterval) {
    public HttpSettings {
      Objects.requireNonNull(host, "host");
      Objects.requireNonNull(backlogInterval, "backlogInterval");
    }
  }

  /**
   * The OpenTelemetry tracing settings ({@code outbox-relay.tracing}); the standard {@code OTEL_*}
   * environment variables override them.
   *
   * @param enabled whether spans are made and exported at all
   * @param otlpEndpoint the OTLP/HTTP base URL; spans go to its {@code /v1/traces}
   * @param serviceName the {@code service.name} of the relay's spans
   */
  public record TracingSettings(boolean enabled, URI otlpEndpoint, String serviceName) {
    public TracingSettings {
      Objects.requireNonNull(otlpEndpoint, "otlpEndpoint");
      Objects.requireNonNull(serviceName, "serviceName");
    }

    /** Tracing off. */
    public static TracingSettings off() {
      return new TracingSettings(false, URI.create("http://127.0.0.1:4318"), "outbox-relay");
    }
  }
}
