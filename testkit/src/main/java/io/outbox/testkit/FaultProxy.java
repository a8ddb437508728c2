package io.outbox.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Hand-written because no packaged Toxiproxy (or other fault-injecting proxy) is installable here,
 * and the faults the tests need (black hole, stall, per-direction latency) are a few hundred lines.
 *
 * <p>A TCP proxy on {@code 127.0.0.1:<free port>} in front of one target, that injects network
 * faults into the connections through it: per {@link Direction} a {@link Mode} ({@link Mode#PASS},
 * {@link Mode#RESET}, {@link Mode#BLACKHOLE}, {@link Mode#STALL}, {@link Mode#latency latency}),
 * switchable at any time and applied to the open connections and to new ones alike.
 *
 * <p>A {@link Mode#BLACKHOLE black hole} is what a firewall that drops packets looks like to the
 * applications at both ends: connections are still accepted, writes still succeed, and nothing
 * arrives, ever: the bytes are read and thrown away, so a connection that sent or awaited bytes
 * meanwhile stays broken after the direction passes again, as one whose peer vanished (the end of a
 * stream, a FIN, waits until then, as a dropped FIN would). A {@link Mode#STALL stall} is a
 * partition that heals in time: nothing is forwarded, and once the direction passes again the held
 * bytes arrive in order. What the proxy cannot imitate is the kernel level: both kernels still
 * acknowledge every segment, so TCP keepalive or retransmission timeouts never fire through it;
 * only timeouts of the applications do.
 *
 * <p>Threads: one named daemon acceptor, and two named daemon pumps per connection.
 */
public final class FaultProxy implements AutoCloseable {

  /** Which way bytes travel through the proxy. */
  public enum Direction {
    /** From the client that connected to the proxy to the target. */
    CLIENT_TO_SERVER,
    /** From the target back to the client. */
    SERVER_TO_CLIENT
  }

  /**
   * What the proxy does to the bytes of one direction.
   *
   * @param kind the fault
   * @param delay how long each chunk waits before it is forwarded ({@link Kind#LATENCY} only)
   */
  public record Mode(Kind kind, Duration delay) {
    /** The faults. */
    public enum Kind {
      PASS,
      RESET,
      BLACKHOLE,
      STALL,
      LATENCY
    }

    /** Bytes flow unchanged. */
    public static final Mode PASS = new Mode(Kind.PASS, Duration.ZERO);

    /**
     * Open connections are reset (closed with {@code SO_LINGER 0}, which sends an RST to both ends)
     * and new ones are reset as soon as they are accepted.
     */
    public static final Mode RESET = new Mode(Kind.RESET, Duration.ZERO);

    /**
     * Nothing is refused and nothing arrives: the bytes are dropped (new connections are accepted
     * too). The end of a stream is held back until the direction passes again.
     */
    public static final Mode BLACKHOLE = new Mode(Kind.BLACKHOLE, Duration.ZERO);

    /**
     * Nothing is refused and nothing is forwarded yet: the proxy stops reading, so the bytes wait
     * in the sockets' buffers and arrive, in order, once the direction passes again.
     */
    public static final Mode STALL = new Mode(Kind.STALL, Duration.ZERO);

    public Mode {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(delay, "delay");
      if (delay.isNegative()) {
        throw new IllegalArgumentException("delay must not be negative: " + delay);
      }
    }

    /**
     * Each chunk read waits {@code delay} before it is forwarded (one chunk at a time, so the
     * direction's throughput drops too).
     */
    public static Mode latency(Duration delay) {
      return new Mode(Kind.LATENCY, delay);
    }
  }

  private static final String HOST = "127.0.0.1";

  private final String targetHost;
  private final int targetPort;
  private final ServerSocket listener;
  private final Map<Direction, Mode> modes = new EnumMap<>(Direction.class); // guarded by this
  private final Set<ProxiedConnection> open = ConcurrentHashMap.newKeySet();
  private final AtomicInteger accepted = new AtomicInteger();
  private final Thread acceptor;
  private volatile boolean closed;

  private FaultProxy(String targetHost, int targetPort, ServerSocket listener) {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.listener = listener;
    modes.put(Direction.CLIENT_TO_SERVER, Mode.PASS);
    modes.put(Direction.SERVER_TO_CLIENT, Mode.PASS);
    this.acceptor = new Thread(this::acceptLoop, "fault-proxy-" + port() + "-accept");
    this.acceptor.setDaemon(true);
  }

  /**
   * Starts a proxy to {@code targetHost:targetPort} on a free local port, passing both directions.
   * The target need not be up yet: each accepted connection opens its own connection to it.
   */
  public static FaultProxy start(String targetHost, int targetPort) {
    try {
      ServerSocket listener = new ServerSocket();
      listener.setReuseAddress(true);
      listener.bind(
          new InetSocketAddress(InetAddress.getByName(HOST), LocalPorts.free(HOST, 1)[0]));
      FaultProxy proxy = new FaultProxy(targetHost, targetPort, listener);
      proxy.acceptor.start();
      return proxy;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot start a fault proxy to " + targetHost + ":" + targetPort, e);
    }
  }

  /** The proxy's own port, on {@code 127.0.0.1}. */
  public int port() {
    return listener.getLocalPort();
  }

  /** {@code 127.0.0.1:<port>}: where clients connect instead of the target. */
  public String address() {
    return HOST + ":" + port();
  }

  /** Sets both directions to {@code mode}. */
  public void set(Mode mode) {
    set(Direction.CLIENT_TO_SERVER, mode);
    set(Direction.SERVER_TO_CLIENT, mode);
  }

  /** Sets one direction's mode, for the open connections and the new ones. */
  public void set(Direction direction, Mode mode) {
    Objects.requireNonNull(mode, "mode");
    synchronized (this) {
      modes.put(Objects.requireNonNull(direction, "direction"), mode);
      notifyAll(); // pumps held by a stall or a black hole look again
    }
    if (mode.kind() == Mode.Kind.RESET) {
      open.forEach(ProxiedConnection::reset);
    }
  }

  /** The current mode of {@code direction}. */
  public synchronized Mode mode(Direction direction) {
    return modes.get(direction);
  }

  /** How many connections through the proxy are open. */
  public int openConnections() {
    return open.size();
  }

  /** How many connections the proxy accepted since it started. */
  public int acceptedConnections() {
    return accepted.get();
  }

  /** Stops accepting and closes every connection through the proxy. Idempotent. */
  @Override
  public void close() {
    closed = true;
    synchronized (this) {
      notifyAll();
    }
    try {
      listener.close();
    } catch (IOException e) {
      // closing anyway
    }
    open.forEach(ProxiedConnection::close);
    try {
      acceptor.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "FaultProxy["
        + address()
        + " -> "
        + targetHost
        + ":"
        + targetPort
        + ", "
        + modes()
        + "]";
  }

  private synchronized Map<Direction, Mode> modes() {
    return Map.copyOf(modes);
  }

  /**
   * Blocks while {@code direction}'s mode is one of {@code holding}, then returns the mode; {@code
   * null} once the proxy or {@code connection} closed.
   */
  synchronized Mode awaitModeOtherThan(
      Direction direction, ProxiedConnection connection, Set<Mode.Kind> holding)
      throws InterruptedException {
    while (!closed && !connection.closed()) {
      Mode mode = modes.get(direction);
      if (!holding.contains(mode.kind())) {
        return mode;
      }
      wait(100);
    }
    return null;
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        if (closed) {
          return;
        }
        continue; // a failed accept affects that connection only
      }
      int number = accepted.incrementAndGet();
      if (resetting()) {
        ProxiedConnection.abort(client);
        continue;
      }
      ProxiedConnection connection =
          new ProxiedConnection(
              this,
              client,
              new InetSocketAddress(targetHost, targetPort),
              "fault-proxy-" + port() + "-" + number,
              this::forget);
      open.add(connection);
      connection.start();
      if (resetting() || closed) {
        connection.reset(); // switched while this one was being connected
      }
    }
  }

  private void forget(ProxiedConnection connection) {
    open.remove(connection);
  }

  private synchronized boolean resetting() {
    return modes.values().stream().anyMatch(m -> m.kind() == Mode.Kind.RESET);
  }
}
