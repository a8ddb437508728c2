package io.outbox.relay.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.outbox.relay.Relay;
import io.outbox.relay.config.RelaySettings.HttpSettings;
import io.outbox.relay.pipeline.Pipeline;
import io.outbox.relay.pipeline.PipelineStats;
import io.outbox.relay.spi.PluginContext.Role;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.ToLongFunction;

/**
 * The daemon's HTTP endpoints: {@code /health/live}, {@code /health/ready} (503 while a pipeline's
 * sink is unavailable) and {@code /metrics} (Prometheus text format, per-pipeline counters).
 */
public final class HttpEndpoints implements AutoCloseable {
  private final HttpServer server;
  private final Relay relay;

  private HttpEndpoints(HttpServer server, Relay relay) {
    this.server = server;
    this.relay = relay;
  }

  /**
   * Binds {@code http.host:http.port} and starts serving.
   *
   * @throws UncheckedIOException naming the address when it cannot be bound
   */
  public static HttpEndpoints start(HttpSettings settings, Relay relay) {
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(settings.host(), settings.port()), 16);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot listen on http "
              + settings.host()
              + ":"
              + settings.port()
              + ": "
              + e.getMessage(),
          e);
    }
    HttpEndpoints endpoints = new HttpEndpoints(server, relay);
    server.createContext("/health/live", ex -> endpoints.respond(ex, 200, "text/plain", "live\n"));
    server.createContext("/health/ready", endpoints::ready);
    server.createContext("/metrics", endpoints::metrics);
    server.setExecutor(
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "outbox-relay-http");
              t.setDaemon(true);
              return t;
            }));
    server.start();
    return endpoints;
  }

  /** The bound port (useful when {@code http.port = 0}). */
  public int port() {
    return server.getAddress().getPort();
  }

  private void ready(HttpExchange ex) throws IOException {
    StringBuilder body = new StringBuilder();
    boolean ready = true;
    for (Pipeline p : relay.pipelines()) {
      boolean ok = p.sinkAvailable();
      ready &= ok;
      body.append(p.name())
          .append(": ")
          .append(p.role().name().toLowerCase())
          .append(ok ? ", sink available" : ", sink unavailable")
          .append('\n');
    }
    respond(ex, ready ? 200 : 503, "text/plain", body.toString());
  }

  private void metrics(HttpExchange ex) throws IOException {
    StringBuilder out = new StringBuilder();
    counter(
        out,
        "outbox_relay_events_published_total",
        "Events acknowledged by the broker.",
        PipelineStats::published);
    counter(
        out,
        "outbox_relay_events_retried_total",
        "Retryable failures (attempts counted).",
        PipelineStats::retried);
    counter(
        out,
        "outbox_relay_events_dead_lettered_total",
        "Events moved to the dead-letter table.",
        PipelineStats::deadLettered);
    counter(
        out,
        "outbox_relay_events_released_total",
        "Events released unjudged (outage, shutdown, held behind their key).",
        PipelineStats::released);
    counter(out, "outbox_relay_batches_total", "Batches settled.", PipelineStats::batches);
    counter(
        out,
        "outbox_relay_sink_unavailable_total",
        "Times a batch found the sink unavailable.",
        PipelineStats::sinkUnavailable);
    gauge(
        out,
        "outbox_relay_active",
        "1 when this instance publishes for the pipeline, 0 on standby.",
        p -> p.role() == Role.ACTIVE ? 1 : 0);
    gauge(
        out,
        "outbox_relay_sink_available",
        "0 while the pipeline is paused by a sink outage.",
        p -> p.sinkAvailable() ? 1 : 0);
    respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", out.toString());
  }

  private void counter(
      StringBuilder out, String name, String help, ToLongFunction<PipelineStats> value) {
    out.append("# HELP ").append(name).append(' ').append(help).append('\n');
    out.append("# TYPE ").append(name).append(" counter\n");
    for (Pipeline p : relay.pipelines()) {
      out.append(name)
          .append("{pipeline=\"")
          .append(p.name())
          .append("\"} ")
          .append(value.applyAsLong(p.stats()))
          .append('\n');
    }
  }

  private void gauge(StringBuilder out, String name, String help, ToLongFunction<Pipeline> value) {
    out.append("# HELP ").append(name).append(' ').append(help).append('\n');
    out.append("# TYPE ").append(name).append(" gauge\n");
    for (Pipeline p : relay.pipelines()) {
      out.append(name)
          .append("{pipeline=\"")
          .append(p.name())
          .append("\"} ")
          .append(value.applyAsLong(p))
          .append('\n');
    }
  }

  private void respond(HttpExchange ex, int status, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(status, bytes.length);
    try (OutputStream os = ex.getResponseBody()) {
      os.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
