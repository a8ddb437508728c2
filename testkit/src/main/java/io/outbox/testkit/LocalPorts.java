package io.outbox.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/** Free TCP ports for the private services of tests, and whether one accepts connections. */
public final class LocalPorts {

  private LocalPorts() {}

  /**
   * A port nothing listens on: one the system just gave out and took back (for a client that must
   * find no server, such as a sink's unreachable broker).
   */
  public static int unbound() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /**
   * Free ports below the ephemeral range: a client that keeps reconnecting to a stopped broker on
   * an ephemeral port may be given that very port as its own and connect to itself, which would
   * then keep the broker from binding it again.
   */
  static int[] free(String host, int count) {
    int[] ports = new int[count];
    int low = 20_000;
    int high = ephemeralLow() - 1;
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int found = 0, tries = 0; found < count; tries++) {
      if (tries > 1_000) {
        throw new IllegalStateException(
            "no free port in " + low + ".." + high + " after 1000 tries");
      }
      int candidate = high > low ? random.nextInt(low, high + 1) : 0;
      try (ServerSocket socket = new ServerSocket()) {
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getByName(host), candidate));
        int bound = socket.getLocalPort();
        if (java.util.Arrays.stream(ports, 0, found).noneMatch(taken -> taken == bound)) {
          ports[found++] = bound;
        }
      } catch (IOException e) {
        // Taken: try another.
      }
    }
    return ports;
  }

  private static int ephemeralLow() {
    // Read line-wise: readAllBytes/readString may see a procfs file as empty or cut short.
    try (BufferedReader reader =
        Files.newBufferedReader(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
      return Integer.parseInt(reader.readLine().strip().split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return 32_768; // Linux's default
    }
  }

  /** Whether something accepts TCP connections on {@code host:port} (within half a second). */
  static boolean accepts(String host, int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(host, port), 500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
