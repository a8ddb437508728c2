package io.outbox.testkit;

import io.outbox.testkit.FaultProxy.Direction;
import io.outbox.testkit.FaultProxy.Mode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * One client connection through a {@link FaultProxy} and its connection to the target, with a pump
 * thread per direction that forwards, drops, holds back, delays or resets as that direction's mode
 * says.
 *
 * <p>The connection to the target is opened when the client's first byte is to be forwarded, or at
 * once when client to server passes at accept time: a connection accepted into a black hole and
 * given up by its client meanwhile never reaches the target (no half-logged-in sessions piling up
 * in the database's connection slots).
 */
final class ProxiedConnection {
  private static final int CHUNK = 16 * 1024;
  private static final int CONNECT_TIMEOUT_MS = 5_000;
  private static final Set<Mode.Kind> STALLED = EnumSet.of(Mode.Kind.STALL);
  private static final Set<Mode.Kind> SILENT = EnumSet.of(Mode.Kind.STALL, Mode.Kind.BLACKHOLE);

  private final FaultProxy proxy;
  private final Socket client;
  private final InetSocketAddress target;
  private final String name;
  private final Consumer<ProxiedConnection> onClose;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicInteger pumpsRunning = new AtomicInteger();
  private volatile Socket server; // null until connected
  private volatile boolean aborted; // closed by reset()

  ProxiedConnection(
      FaultProxy proxy,
      Socket client,
      InetSocketAddress target,
      String name,
      Consumer<ProxiedConnection> onClose) {
    this.proxy = proxy;
    this.client = client;
    this.target = target;
    this.name = name;
    this.onClose = onClose;
  }

  /** Starts pumping; connects to the target first unless client to server is silent now. */
  void start() {
    pumpsRunning.incrementAndGet();
    if (!SILENT.contains(proxy.mode(Direction.CLIENT_TO_SERVER).kind())) {
      try {
        connectServer();
      } catch (IOException e) {
        pumpsRunning.decrementAndGet();
        reset(); // the client sees the refusal as a reset
        return;
      }
    }
    thread(this::pumpUp, name + "-up").start();
  }

  boolean closed() {
    return closed.get();
  }

  /** Closes both sockets with an RST. */
  void reset() {
    aborted = true;
    if (closed.compareAndSet(false, true)) {
      abort(client);
      Socket s = server;
      if (s != null) {
        abort(s);
      }
      onClose.accept(this);
    }
  }

  /** Closes both sockets normally (FIN). */
  void close() {
    if (closed.compareAndSet(false, true)) {
      quietly(client);
      Socket s = server;
      if (s != null) {
        quietly(s);
      }
      onClose.accept(this);
    }
  }

  /** Closes {@code socket} with {@code SO_LINGER 0}: the peer gets an RST, not a FIN. */
  static void abort(Socket socket) {
    try {
      socket.setSoLinger(true, 0);
    } catch (IOException e) {
      // not connected, or closed already: closing is all there is left
    }
    try {
      socket.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  private static void quietly(Socket socket) {
    try {
      if (socket.isConnected() && !socket.isClosed() && !socket.isOutputShutdown()) {
        socket.shutdownOutput(); // a FIN even while a pump is blocked reading this socket
      }
    } catch (IOException e) {
      // closing anyway
    }
    try {
      socket.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  private synchronized void connectServer() throws IOException {
    if (server != null) {
      return;
    }
    Socket s = new Socket();
    try {
      s.connect(target, CONNECT_TIMEOUT_MS);
    } catch (IOException e) {
      abort(s);
      throw e;
    }
    try {
      s.setTcpNoDelay(true);
      client.setTcpNoDelay(true);
    } catch (SocketException e) {
      // latency only; a client gone meanwhile is noticed below or by the pumps
    }
    server = s;
    if (closed()) { // closed while connecting: the same way
      if (aborted) {
        abort(s);
      } else {
        quietly(s);
      }
      return;
    }
    pumpsRunning.incrementAndGet();
    thread(this::pumpDown, name + "-down").start();
  }

  private Thread thread(Runnable pump, String threadName) {
    Thread t = new Thread(pump, threadName);
    t.setDaemon(true);
    return t;
  }

  private void pumpUp() {
    pump(Direction.CLIENT_TO_SERVER, client);
  }

  private void pumpDown() {
    pump(Direction.SERVER_TO_CLIENT, server);
  }

  private void pump(Direction direction, Socket from) {
    byte[] chunk = new byte[CHUNK];
    try {
      InputStream in = from.getInputStream();
      while (proxy.awaitModeOtherThan(direction, this, STALLED) != null) {
        int n = in.read(chunk);
        if (n < 0) {
          endOfStream(direction);
          break;
        }
        // A chunk read just before the direction stalled waits too.
        Mode mode = proxy.awaitModeOtherThan(direction, this, STALLED);
        if (mode == null) {
          break;
        }
        if (mode.kind() == Mode.Kind.BLACKHOLE) {
          continue; // dropped
        }
        if (mode.kind() == Mode.Kind.RESET) {
          reset();
          break;
        }
        if (mode.kind() == Mode.Kind.LATENCY) {
          TimeUnit.NANOSECONDS.sleep(mode.delay().toNanos());
        }
        OutputStream out = destination(direction).getOutputStream();
        out.write(chunk, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      reset(); // a reset or a failed write at one end resets the other
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      reset();
    } finally {
      if (pumpsRunning.decrementAndGet() == 0) {
        close();
      }
    }
  }

  private Socket destination(Direction direction) throws IOException {
    if (direction == Direction.SERVER_TO_CLIENT) {
      return client;
    }
    connectServer();
    return server;
  }

  /** Passes the FIN on once the direction is no longer silent; the other direction may go on. */
  private void endOfStream(Direction direction) throws IOException, InterruptedException {
    if (direction == Direction.CLIENT_TO_SERVER && server == null) {
      return; // the target never saw this connection: nothing to tell it
    }
    if (proxy.awaitModeOtherThan(direction, this, SILENT) != null) {
      Socket to = direction == Direction.CLIENT_TO_SERVER ? server : client;
      try {
        to.shutdownOutput();
      } catch (SocketException e) {
        // the other end is gone already
      }
    }
  }
}
