package io.outbox.testkit;

import io.outbox.testkit.FaultProxy.Direction;
import io.outbox.testkit.FaultProxy.Mode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One client connection through a {@link FaultProxy} and its connection to the target, with a pump
 * thread per direction that forwards, drops, holds back, delays or resets as that direction's mode
 * says.
 */
final class ProxiedConnection {
  private static final int CHUNK = 16 * 1024;
  private static final Set<Mode.Kind> STALLED = EnumSet.of(Mode.Kind.STALL);
  private static final Set<Mode.Kind> SILENT = EnumSet.of(Mode.Kind.STALL, Mode.Kind.BLACKHOLE);

  private final FaultProxy proxy;
  private final Socket client;
  private final Socket server;
  private final String name;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicInteger pumpsRunning = new AtomicInteger(2);
  private Runnable onClose = () -> {};

  ProxiedConnection(FaultProxy proxy, Socket client, Socket server, String name) {
    this.proxy = proxy;
    this.client = client;
    this.server = server;
    this.name = name;
  }

  void start(Runnable onClose) {
    this.onClose = onClose;
    thread(Direction.CLIENT_TO_SERVER, client, server, name + "-up").start();
    thread(Direction.SERVER_TO_CLIENT, server, client, name + "-down").start();
  }

  boolean closed() {
    return closed.get();
  }

  /** Closes both sockets with an RST. */
  void reset() {
    if (closed.compareAndSet(false, true)) {
      abort(client);
      abort(server);
      onClose.run();
    }
  }

  /** Closes both sockets normally (FIN). */
  void close() {
    if (closed.compareAndSet(false, true)) {
      quietly(client);
      quietly(server);
      onClose.run();
    }
  }

  /** Closes {@code socket} with {@code SO_LINGER 0}: the peer gets an RST, not a FIN. */
  static void abort(Socket socket) {
    try {
      socket.setSoLinger(true, 0);
    } catch (IOException e) {
      // not connected, or closed already: closing is all there is left
    }
    quietly(socket);
  }

  private static void quietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  private Thread thread(Direction direction, Socket from, Socket to, String threadName) {
    Thread t = new Thread(() -> pump(direction, from, to), threadName);
    t.setDaemon(true);
    return t;
  }

  private void pump(Direction direction, Socket from, Socket to) {
    byte[] chunk = new byte[CHUNK];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      while (proxy.awaitModeOtherThan(direction, this, STALLED) != null) {
        int n = in.read(chunk);
        if (n < 0) {
          if (proxy.awaitModeOtherThan(direction, this, SILENT) != null) {
            to.shutdownOutput(); // pass the FIN on; the other direction may still flow
          }
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
}
