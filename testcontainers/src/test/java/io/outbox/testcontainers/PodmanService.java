package io.outbox.testcontainers;

import java.io.File;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The Docker API Testcontainers talks to: {@code podman system service} on the socket of {@code
 * DOCKER_HOST}, started here unless something answers there already, stopped by {@link #close()}
 * when started here.
 */
final class PodmanService implements AutoCloseable {
  private final Process process;

  private PodmanService(Process process) {
    this.process = process;
  }

  /** Serves {@code socket} (a {@code unix://} address) unless it answers already. */
  static PodmanService serve(String dockerHost, Path log) throws IOException, InterruptedException {
    if (!dockerHost.startsWith("unix://")) {
      throw new IllegalArgumentException("DOCKER_HOST is not a unix socket: " + dockerHost);
    }
    Path socket = Path.of(dockerHost.substring("unix://".length()));
    if (answers(socket)) {
      return new PodmanService(null);
    }
    Files.deleteIfExists(socket); // a stale one, left by a killed run
    Process process =
        new ProcessBuilder(List.of("podman", "system", "service", "--time=0", dockerHost))
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    PodmanService service = new PodmanService(process);
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!answers(socket)) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        service.close();
        throw new IllegalStateException(
            "podman system service " + dockerHost + " did not answer:\n" + Files.readString(log));
      }
      // The service's own start-up: no event to wait on but the socket answering.
      Thread.sleep(100);
    }
    return service;
  }

  /** Whether the Docker API answers {@code GET /_ping} with OK on {@code socket}. */
  static boolean answers(Path socket) {
    if (!Files.exists(socket)) {
      return false;
    }
    try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      channel.connect(UnixDomainSocketAddress.of(socket));
      channel.write(
          ByteBuffer.wrap(
              "GET /_ping HTTP/1.0\r\nHost: d\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
      ByteBuffer answer = ByteBuffer.allocate(1024);
      while (channel.read(answer) >= 0 && answer.hasRemaining()) {
        // until the server closes (HTTP/1.0) or the buffer is full
      }
      String text = new String(answer.array(), 0, answer.position(), StandardCharsets.US_ASCII);
      return text.startsWith("HTTP/1.") && text.contains(" 200 ");
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public void close() {
    if (process == null) {
      return;
    }
    process.destroy(); // SIGTERM: podman removes its socket
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
