package io.outbox.connect;

import io.outbox.testkit.PrivateKafka;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
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

  /**
   * A standalone worker of its own on {@code port}: at least once (standalone workers have no
   * exactly-once source support), the plug-in just built, the converters of {@code services.sh}'s
   * workers plus {@code extra} (say, {@code producer.*} keys), and {@code classpath} on its class
   * path (a test's producer interceptor). Stopped by {@link Standalone#close()}.
   */
  Standalone standalone(int port, Map<String, String> extra, Path classpath) throws IOException {
    run("fetch");
    Path lib = root.resolve(".run/connect/lib");
    Path dir = root.resolve(".run/connect/standalone-" + port);
    Files.createDirectories(dir);
    StringBuilder props = new StringBuilder();
    props.append("bootstrap.servers=127.0.0.1:9092\n");
    props.append("listeners=http://127.0.0.1:").append(port).append('\n');
    props.append("offset.storage.file.filename=").append(dir.resolve("offsets")).append('\n');
    props.append("offset.flush.interval.ms=1000\n");
    props.append("key.converter=org.apache.kafka.connect.storage.StringConverter\n");
    props.append("value.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n");
    props.append("header.converter=org.apache.kafka.connect.storage.StringConverter\n");
    props.append("plugin.path=").append(root.resolve("connect/target/plugin")).append('\n');
    props.append("plugin.discovery=service_load\n");
    extra.forEach((k, v) -> props.append(k).append('=').append(v).append('\n'));
    Files.deleteIfExists(dir.resolve("offsets"));
    Files.writeString(dir.resolve("worker.properties"), props.toString());
    Files.writeString(dir.resolve("logback.xml"), PrivateKafka.LOGBACK);
    Path log = dir.resolve("worker.log");
    Process p =
        new ProcessBuilder(
                "java",
                "-Xms128m",
                "-Xmx512m",
                // A test's worker: C1 and a serial GC start it sooner on two cores.
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-Dlogback.configurationFile=" + dir.resolve("logback.xml"),
                "-cp",
                lib + "/*:" + classpath,
                "org.apache.kafka.connect.cli.ConnectStandalone",
                dir.resolve("worker.properties").toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    Standalone worker = new Standalone(p, log);
    try {
      worker.awaitRest(port, Duration.ofMinutes(3));
    } catch (RuntimeException e) {
      worker.close();
      throw e;
    }
    return worker;
  }

  /** A worker of {@link #standalone}: its process and log. */
  record Standalone(Process process, Path log) implements AutoCloseable {

    private void awaitRest(int port, Duration timeout) {
      HttpClient http = HttpClient.newHttpClient();
      long deadline = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < deadline) {
        if (!process.isAlive()) {
          throw new IllegalStateException("the standalone worker exited; see " + log);
        }
        try {
          HttpResponse<Void> r =
              http.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/connectors"))
                      .build(),
                  HttpResponse.BodyHandlers.discarding());
          if (r.statusCode() == 200) {
            return;
          }
        } catch (IOException e) {
          // not listening yet
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
        try {
          Thread.sleep(200);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
      throw new IllegalStateException(
          "the standalone worker did not answer on "
              + port
              + " within "
              + timeout
              + "; see "
              + log);
    }

    @Override
    public void close() {
      process.destroy();
      try {
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
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
