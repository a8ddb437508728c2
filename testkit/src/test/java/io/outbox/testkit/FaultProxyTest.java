package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.FaultProxy.Direction;
import io.outbox.testkit.FaultProxy.Mode;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Each mode of {@link FaultProxy}, seen by a plain client socket and a plain server socket. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FaultProxyTest {
  private static final int QUIET_MS = 300;

  private ServerSocket target;
  private FaultProxy proxy;

  @BeforeEach
  void setUp() throws IOException {
    target = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    proxy = FaultProxy.start("127.0.0.1", target.getLocalPort());
  }

  @AfterEach
  void tearDown() throws IOException {
    proxy.close();
    target.close();
  }

  @Test
  void passesBytesBothWays() throws IOException {
    try (Pair p = connect()) {
      p.send(p.client, "ping");
      assertThat(p.receive(p.server, 4)).isEqualTo("ping");
      p.send(p.server, "pong");
      assertThat(p.receive(p.client, 4)).isEqualTo("pong");
      assertThat(proxy.openConnections()).isEqualTo(1);
    }
  }

  @Test
  void blackholeDropsEverythingWhileItLastsAndAcceptsNewConnections() throws IOException {
    try (Pair open = connect()) {
      proxy.set(Mode.BLACKHOLE);
      open.send(open.client, "lost-");
      open.send(open.server, "gone");
      assertQuiet(open.server);
      assertQuiet(open.client);

      // A new connection is accepted as usual; nothing flows, not even to the target.
      try (Socket late = new Socket()) {
        late.connect(new InetSocketAddress("127.0.0.1", proxy.port()), 2_000);
        late.getOutputStream().write('x');
        target.setSoTimeout(QUIET_MS);
        assertThatThrownBy(target::accept).isInstanceOf(SocketTimeoutException.class);

        proxy.set(Mode.PASS);
        open.send(open.client, "after");
        assertThat(open.receive(open.server, 5)).isEqualTo("after");
        open.send(open.server, "back");
        assertThat(open.receive(open.client, 4)).isEqualTo("back");
        late.getOutputStream().write('y');
        target.setSoTimeout(5_000);
        try (Pair second = new Pair(late, target.accept())) {
          assertThat(second.receive(second.server, 1)).isEqualTo("y");
        }
      }

      proxy.set(Mode.BLACKHOLE);
      open.client.shutdownOutput();
      assertQuiet(open.server); // the FIN waits too
      proxy.set(Mode.PASS);
      assertThat(open.server.getInputStream().read()).as("the held FIN").isEqualTo(-1);
    }
  }

  @Test
  void stallForwardsNothingUntilItPassesAgainThenDeliversInOrder() throws IOException {
    try (Pair open = connect()) {
      proxy.set(Mode.STALL);
      open.send(open.client, "held-");
      open.send(open.server, "back");
      assertQuiet(open.server);
      assertQuiet(open.client);

      proxy.set(Mode.PASS);
      open.send(open.client, "after");
      assertThat(open.receive(open.server, 10)).isEqualTo("held-after");
      assertThat(open.receive(open.client, 4)).isEqualTo("back");
    }
  }

  @Test
  void blackholeOfOneDirectionLeavesTheOtherFlowing() throws IOException {
    try (Pair p = connect()) {
      proxy.set(Direction.SERVER_TO_CLIENT, Mode.BLACKHOLE);
      p.send(p.client, "query");
      assertThat(p.receive(p.server, 5)).isEqualTo("query");
      p.send(p.server, "answer");
      assertQuiet(p.client);
      assertThat(proxy.mode(Direction.CLIENT_TO_SERVER)).isEqualTo(Mode.PASS);
    }
  }

  @Test
  void resetSendsRstToBothEndsAndResetsNewConnections() throws IOException {
    try (Pair p = connect()) {
      proxy.set(Direction.CLIENT_TO_SERVER, Mode.RESET);
      assertThatThrownBy(() -> p.client.getInputStream().read())
          .isInstanceOf(SocketException.class)
          .hasMessageContaining("reset");
      assertThatThrownBy(() -> p.server.getInputStream().read())
          .isInstanceOf(SocketException.class)
          .hasMessageContaining("reset");
      await().atMost(Duration.ofSeconds(5)).until(() -> proxy.openConnections() == 0);
    }
    int acceptedBefore = proxy.acceptedConnections();
    try (Socket refused = new Socket("127.0.0.1", proxy.port())) {
      refused.setSoTimeout(5_000);
      assertThatThrownBy(() -> refused.getInputStream().read())
          .isInstanceOf(SocketException.class)
          .hasMessageContaining("reset");
    }
    assertThat(proxy.acceptedConnections()).isEqualTo(acceptedBefore + 1);

    proxy.set(Mode.PASS);
    try (Pair p = connect()) {
      p.send(p.client, "again");
      assertThat(p.receive(p.server, 5)).isEqualTo("again");
    }
  }

  @Test
  void latencyDelaysEachChunkOfItsDirectionOnly() throws IOException {
    Duration delay = Duration.ofMillis(400);
    try (Pair p = connect()) {
      proxy.set(Direction.CLIENT_TO_SERVER, Mode.latency(delay));
      long t0 = System.nanoTime();
      p.send(p.client, "slow");
      assertThat(p.receive(p.server, 4)).isEqualTo("slow");
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(delay);

      p.send(p.server, "fast");
      assertThat(p.receive(p.client, 4)).isEqualTo("fast");
    }
  }

  @Test
  void closeEndsEveryConnectionAndStopsListening() throws IOException {
    try (Pair p = connect()) {
      proxy.close();
      assertThat(ended(p.client)).as("the connection ended at the client").isTrue();
      assertThat(ended(p.server)).as("the connection ended at the server").isTrue();
      assertThatThrownBy(() -> new Socket("127.0.0.1", proxy.port()).close())
          .isInstanceOf(IOException.class);
    }
  }

  @Test
  void rejectsANegativeLatency() {
    assertThatThrownBy(() -> Mode.latency(Duration.ofMillis(-1)))
        .hasMessageContaining("delay must not be negative: PT-0.001S");
  }

  /**
   * Whether the connection ended: end of stream, or a reset (a close that races the proxy's own
   * connect to the target resets, and a full run once saw the client's end that way).
   */
  private static boolean ended(Socket socket) throws IOException {
    try {
      return socket.getInputStream().read() == -1;
    } catch (SocketException e) {
      return e.getMessage() != null && e.getMessage().contains("Connection reset");
    }
  }

  private Pair connect() throws IOException {
    Socket client = new Socket("127.0.0.1", proxy.port());
    return new Pair(client, target.accept());
  }

  private static void assertQuiet(Socket socket) throws IOException {
    socket.setSoTimeout(QUIET_MS);
    InputStream in = socket.getInputStream();
    assertThatThrownBy(in::read).isInstanceOf(SocketTimeoutException.class);
  }

  /** Both ends of one connection through the proxy. */
  private record Pair(Socket client, Socket server) implements AutoCloseable {

    void send(Socket from, String text) throws IOException {
      from.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
      from.getOutputStream().flush();
    }

    String receive(Socket at, int bytes) throws IOException {
      at.setSoTimeout(5_000);
      byte[] read = at.getInputStream().readNBytes(bytes);
      return new String(read, StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
      client.close();
      server.close();
    }
  }
}
