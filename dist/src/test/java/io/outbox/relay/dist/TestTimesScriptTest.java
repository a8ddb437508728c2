package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * scripts/test-times.sh, the report scripts/test.sh prints after Maven, never fails a run: on a
 * suite of many classes its listing of the slowest ones once ended in SIGPIPE (exit 141) under
 * {@code pipefail}, and CI failed a run whose 969 tests had all passed.
 */
class TestTimesScriptTest {
  private static final int CLASSES = 300;
  private static final int RUNS = 3;

  @TempDir Path checkout;

  @Test
  void listsTheSlowestClassesOfALargeSuiteWithExitZeroEveryTime() throws Exception {
    Path scripts = Files.createDirectories(checkout.resolve("scripts"));
    Files.copy(RepositoryFiles.path("scripts/test-times.sh"), scripts.resolve("test-times.sh"));
    Path reports = Files.createDirectories(checkout.resolve("module/target/failsafe-reports"));
    for (int i = 1; i <= CLASSES; i++) {
      Files.writeString(
          reports.resolve("TEST-io.outbox.example.AnIntegrationTestClass" + i + "IT.xml"),
          "<?xml version=\"1.0\"?>\n<testsuite name=\"io.outbox.example.AnIntegrationTestClass"
              + i
              + "IT\" time=\""
              + i
              + ".5\" tests=\"2\" errors=\"0\" skipped=\"0\" failures=\"0\">\n</testsuite>\n");
    }
    for (int run = 1; run <= RUNS; run++) {
      Process process =
          new ProcessBuilder("bash", "scripts/test-times.sh", "--top", "1")
              .directory(checkout.toFile())
              .redirectErrorStream(true)
              .start();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("run %d ends", run).isTrue();
      assertThat(process.exitValue())
          .as("run %d's exit status; it printed:%n%s", run, output)
          .isZero();
      assertThat(output)
          .contains("AnIntegrationTestClass" + CLASSES + "IT")
          .doesNotContain("AnIntegrationTestClass" + (CLASSES - 1) + "IT")
          .contains("tests: " + (2 * CLASSES) + " passed, 0 failed, 0 skipped");
    }
  }
}
