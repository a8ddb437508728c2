package io.outbox.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.outbox.client.OutboxMessage;
import io.outbox.client.OutboxWriter;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.LocalPorts;
import io.outbox.testkit.Services;
import io.outbox.testkit.Sql;
import io.outbox.testkit.TestDatabase;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link OutboxRelayContainer} as an application's test uses it, through Testcontainers and
 * podman's Docker API ({@code podman system service} on DOCKER_HOST, set by this module's failsafe
 * configuration, Ryuk off), on the image {@code outbox-relay:<version>} that {@code
 * scripts/image.sh build} makes from dist's archive when podman lacks it or it is older than the
 * archive. No PostgreSQL or Kafka image can be pulled here, so the relay runs on the host's network
 * against the services of {@code scripts/services.sh}: it migrates, publishes the rows OutboxWriter
 * wrote, answers {@code /health/ready} and {@code /metrics}, and {@code stop()} ends it.
 *
 * <p>Skipped, with the reason, where podman is not installed or cannot run a container; under CI
 * ({@code CI=true}) that is a failure instead, as in dist's ImageIT.
 */
class OutboxRelayContainerIT {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @TempDir static Path work;
  private static PodmanService service;

  /** Why podman cannot be used here, or null. */
  private static String skipReason;

  @BeforeAll
  static void serveTheDockerApi() throws Exception {
    skipReason =
        podmanProblem(List.of("podman", "info"), "podman is installed but does not answer");
    if (skipReason == null) {
      skipReason =
          podmanProblem(
              List.of("podman", "run", "--rm", "--network", "host", baseImage(), "true"),
              "podman cannot run a container here");
    }
    if (skipReason != null) {
      return;
    }
    String image = "outbox-relay:" + OutboxRelayContainer.DEFAULT_TAG;
    if (!builtSince(image, archive())) {
      Result previous =
          exec(
              Duration.ofMinutes(1),
              List.of("podman", "image", "inspect", "--format", "{{.Id}}", image));
      long t0 = System.nanoTime();
      Result build =
          exec(
              Duration.ofMinutes(20),
              List.of(
                  repository().resolve("scripts/image.sh").toString(),
                  "build",
                  "--tag",
                  image,
                  "--archive",
                  archive().toString()));
      System.out.printf(
          "OutboxRelayContainerIT: scripts/image.sh build: %d s%n",
          Duration.ofNanos(System.nanoTime() - t0).toSeconds());
      assertThat(build.exitCode()).as("scripts/image.sh build\n%s", build).isZero();
      if (previous.exitCode() == 0) {
        // The stale image, untagged now; kept if something still uses it.
        exec(Duration.ofMinutes(1), List.of("podman", "rmi", previous.out().strip()));
      }
    }
    service = PodmanService.serve(System.getenv("DOCKER_HOST"), work.resolve("podman-service.log"));
  }

  @AfterAll
  static void stopTheService() {
    if (service != null) {
      service.close();
    }
  }

  @BeforeEach
  void podmanRuns() {
    if (skipReason != null && "true".equals(System.getenv("CI"))) {
      fail("CI's machines run podman (scripts/services.sh up sets it up), but: " + skipReason);
    }
    assumeTrue(skipReason == null, skipReason);
  }

