package io.outbox.relay.dist;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The archive Maven built ({@code target/outbox-relay-<version>.tar.gz}), unpacked with {@code tar}
 * (so file modes are the archive's) into a directory of the test's, and its launcher run as a
 * separate process, as a user would.
 */
final class UnpackedDistribution {
  private static final long COMMAND_TIMEOUT_SECONDS = 120;

  private final Path home;

  private UnpackedDistribution(Path home) {
    this.home = home;
  }

  /** The archive built by this module's {@code package} phase (set by failsafe's configuration). */
  static Path archive() {
    String path = System.getProperty("outbox.dist.archive");
    if (path == null) {
      throw new IllegalStateException(
          "system property outbox.dist.archive is not set: run through Maven (mvn verify -pl dist -am)");
    }
    Path archive = Path.of(path);
    if (!Files.isRegularFile(archive)) {
      throw new IllegalStateException(archive + " does not exist: the package phase builds it");
    }
    return archive;
  }

  /** The project version, which names the archive's top directory. */
  static String version() {
    return System.getProperty("outbox.dist.version", "0.1.0-SNAPSHOT");
  }

  /** Unpacks {@link #archive()} into {@code dir}; the distribution's root is its one directory. */
  static UnpackedDistribution unpack(Path dir) {
    Result tar =
        exec(dir, Map.of(), List.of("tar", "-xzf", archive().toString(), "-C", dir.toString()));
    if (tar.exitCode() != 0) {
      throw new IllegalStateException("tar -xzf " + archive() + " failed: " + tar);
    }
    // outbox-relay-<version>, or outbox-relay-slim-<version> (dist/slim's tests).
    String name = archive().getFileName().toString().replaceFirst("\\.tar\\.gz$", "");
    return new UnpackedDistribution(dir.resolve(name));
  }

  /** A distribution unpacked elsewhere, whose root is {@code home}. */
  static UnpackedDistribution at(Path home) {
    return new UnpackedDistribution(home);
  }

  Path home() {
    return home;
  }

  Path launcher() {
    return home.resolve("bin/outbox-relay");
  }

  /** Runs {@code bin/outbox-relay args...} in the distribution's root and waits for it. */
  Result run(String... args) {
    return run(Map.of(), args);
  }

  /** As {@link #run(String...)}, with extra environment variables. */
  Result run(Map<String, String> env, String... args) {
    return exec(home, env, command(launcher(), args));
  }

  /** Starts {@code launcher args...} with output and error in {@code log}; does not wait. */
  static Process start(Path launcher, Path workDir, Path log, String... args) {
    return start(launcher, workDir, log, Map.of(), args);
  }

  /** As {@link #start(Path, Path, Path, String...)}, with extra environment variables. */
  static Process start(
      Path launcher, Path workDir, Path log, Map<String, String> env, String... args) {
    try {
      return builder(workDir, env, command(launcher, args))
          .redirectErrorStream(true)
          .redirectOutput(log.toFile())
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + launcher, e);
    }
  }

  private static List<String> command(Path launcher, String... args) {
    List<String> command = new ArrayList<>();
    command.add(launcher.toString());
    command.addAll(List.of(args));
    return command;
  }

  /**
   * Runs {@code command} in {@code dir}, capturing both streams through files (no pipe deadlock).
   */
  static Result exec(Path dir, Map<String, String> env, List<String> command) {
    return exec(dir, env, command, COMMAND_TIMEOUT_SECONDS);
  }

  /** As {@link #exec(Path, Map, List)}, waiting at most {@code timeoutSeconds}. */
  static Result exec(Path dir, Map<String, String> env, List<String> command, long timeoutSeconds) {
    try {
      Path out = Files.createTempFile("outbox-dist-", ".out");
      Path err = Files.createTempFile("outbox-dist-", ".err");
      try {
        Process process =
            builder(dir, env, command)
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
          process.descendants().forEach(ProcessHandle::destroyForcibly);
          process.destroyForcibly();
          throw new IllegalStateException(
              command
                  + " did not finish within "
                  + timeoutSeconds
                  + " s; its stderr:\n"
                  + Files.readString(err, StandardCharsets.UTF_8));
        }
        return new Result(
            process.exitValue(),
            Files.readString(out, StandardCharsets.UTF_8),
            Files.readString(err, StandardCharsets.UTF_8));
      } finally {
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + command, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + command, e);
    }
  }

  private static ProcessBuilder builder(Path dir, Map<String, String> env, List<String> command) {
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    // Small JVMs (two cores and several builds at once on the test machines), otherwise the
    // launcher's defaults, as users run it: no C2 compiler, the serial collector.
    builder.environment().put("JAVA_OPTS", "-Xmx256m");
    builder.environment().putAll(env);
    return builder;
  }

  /** A tool on the PATH; fails with the way to install it when it is missing. */
  static String tool(String name) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
        return Path.of(dir, name).toString();
      }
    }
    throw new AssertionError(
        name
            + " is not on the PATH: `scripts/services.sh up` installs it (scripts/test.sh runs it)");
  }

  /** A finished process: exit code and both streams. */
  record Result(int exitCode, String out, String err) {
    @Override
    public String toString() {
      return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }
}
