package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.dist.UnpackedDistribution.Result;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deployment files validated by the tools that read them: {@code docker-compose config}
 * (Debian's docker-compose 1.29, which {@code scripts/services.sh up} installs) for
 * docker-compose.yml, and {@code promtool} (unpacked from Debian's prometheus package by the same
 * script) for the Prometheus configuration and the behaviour of the alert rules.
 */
class DeploymentFilesIT {

  @Test
  void composeFileValidates() {
    Result config = compose(RepositoryFiles.root(), "docker-compose.yml");
    assertThat(config.exitCode()).as(config.toString()).isZero();
  }

  @Test
  void composeValidationRejectsABrokenFile(@TempDir Path dir) throws IOException {
    // The validator is not a rubber stamp: a dependency condition compose does not know fails.
    String broken =
        RepositoryFiles.read("docker-compose.yml")
            .replace("condition: service_completed_successfully", "condition: service_finished");
    Files.writeString(dir.resolve("docker-compose.yml"), broken, StandardCharsets.UTF_8);
    Result config = compose(dir, "docker-compose.yml");
    assertThat(config.exitCode()).as(config.toString()).isNotZero();
    assertThat(config.out() + config.err()).contains("service_finished");
  }

  @Test
  void prometheusConfigurationAndRulesAreValid() {
    Result check =
        UnpackedDistribution.exec(
            RepositoryFiles.root(),
            Map.of(),
            List.of(
                UnpackedDistribution.tool("promtool"),
                "check",
                "config",
                "config/prometheus/prometheus.yml"));
    assertThat(check.exitCode()).as(check.toString()).isZero();
    assertThat(check.out()).contains("SUCCESS: 1 rule files found");
  }

  @Test
  void alertRulesFireAsIntended(@TempDir Path dir) throws IOException {
    Files.copy(RepositoryFiles.path("config/prometheus/alerts.yml"), dir.resolve("alerts.yml"));
    try (InputStream cases = getClass().getResourceAsStream("/prometheus/alerts-test.yml")) {
      assertThat(cases).as("test resource prometheus/alerts-test.yml").isNotNull();
      Files.copy(cases, dir.resolve("alerts-test.yml"), StandardCopyOption.REPLACE_EXISTING);
    }
    Result test =
        UnpackedDistribution.exec(
            dir,
            Map.of(),
            List.of(UnpackedDistribution.tool("promtool"), "test", "rules", "alerts-test.yml"));
    assertThat(test.exitCode()).as(test.toString()).isZero();
    assertThat(test.out()).contains("SUCCESS");
  }

  private static Result compose(Path dir, String file) {
    return UnpackedDistribution.exec(
        dir,
        Map.of(),
        List.of(UnpackedDistribution.tool("docker-compose"), "-f", file, "config", "-q"));
  }
}
