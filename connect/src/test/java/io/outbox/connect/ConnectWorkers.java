package io.outbox.connect;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The two workers of {@code scripts/services.sh connect up} (ports 8083 and 8084), for tests:
 * started fresh so that they load the plug-in just built, stopped again after.
 */
final class ConnectWorkers {

  static final int[] PORTS = {8083, 8084};

  /** The workers' {@code offset.storage.topic} (services.sh). */
  static final String OFFSETS_TOPIC = "outbox-relay-connect-offsets";

  private final Path root;

  ConnectWorkers(Path root) {
    this.root = root;
  }

  /** The repository root, seen from the module directory the tests run in. */
  static ConnectWorkers ofThisCheckout() {
    return new ConnectWorkers(Path.of("").toAbsolutePath().getParent());
  }

  void restart() {
    run("down");
    run("up");
  }

  void down() {
    run("down");
  }

  /** The pid of the worker on {@code port}, as services.sh wrote it. */
  long pid(int port) throws IOException {
    return Long.parseLong(
        Files.readString(root.resolve(".run/connect/worker-" + port + ".pid")).trim());
  }

  private void run(String command) {
    try {
      Path log = root.resolve(".run/connect-it-services.log");
      Files.createDirectories(log.getParent());
      Process p =
          new ProcessBuilder(root.resolve("scripts/services.sh").toString(), "connect", command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .start();
      if (!p.waitFor(12, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new IllegalStateException("services.sh connect " + command + " took over 12 min");
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            "services.sh connect "
                + command
                + " failed; see "
                + log
                + ":\n"
                + Files.readString(log));
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
