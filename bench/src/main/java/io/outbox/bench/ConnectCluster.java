package io.outbox.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The Kafka Connect workers of {@code scripts/services.sh connect} for the {@code --engine connect}
 * drains: started fresh with the first {@code workers} ports (so that they load the plug-in of the
 * checkout), driven through the REST API, their CPU and memory sampled ({@link ProcSample}),
 * stopped again by {@link #close()}.
 */
final class ConnectCluster implements Drainer, AutoCloseable {

  /** The ports of services.sh's workers, in the order they are used. */
  static final List<Integer> PORTS = List.of(8083, 8084);

  /** How often {@link #checkAlive()} asks the REST API whether a task failed. */
  private static final long STATUS_EVERY_NANOS = Duration.ofSeconds(2).toNanos();

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Path home;
  private final Path log;
  private final List<Integer> ports;
  private final List<Long> pids = new ArrayList<>();
  private String connector;
  private long statusAt;

  private ConnectCluster(Path home, Path log, List<Integer> ports) {
    this.home = home;
    this.log = log;
    this.ports = ports;
  }

  /** The plug-in directory the workers load: {@code connect/target/plugin} of {@code home}. */
  static Path pluginPath(Path home) {
    return home.resolve("connect/target/plugin");
  }

  /**
   * Stops any worker of {@code home}'s services.sh, then starts {@code workers} of them; the
   * script's output is appended to {@code log}.
   */
  static ConnectCluster start(Path home, int workers, Path log) throws IOException {
    ConnectCluster cluster = new ConnectCluster(home, log, PORTS.subList(0, workers));
    cluster.services("down", PORTS);
    cluster.services("up", cluster.ports);
    for (int port : cluster.ports) {
      cluster.pids.add(
          Long.parseLong(
              Files.readString(home.resolve(".run/connect/worker-" + port + ".pid")).trim()));
    }
    return cluster;
  }

  /** The connectors the workers already run (left by an earlier run or test), by name. */
  List<String> connectors() {
    List<String> names = new ArrayList<>();
    send("GET", "/connectors", null, 200).forEach(n -> names.add(n.asText()));
    return names;
  }

  /** Creates the connector {@code name} through the first worker. */
  void create(String name, Map<String, String> config) {
    send("PUT", "/connectors/" + name + "/config", config, 200, 201);
    this.connector = name;
  }

  /**
   * The connector's tasks and the worker each runs on, e.g. {@code 0@127.0.0.1:8083,
   * 1@127.0.0.1:8084}.
   */
  String placement() {
    JsonNode status = send("GET", "/connectors/" + connector + "/status", null, 200);
    Map<Integer, String> tasks = new TreeMap<>();
    for (JsonNode t : status.get("tasks")) {
      tasks.put(t.get("id").asInt(), t.get("worker_id").asText());
    }
    List<String> out = new ArrayList<>();
    tasks.forEach((id, worker) -> out.add(id + "@" + worker));
    return String.join(", ", out);
  }

  /** The workers' CPU time summed, and their peak resident set sizes summed. */
  @Override
  public ProcSample sample() {
    double cpu = 0;
    long rss = 0;
    for (long pid : pids) {
      ProcSample s = ProcSample.of(pid);
      if (s == null) {
        return null;
      }
      cpu += s.cpuSeconds();
      rss += s.peakRssBytes();
    }
    return new ProcSample(cpu, rss);
  }

  /** Fails when a worker died, or (asked every 2 s) when a task of the connector failed. */
  @Override
  public void checkAlive() {
    for (int i = 0; i < pids.size(); i++) {
      if (ProcessHandle.of(pids.get(i)).map(ProcessHandle::isAlive).orElse(false) == false) {
        throw new IllegalStateException(
            "the Connect worker on port "
                + ports.get(i)
                + " died; see "
                + home.resolve(".run/connect/worker-" + ports.get(i) + ".log"));
      }
    }
    long now = System.nanoTime();
    if (connector == null || now - statusAt < STATUS_EVERY_NANOS) {
      return;
    }
    statusAt = now;
    // 404 until the herder has written the new connector's first status.
    JsonNode status = send("GET", "/connectors/" + connector + "/status", null, 200, 404);
    for (JsonNode t : status.path("tasks")) {
      if ("FAILED".equals(t.get("state").asText())) {
        throw new IllegalStateException(
            "task "
                + t.get("id").asText()
                + " of connector "
                + connector
                + " failed on "
                + t.get("worker_id").asText()
                + ": "
                + t.path("trace").asText().lines().limit(5).reduce("", (a, b) -> a + "\n" + b));
      }
    }
  }

  /** Deletes the connector (if any) and stops the workers. */
  @Override
  public void close() {
    try {
      if (connector != null) {
        send("DELETE", "/connectors/" + connector, null, 204, 404);
      }
    } finally {
      services("down", PORTS);
    }
  }

  private void services(String command, List<Integer> which) {
    Path script = home.resolve("scripts/services.sh");
    try {
      Files.createDirectories(log.getParent());
      ProcessBuilder b =
          new ProcessBuilder(script.toString(), "connect", command)
              .directory(home.toFile())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      b.environment()
          .put(
              "OUTBOX_CONNECT_PORTS",
              String.join(" ", which.stream().map(String::valueOf).toList()));
      Process p = b.start();
      if (!p.waitFor(10, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new IllegalStateException(script + " connect " + command + " took over 10 minutes");
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            script + " connect " + command + " failed (exit " + p.exitValue() + "); see " + log);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + script + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + script, e);
    }
  }

  private JsonNode send(String method, String path, Object body, int... ok) {
    String url = "http://127.0.0.1:" + ports.get(0) + path;
    try {
      HttpRequest request =
          HttpRequest.newBuilder(URI.create(url))
              .timeout(Duration.ofSeconds(30))
              .header("Content-Type", "application/json")
              .method(
                  method,
                  body == null
                      ? HttpRequest.BodyPublishers.noBody()
                      : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
              .build();
      HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
      for (int code : ok) {
        if (r.statusCode() == code) {
          return r.body().isEmpty() ? JSON.nullNode() : JSON.readTree(r.body());
        }
      }
      throw new IllegalStateException(method + " " + url + ": " + r.statusCode() + " " + r.body());
    } catch (IOException e) {
      throw new IllegalStateException(method + " " + url + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(method + " " + url + ": interrupted", e);
    }
  }
}
