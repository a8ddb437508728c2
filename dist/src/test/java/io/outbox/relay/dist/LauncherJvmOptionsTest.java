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

  /** The default collector, left out when an option names another. */
  private static final String DEFAULT_GC = "-XX:+UseSerialGC";

  @TempDir Path dir;

  @Test
  void theLauncherRunsJavaWithTheDefaultsFirstAndJavaOptsAfter() throws Exception {
    assertThat(launch(Map.of()))
        .startsWith(DEFAULTS, DEFAULT_GC, "-cp")
        .endsWith("io.outbox.relay.dist.DistributionMain", "--version");
    assertThat(launch(Map.of("JAVA_OPTS", "-Xmx256m -XX:TieredStopAtLevel=4")))
        .startsWith(DEFAULTS, DEFAULT_GC, "-Xmx256m", "-XX:TieredStopAtLevel=4", "-cp");
  }

  @Test
  void aCollectorNamedInTheEnvironmentReplacesTheDefaultOneSinceTwoStopTheJvm() throws Exception {
    assertThat(launch(Map.of("JAVA_OPTS", "-Xmx1g -XX:+UseG1GC")))
        .startsWith(DEFAULTS, "-Xmx1g", "-XX:+UseG1GC", "-cp");
    // java reads these three itself: the launcher only has to leave its default out.
    for (String variable : List.of("JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS")) {
      assertThat(launch(Map.of(variable, "-XX:+UseParallelGC")))
          .as(variable)
          .startsWith(DEFAULTS, "-cp")
          .doesNotContain(DEFAULT_GC);
    }
    // An option is a word, not a file pattern: a file in the working directory that "-Xlog:gc*"
    // would match changes nothing.
    Files.createFile(dir.resolve("-Xlog:gc-file"));
    assertThat(launch(Map.of("JAVA_OPTS", "-Xlog:gc*")))
        .startsWith(DEFAULTS, DEFAULT_GC, "-Xlog:gc*", "-cp");
    // An option that merely mentions GC is not a collector.
    assertThat(launch(Map.of("JAVA_OPTS", "-XX:+UseGCOverheadLimit -XX:+DisableExplicitGC")))
        .startsWith(DEFAULTS, DEFAULT_GC, "-XX:+UseGCOverheadLimit");
  }

  @Test
  void theCheckoutsWrapperAndTheBenchsRelayRunWithTheSameDefaults() {
    String launcher = RepositoryFiles.read("dist/src/main/bin/outbox-relay");
    String wrapper = RepositoryFiles.read("outbox-relay");
    assertThat(wrapper).contains("exec \"$java_bin\" " + DEFAULTS + " $gc ${JAVA_OPTS:-}");
    assertThat(wrapper).contains(collectorChoice(launcher));
    String bench = RepositoryFiles.read("bench/src/main/java/io/outbox/bench/RelayUnderTest.java");
    assertThat(bench).contains("JVM_DEFAULTS = List.of(\"" + DEFAULTS + "\")");
    assertThat(bench).contains("DEFAULT_GC = \"" + DEFAULT_GC + "\"");
  }

  /** The launcher's lines that choose the collector, from {@code gc=} to the loop's end. */
  private static String collectorChoice(String launcher) {
    int start = launcher.indexOf("gc=" + DEFAULT_GC);
    int end = launcher.indexOf("done", start);
    assertThat(start).as("the launcher's default collector").isNotNegative();
    return launcher.substring(start, end + "done".length());
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
    ProcessBuilder pb =
        new ProcessBuilder(launcher.toString(), "--version").directory(dir.toFile());
    for (String variable :
        List.of("JAVA_OPTS", "JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS")) {
      pb.environment().remove(variable);
    }
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