  @Test
  void migratesPublishesAnswersItsProbesAndStops() throws Exception {
    String topicPrefix = KafkaTestSupport.uniqueTopic("testcontainers");
    int port = LocalPorts.unbound();
    int events = 12;
    try (TestDatabase db = TestDatabase.create("testcontainers_it");
        OutboxRelayContainer relay =
            new OutboxRelayContainer()
                .withNetworkMode("host")
                .withSetting("http.port", Integer.toString(port))
                .withDatabase(db.url(), db.user(), db.password())
                .withKafka(Services.kafkaBootstrap())
                .withPipeline("orders-it")
                .withPipelineSetting("routing.destination", topicPrefix + ".${aggregate_type}")
                .withPipelineSetting("source.polling.poll-interval", "250ms")
                .withEnv("JAVA_OPTS", "-Xmx256m -XX:+ExitOnOutOfMemoryError")
                .withMigrateOnStart()) {
      long t0 = System.nanoTime();
      relay.start(); // waits for /health/ready: migrated, the pipeline active
      System.out.printf(
          "OutboxRelayContainerIT: start() (migrate, run, ready): %d ms%n",
          Duration.ofNanos(System.nanoTime() - t0).toMillis());
      assertThat(relay.getHttpUrl()).endsWith(":" + port);

      try (Connection c = db.connect()) {
        OutboxWriter writer = OutboxWriter.forTable("outbox");
        for (int i = 0; i < events; i++) {
          writer.write(
              c,
              OutboxMessage.builder()
                  .aggregate("order", "o-" + (i % 3))
                  .eventType("OrderCreated")
                  .payload("{\"n\":" + i + "}")
                  .build());
        }
      }
      List<ConsumerRecord<String, byte[]>> records =
          KafkaTestSupport.readRecords(topicPrefix + ".order", events, Duration.ofSeconds(90));
      assertThat(records).as(() -> "records; relay log:\n" + relay.getLogs()).hasSize(events);
      await("every row marked published")
          .atMost(Duration.ofSeconds(30))
          .until(() -> unpublished(db) == 0);

      assertThat(get(relay.getHttpUrl() + "/health/ready").statusCode()).isEqualTo(200);
      HttpResponse<String> metrics = get(relay.getMetricsUrl());
      assertThat(metrics.statusCode()).isEqualTo(200);
      assertThat(metrics.body()).contains("pipeline=\"orders-it\"");

      String id = relay.getContainerId();
      relay.stop();
      assertThat(relay.isRunning()).isFalse();
      Result ps = exec(Duration.ofMinutes(1), List.of("podman", "ps", "-a", "-q", "--no-trunc"));
      assertThat(ps.out()).as("containers after stop()").doesNotContain(id);
      assertThatThrownBy(() -> get("http://127.0.0.1:" + port + "/health/live"))
          .as("nothing listens once stopped")
          .isInstanceOf(IOException.class);
    }
  }

  private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static long unpublished(TestDatabase db) throws Exception {
    return Sql.number(db::connect, "SELECT count(*) FROM outbox WHERE published_at IS NULL");
  }

  /** Whether podman has {@code image}, made after {@code archive} (else it may be stale). */
  private static boolean builtSince(String image, Path archive) throws IOException {
    Result created =
        exec(
            Duration.ofMinutes(1),
            List.of("podman", "image", "inspect", "--format", "{{.Created.Unix}}", image));
    return created.exitCode() == 0
        && Long.parseLong(created.out().strip())
            >= Files.getLastModifiedTime(archive).to(TimeUnit.SECONDS);
  }

  private static Path repository() {
    return Path.of(System.getProperty("outbox.repository.root", "..")).toAbsolutePath().normalize();
  }

  private static Path archive() {
    Path archive = Path.of(System.getProperty("outbox.dist.archive", "missing"));
    assertThat(archive)
        .as("dist's archive, from which the image is built (mvn package -pl dist -am)")
        .isRegularFile();
    return archive;
  }

  private static String baseImage() {
    String base = System.getenv("OUTBOX_IMAGE_BASE");
    return base == null || base.isBlank() ? "localhost/outbox-relay-base:bookworm" : base;
  }

  /** Why {@code command} fails, in podman's words; null when it runs. Printed, as skips hide. */
  private static String podmanProblem(List<String> command, String what) throws IOException {
    String reason;
    if (exec(Duration.ofMinutes(1), List.of("sh", "-c", "command -v podman")).exitCode() != 0) {
      reason = "podman is not installed (scripts/services.sh up installs and configures it)";
    } else {
      Result result = exec(Duration.ofMinutes(3), command);
      if (result.exitCode() == 0) {
        return null;
      }
      reason = what + " (" + String.join(" ", command) + "):\n" + result;
    }
    System.out.println("OutboxRelayContainerIT: podman unusable, skipped: " + reason);
    return reason;
  }

  record Result(int exitCode, String out, String err) {
    @Override
    public String toString() {
      return "exit " + exitCode + "\nstdout:\n" + out + "\nstderr:\n" + err;
    }
  }

  /** Runs {@code command} with both streams in files (no pipe deadlock), killing it on timeout. */
  private static Result exec(Duration timeout, List<String> command) throws IOException {
    Path out = Files.createTempFile(work, "exec-", ".out");
    Path err = Files.createTempFile(work, "exec-", ".err");
    try {
      Process process =
          new ProcessBuilder(new ArrayList<>(command))
              .directory(repository().toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .redirectOutput(out.toFile())
              .redirectError(err.toFile())
              .start();
      if (!process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        throw new IllegalStateException(command + " did not finish within " + timeout);
      }
      return new Result(
          process.exitValue(),
          Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + command, e);
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }
}
