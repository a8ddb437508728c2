package io.outbox.relay.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.outbox.relay.Relay;
import io.outbox.relay.config.RelaySettings.HttpSettings;
import io.outbox.relay.pipeline.Pipeline;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.Executors;

/**
 * The daemon's HTTP endpoints: {@code /health/live}, {@code /health/ready} (503 unless every
 * pipeline's source is connected, its sink available and it has not died of an {@link Error}) and
 * {@code /metrics} (the relay's Micrometer registry in the Prometheus text format; names in {@code
 * docs/metrics.md}).
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
      boolean source = p.sourceConnected();
      boolean sink = p.sinkAvailable();
      String failure = p.failure();
      ready &= source && sink && failure == null;
      body.append(p.name())
          .append(": ")
          .append(failure != null ? "failed" : p.role().name().toLowerCase(Locale.ROOT))
          .append(source ? ", source connected" : ", source disconnected")
          .append(sink ? ", sink available" : ", sink unavailable");
      if (failure != null) {
        body.append(", ").append(failure);
      }
      body.append('\n');
    }
    respond(ex, ready ? 200 : 503, "text/plain; charset=utf-8", body.toString());
  }

  private void metrics(HttpExchange ex) throws IOException {
    respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", relay.registry().scrape());
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
