package io.outbox.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/** The Connect REST API of one worker, for tests: JSON in, JSON out. */
final class ConnectRest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final String base;

  ConnectRest(int port) {
    this.base = "http://127.0.0.1:" + port;
  }

  /** {@code PUT /connectors/<name>/config}: creates or reconfigures the connector. */
  JsonNode putConfig(String name, Map<String, String> config) {
    return send("PUT", "/connectors/" + name + "/config", config, 200, 201);
  }

  /** {@code PUT /connector-plugins/<class>/config/validate}. */
  JsonNode validate(Map<String, String> config) {
    return send(
        "PUT",
        "/connector-plugins/" + OutboxSourceConnector.class.getSimpleName() + "/config/validate",
        config,
        200);
  }

  /** {@code GET /connectors/<name>/status}, or null while it is unknown (404). */
  JsonNode status(String name) {
    try {
      return send("GET", "/connectors/" + name + "/status", null, 200);
    } catch (IllegalStateException e) {
      return null;
    }
  }

  void delete(String name) {
    send("DELETE", "/connectors/" + name, null, 204, 404);
  }

  private JsonNode send(String method, String path, Object body, int... ok) {
    try {
      HttpRequest.Builder b =
          HttpRequest.newBuilder(URI.create(base + path))
              .timeout(Duration.ofSeconds(30))
              .header("Content-Type", "application/json");
      b.method(
          method,
          body == null
              ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      for (int code : ok) {
        if (r.statusCode() == code) {
          return r.body().isEmpty() ? JSON.nullNode() : JSON.readTree(r.body());
        }
      }
      throw new IllegalStateException(
          method + " " + base + path + ": " + r.statusCode() + " " + r.body());
    } catch (IOException e) {
      throw new IllegalStateException(method + " " + base + path + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
