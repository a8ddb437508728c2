package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outbox.relay.dist.UnpackedDistribution.Result;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.TestDatabase;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The container image as {@code scripts/image.sh build} makes it from this module's archive (the
 * Dockerfile's target {@code from-archive}, on the local Debian base of {@code scripts/image.sh
 * base}), run with podman on the host network against the test services' PostgreSQL and Kafka:
 * {@code migrate} in one container, the image's default command ({@code run}) in another, events
 * published to Kafka, {@code /health/ready} answering, the image's own HEALTHCHECK passing without
 * curl, the process running as uid 10001, and {@code podman stop} (SIGTERM) ending it with exit
 * code 0 within the configured shutdown-timeout.
 *
 * <p>Skipped, with the reason, where podman is not installed or cannot run a container ({@code
 * scripts/services.sh up} installs and configures it); under CI ({@code CI=true}) that is a failure
 * instead, since CI's machines are set up to run it.
 */
class ImageIT {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The base is made by mmdebstrap when missing: minutes on a fresh machine. */
  private static final Duration BASE_TIMEOUT = Duration.ofMinutes(20);

  private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(15);

  private static final String RUN_ID = UUID.randomUUID().toString().substring(0, 8);
  private static final String TAG = "localhost/outbox-relay:it-" + RUN_ID;

  @TempDir static Path work;
  private static boolean built;

  /** Why podman cannot be used here, or null: each test is skipped with it. */
  private static String skipReason;

  @BeforeAll
  static void buildImage() {
    skipReason =
        podmanProblem(List.of("podman", "info"), "podman is installed but does not answer");
    if (skipReason != null) {
      return;
    }
    Result base = imageScript(BASE_TIMEOUT, "base");
    assertThat(base.exitCode()).as("scripts/image.sh base\n%s", base).isZero();
    // Whether podman can run a container at all (runtime, cgroups, ulimits): on the base.
    skipReason =
        podmanProblem(
            List.of("podman", "run", "--rm", "--network", "host", baseImage(), "true"),
            "podman cannot run a container here");
    if (skipReason != null) {
      return;
    }

    Result build =
        imageScript(
            Duration.ofMinutes(10),
            "build",
            "--tag",
            TAG,
            "--archive",
            UnpackedDistribution.archive().toString());
    assertThat(build.exitCode()).as("scripts/image.sh build\n%s", build).isZero();
    assertThat(build.out().strip()).isEqualTo(TAG);
    built = true;
  }

  @BeforeEach
  void podmanRuns() {
    if (skipReason != null && "true".equals(System.getenv("CI"))) {
      fail("CI's machines run podman (scripts/services.sh up sets it up), but: " + skipReason);
    }
    assumeTrue(skipReason == null, skipReason);
  }

  @AfterAll
  static void removeImage() {
    if (built) {
      podman(Duration.ofMinutes(2), "rmi", "--force", TAG);
    }
  }

  @Test
  void imageRunsTheArchiveAsANonRootUserWithAHealthCheckAndNoCurl() throws IOException {
    JsonNode config = inspectImage();
    assertThat(config.path("Config").path("User").asText()).isEqualTo("10001:10001");
    assertThat(config.path("Config").path("StopSignal").asText()).isEqualTo("SIGTERM");
    assertThat(config.path("Healthcheck").path("Test").toString())
        .as("HEALTHCHECK (kept by --format docker)")
        .contains("/health/live")
        .doesNotContain("curl");

    Result version =
        podman(Duration.ofMinutes(2), "run", "--rm", "--network", "host", TAG, "--version");
    assertThat(version.exitCode()).as(version.toString()).isZero();
    assertThat(version.out().strip()).isEqualTo("outbox-relay " + UnpackedDistribution.version());

    Result noCurl =
        podman(
            Duration.ofMinutes(2),
            "run",
            "--rm",
            "--network",
            "host",
            "--entrypoint",
            "bash",
            TAG,
            "-c",
            "command -v curl wget || echo none");
    assertThat(noCurl.out().strip()).as(noCurl.toString()).isEqualTo("none");
  }

