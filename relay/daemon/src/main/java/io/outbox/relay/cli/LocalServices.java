package io.outbox.relay.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The checkout's local services ({@code scripts/services.sh}), which {@code demo} and {@code bench}
 * start unless told the services already run.
 */
public final class LocalServices {
  private LocalServices() {}

  /** The checkout (or distribution) root: OUTBOX_RELAY_HOME, set by the launcher, or ".". */
  public static Path home() {
    String env = System.getenv("OUTBOX_RELAY_HOME");
    return Path.of(env != null && !env.isBlank() ? env : ".").toAbsolutePath().normalize();
  }

  /**
   * Runs {@code scripts/services.sh up} of {@code home} (idempotent: it starts what does not
   * answer), its output inherited; when the script is missing, says so and assumes the services
   * run.
   *
   * @param command the command name for the messages, e.g. {@code demo}
   * @throws CommandFailedException when the script fails or takes more than 10 minutes
   */
  public static void up(Path home, PrintWriter out, String command) throws InterruptedException {
    Path script = home.resolve("scripts/services.sh");
    if (!Files.isExecutable(script)) {
      out.println(command + ": " + script + " not found; assuming the services already run");
      return;
    }
    out.println(command + ": starting the local services (" + script + " up)...");
    out.flush();
    Process p;
    try {
      p =
          new ProcessBuilder(script.toString(), "up")
              .directory(home.toFile())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.INHERIT)
              .start();
    } catch (IOException e) {
      throw new CommandFailedException("cannot run " + script + ": " + e.getMessage());
    }
    if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new CommandFailedException(
          "scripts/services.sh up failed (exit " + (p.isAlive() ? "timeout" : p.exitValue()) + ")");
    }
  }
}
