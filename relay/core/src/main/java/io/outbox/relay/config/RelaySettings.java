package io.outbox.relay.config;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * The whole daemon's settings, built eagerly from {@code outbox-relay} and immutable.
 *
 * @param http where the HTTP endpoints listen
 * @param shutdownTimeout how long a stop may take before in-flight work is abandoned
 * @param pipelines every pipeline by name, in the order of the file
 */
public record RelaySettings(
    HttpSettings http, Duration shutdownTimeout, Map<String, PipelineSettings> pipelines) {

  public RelaySettings {
    Objects.requireNonNull(http, "http");
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
}