  @Test
  void migratesRelaysAnswersItsProbesAndStopsOnSigterm() throws Exception {
    String topicPrefix = KafkaTestSupport.uniqueTopic("image");
    int port = RunningRelay.freePort();
    String container = "outbox-relay-it-" + RUN_ID;
    try (TestDatabase db = TestDatabase.create("image_it")) {
      Path config = work.resolve("relay.conf");
      Files.writeString(config, config(db, topicPrefix), StandardCharsets.UTF_8);
      // Read by uid 10001 in the container.
      Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-r--r--"));
      List<String> common =
          List.of(
              "--network",
              "host",
              "-v",
              config + ":/etc/outbox-relay/relay.conf:ro",
              "-e",
              "APP_DB_PASSWORD=" + db.password(),
              "-e",
              "OUTBOX_RELAY_HTTP_PORT=" + port,
              "-e",
              "JAVA_OPTS=-Xmx256m -XX:+ExitOnOutOfMemoryError");

      Result migrate =
          podman(
              Duration.ofMinutes(3),
              concat(
                  List.of("run", "--rm"),
                  common,
                  List.of(TAG, "migrate", "--config", "/etc/outbox-relay/relay.conf")));
      assertThat(migrate.exitCode()).as(migrate.toString()).isZero();

      int events = OrderEvents.write(db, 20);

      // The image's default command: run --config /etc/outbox-relay/relay.conf. No health-check
      // timer (podman would need systemd for it): `podman healthcheck run` runs it below.
      Result started =
          podman(
              Duration.ofMinutes(2),
              concat(
                  List.of("run", "-d", "--name", container, "--health-interval", "disable"),
                  common,
                  List.of(TAG)));
      assertThat(started.exitCode()).as(started.toString()).isZero();
      try {
        List<ConsumerRecord<String, byte[]>> records =
            KafkaTestSupport.readRecords(topicPrefix + ".order", events, Duration.ofSeconds(90));
        assertThat(records).as(() -> "records; relay log:\n" + logs(container)).hasSize(events);
        await("every row marked published")
            .atMost(Duration.ofSeconds(30))
            .until(() -> OrderEvents.unpublished(db) == 0);

        HttpResponse<String> ready = get(port, "/health/ready");
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);

        Result health = podman(Duration.ofMinutes(1), "healthcheck", "run", container);
        assertThat(health.exitCode()).as("HEALTHCHECK: %s", health).isZero();
        // ... and it is not a rubber stamp: the same command against a port nobody serves fails.
        List<String> check = healthCheckCommand();
        Result wrongPort =
            podman(
                Duration.ofMinutes(1),
                concat(
                    List.of(
                        "exec",
                        "-e",
                        "OUTBOX_RELAY_HTTP_PORT=" + RunningRelay.freePort(),
                        container),
                    check,
                    List.of()));
        assertThat(wrongPort.exitCode())
            .as("health check on a closed port: %s", wrongPort)
            .isNotZero();

        assertThat(podmanOk("exec", container, "id", "-u").strip()).isEqualTo("10001");
      } finally {
        long t0 = System.nanoTime();
        Result stop =
            podman(
                Duration.ofMinutes(2),
                "stop",
                "--time",
                Long.toString(SHUTDOWN_TIMEOUT.toSeconds() + 30),
                container);
        Duration stopping = Duration.ofNanos(System.nanoTime() - t0);
        String log = logs(container);
        String exitCode = podmanOk("inspect", "--format", "{{.State.ExitCode}}", container).strip();
        podman(Duration.ofMinutes(1), "rm", "--force", container);
        System.out.printf("ImageIT: podman stop took %d ms%n", stopping.toMillis());
        assertThat(stop.exitCode()).as(stop.toString()).isZero();
        assertThat(exitCode).as("exit code after SIGTERM; log:\n%s", log).isEqualTo("0");
        assertThat(stopping)
            .as("stopped within shutdown-timeout (%s); log:\n%s", SHUTDOWN_TIMEOUT, log)
            .isLessThan(SHUTDOWN_TIMEOUT);
        assertThat(log).contains("outbox-relay stopped");
      }
    }
  }

  private static String config(TestDatabase db, String topicPrefix) {
    // http.port and the database password from the environment, as a deployment would: the
    // image's HEALTHCHECK follows OUTBOX_RELAY_HTTP_PORT too.
    return """
        outbox-relay {
          http { host = "127.0.0.1", port = 9400, port = ${?OUTBOX_RELAY_HTTP_PORT}, backlog-interval = 1s }
          shutdown-timeout = %ds
          pipelines.orders {
            database { url = "%s", user = "%s", password = "", password = ${?APP_DB_PASSWORD} }
            source { type = polling, polling.poll-interval = 250ms }
            sink.kafka.bootstrap-servers = "%s"
            routing.destination = "%s.${aggregate_type}"
          }
        }
        """
        .formatted(
            SHUTDOWN_TIMEOUT.toSeconds(),
            db.url(),
            db.user(),
            Services.kafkaBootstrap(),
            topicPrefix);
  }

  /** The image's HEALTHCHECK command (["CMD", args...]) as a command line. */
  private static List<String> healthCheckCommand() throws IOException {
    JsonNode test = inspectImage().path("Healthcheck").path("Test");
    assertThat(test.path(0).asText()).isEqualTo("CMD");
    List<String> command = new ArrayList<>();
    for (int i = 1; i < test.size(); i++) {
      command.add(test.path(i).asText());
    }
    return command;
  }

  /** {@code podman image inspect}: Config (User, StopSignal...) and Healthcheck. */
  private static JsonNode inspectImage() throws IOException {
    JsonNode all = JSON.readTree(podmanOk("image", "inspect", TAG));
    assertThat(all.size()).as("images inspected").isEqualTo(1);
    return all.get(0);
  }

  private static HttpResponse<String> get(int port, String path)
      throws IOException, InterruptedException {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(10))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String logs(String container) {
    Result logs = podman(Duration.ofMinutes(1), "logs", container);
    return logs.out() + logs.err();
  }

  private static String baseImage() {
    String base = System.getenv("OUTBOX_IMAGE_BASE");
    return base == null || base.isBlank() ? "localhost/outbox-relay-base:bookworm" : base;
  }

  /**
   * Why {@code command} cannot run (podman missing, or unable to run a container), in podman's own
   * words; null when it runs. Printed, since the reason of a skip is easily overlooked.
   */
  private static String podmanProblem(List<String> command, String what) {
    String reason;
    if (!onPath("podman")) {
      reason = "podman is not installed (scripts/services.sh up installs and configures it)";
    } else {
      Result result = exec(Duration.ofMinutes(3), command);
      if (result.exitCode() == 0) {
        return null;
      }
      reason = what + " (" + String.join(" ", command) + "):\n" + result;
    }
    System.out.println("ImageIT: podman unusable, the tests are skipped: " + reason);
    return reason;
  }

  private static boolean onPath(String program) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
        return true;
      }
    }
    return false;
  }

  /** scripts/image.sh, with the time it took printed (the report of the test's cost). */
  private static Result imageScript(Duration timeout, String... args) {
    List<String> command = new ArrayList<>();
    command.add(RepositoryFiles.path("scripts/image.sh").toString());
    command.addAll(List.of(args));
    long t0 = System.nanoTime();
    Result result = exec(timeout, command);
    System.out.printf(
        "ImageIT: scripts/image.sh %s: %d s%n",
        args[0], Duration.ofNanos(System.nanoTime() - t0).toSeconds());
    return result;
  }

  private static Result podman(Duration timeout, String... args) {
    List<String> command = new ArrayList<>();
    command.add("podman");
    command.addAll(List.of(args));
    return exec(timeout, command);
  }

  private static Result podman(Duration timeout, List<String> args) {
    return podman(timeout, args.toArray(String[]::new));
  }

  /** podman's standard output; fails the test when podman does. */
  private static String podmanOk(String... args) {
    Result result = podman(Duration.ofMinutes(2), args);
    assertThat(result.exitCode()).as("podman %s\n%s", String.join(" ", args), result).isZero();
    return result.out();
  }

  @SafeVarargs
  private static List<String> concat(List<String>... parts) {
    List<String> all = new ArrayList<>();
    for (List<String> part : parts) {
      all.addAll(part);
    }
    return all;
  }

  /** Runs {@code command} in the repository's root, killing it on timeout. */
  private static Result exec(Duration timeout, List<String> command) {
    return UnpackedDistribution.exec(
        RepositoryFiles.root(), Map.of(), command, timeout.toSeconds());
  }
}
