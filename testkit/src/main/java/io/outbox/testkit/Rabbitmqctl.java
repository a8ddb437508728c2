package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code rabbitmqctl} against the shared RabbitMQ of {@code scripts/services.sh} (stop_app,
 * start_app, a memory alarm): for the tests that stop, start or strain that broker.
 */
public final class Rabbitmqctl {
  private Rabbitmqctl() {}

  /**
   * Runs {@code rabbitmqctl <args...>}, asserts that it exits with 0 within {@code timeout}, and
   * returns what it printed (stdout and stderr, trimmed).
   */
  public static String run(Duration timeout, String... args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("rabbitmqctl"));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException(command + " did not finish in " + timeout.toSeconds() + " s");
    }
    String text = new String(out, StandardCharsets.UTF_8).trim();
    assertThat(p.exitValue()).as("exit code of %s (%s)", command, text).isZero();
    return text;
  }
}
