package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code outbox-relay run} started by the archive's launcher: its log, its HTTP endpoints, and a
 * stop by SIGTERM that must end with exit code 0.
 */
final class RunningRelay {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private final Process process;
  private final Path log;
  private final int port;

  private RunningRelay(Process process, Path log, int port) {
    this.process = process;
    this.log = log;
    this.port = port;
  }

  /**
   * Runs {@code launcher run --config config} in {@code workDir}, its output in {@code run.log}
   * there; {@code port} is the configuration's {@code http.port}.
   */
  static RunningRelay start(
      Path launcher, Path workDir, Map<String, String> env, Path config, int port) {
    Path log = workDir.resolve("run.log");
    Process process =
        UnpackedDistribution.start(
            launcher, workDir, log, env, "run", "--config", config.toString());
    return new RunningRelay(process, log, port);
  }

  /** A TCP port nothing listens on right now. */
  static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port", e);
    }
  }

  /** Everything the relay wrote so far. */
  String log() {
    try {
      return Files.readString(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e.getMessage() + ")";
    }
  }

  /** GET {@code path} of the relay's HTTP endpoints. */
  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(10))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** SIGTERM, then asserts a clean exit (code 0) within 60 s; kills the process otherwise. */
  void stop() throws InterruptedException {
    process.destroy();
    boolean exited = process.waitFor(60, TimeUnit.SECONDS);
    if (!exited) {
      process.destroyForcibly();
    }
    assertThat(exited).as(() -> "relay stopped after SIGTERM; log:\n" + log()).isTrue();
    assertThat(process.exitValue()).as(() -> "exit code; log:\n" + log()).isZero();
  }
}
