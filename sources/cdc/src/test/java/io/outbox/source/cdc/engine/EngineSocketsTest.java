package io.outbox.source.cdc.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class EngineSocketsTest {

  @Test
  void abortEndsABlockedReadAtOnceAndRefusesNewSockets() throws Exception {
    EngineSockets sockets = new EngineSockets();
    EngineSockets.Factory factory = new EngineSockets.Factory(sockets.register());
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Socket s = factory.createSocket();
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()));
      try (Socket peer = server.accept()) { // a peer that never answers
        assertThat(peer.isConnected()).isTrue();
        CompletableFuture<Integer> read = CompletableFuture.supplyAsync(() -> readOne(s));
        TimeUnit.MILLISECONDS.sleep(200);
        assertThat(read).isNotDone();
        assertThat(sockets.abort()).isEqualTo(1);
        assertThat(read.get(2, TimeUnit.SECONDS)).as("the blocked read failed").isEqualTo(-2);
      }
      assertThatThrownBy(factory::createSocket)
          .isInstanceOf(SocketException.class)
          .hasMessageContaining("engine was stopped");
    } finally {
      sockets.close();
    }
  }

  @Test
  void anUnknownRegistrationGivesPlainSockets() throws Exception {
    try (Socket s = new EngineSockets.Factory("gone").createSocket()) {
      assertThat(s.isConnected()).isFalse();
    }
  }

  private static int readOne(Socket s) {
    try {
      return s.getInputStream().read();
    } catch (Exception e) {
      return -2;
    }
  }
}
