package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JVM options the relay runs with by default (docs/operations.md#jvm-options): the
 * distribution's launcher puts them before {@code JAVA_OPTS}, so that a user's own option of the
 * same name wins; the checkout's wrapper and the bench's relay run with the same ones, so that what
 * the bench measures is what a user runs.
 */
class LauncherJvmOptionsTest {

  /** The default options, as the launcher writes them. */
  private static final String DEFAULTS = "-XX:TieredStopAtLevel=1";

  @TempDir Path dir;

  @Test
  void theLauncherRunsJavaWithTheDefaultsFirstAndJavaOptsAfter() throws Exception {
    assertThat(launch(Map.of()))
        .startsWith(DEFAULTS, "-cp")
        .endsWith("io.outbox.relay.dist.DistributionMain", "--version");
    assertThat(launch(Map.of("JAVA_OPTS", "-Xmx256m -XX:TieredStopAtLevel=4")))
        .startsWith(DEFAULTS, "-Xmx256m", "-XX:TieredStopAtLevel=4", "-cp");
  }

  @Test
  void theCheckoutsWrapperAndTheBenchsRelayRunWithTheSameDefaults() {
    assertThat(RepositoryFiles.read("outbox-relay"))
        .contains("exec \"$java_bin\" " + DEFAULTS + " ${JAVA_OPTS:-}");
    assertThat(RepositoryFiles.read("bench/src/main/java/io/outbox/bench/RelayUnderTest.java"))
        .contains("JVM_DEFAULTS = List.of(\"" + DEFAULTS + "\")");
  }

  /**
   * The arguments {@code bin/outbox-relay --version} hands java, through a java that prints them.
   */
  private List<String> launch(Map<String, String> env) throws Exception {
    Path home = dir.resolve("home-" + env.hashCode());
    Files.createDirectories(home.resolve("bin"));
    Files.createDirectories(home.resolve("lib"));
    Path launcher = home.resolve("bin/outbox-relay");
    Files.copy(RepositoryFiles.path("dist/src/main/bin/outbox-relay"), launcher);
    Path java = home.resolve("java");
    Files.writeString(java, "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n");
    for (Path p : List.of(launcher, java)) {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    ProcessBuilder pb = new ProcessBuilder(launcher.toString(), "--version");
    pb.environment().remove("JAVA_OPTS");
    pb.environment().put("JAVA", java.toString());
    pb.environment().putAll(env);
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out.lines().toList();
  }
}
