package io.outbox.relay.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A running relay's HTTP endpoints, read the way Prometheus and an orchestrator read them. */
final class Scrape {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private final int port;

  Scrape(int port) {
    this.port = port;
  }

  /** The response to {@code GET path}. */
  HttpResponse<String> get(String path) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(10))
            .build();
    try {
      return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException("GET " + path + " on port " + port, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted during GET " + path, e);
    }
  }

  /** The whole {@code /metrics} text. */
  String metrics() {
    HttpResponse<String> r = get("/metrics");
    if (r.statusCode() != 200) {
      throw new IllegalStateException("/metrics answered " + r.statusCode() + ": " + r.body());
    }
    return r.body();
  }

  /**
   * The value of one sample, e.g. {@code value("outbox_relay_active", "pipeline=\"it\"")}; empty
   * when the sample is absent. {@code labels} is the exact label set as printed, in order.
   */
  OptionalDouble value(String name, String labels) {
    return value(metrics(), name, labels);
  }

  static OptionalDouble value(String text, String name, String labels) {
    Pattern line =
        Pattern.compile(
            "^" + Pattern.quote(name + "{" + labels + "}") + " (\\S+)$", Pattern.MULTILINE);
    Matcher m = line.matcher(text);
    return m.find() ? OptionalDouble.of(Double.parseDouble(m.group(1))) : OptionalDouble.empty();
  }

  /** The heap in use now: the sum of {@code jvm_memory_used_bytes} over the heap's pools. */
  long heapUsed() {
    Matcher m =
        Pattern.compile("^jvm_memory_used_bytes\\{area=\"heap\"[^}]*} (\\S+)$", Pattern.MULTILINE)
            .matcher(metrics());
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
    }
    return (long) sum;
  }

  /** The value of a sample labelled only {@code pipeline="<pipeline>"}, or NaN when absent. */
  double pipeline(String name, String pipeline) {
    return value(name, "pipeline=\"" + pipeline + "\"").orElse(Double.NaN);
  }
}
