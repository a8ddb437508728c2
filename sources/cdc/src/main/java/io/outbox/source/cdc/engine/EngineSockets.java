package io.outbox.source.cdc.engine;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.SocketFactory;

/**
 * The network connections of one {@link StreamSession}'s engine: the PostgreSQL driver opens every
 * socket of the engine's sessions, its replication connection among them, through {@link Factory}
 * (the driver's {@code socketFactory} property, named by {@code socketFactoryArg}), so that the
 * session can close them all at once ({@link #abort}). An instance that lost the lease, perhaps
 * behind a network that drops its packets, does so before stopping its engine: the engine's calls
 * blocked on those connections fail at once instead of after {@code socket-timeout}, and the engine
 * is gone in moments, so the instance can take the active role again as soon as the lease is free
 * (issue #29 point 8). Once aborted, a session's factory opens no socket again.
 */
public final class EngineSockets {

  private static final Map<String, EngineSockets> REGISTRY = new ConcurrentHashMap<>();

  private final String id = UUID.randomUUID().toString();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile boolean aborted;

  /** Makes these sockets' factory findable by the driver, until {@link #close}. */
  String register() {
    REGISTRY.put(id, this);
    return id;
  }

  /** Closes every socket opened so far, and refuses new ones. */
  int abort() {
    aborted = true;
    int closed = 0;
    for (Socket s : open) {
      if (!s.isClosed()) {
        closed++;
      }
      try {
        s.close();
      } catch (IOException e) {
        // closed either way
      }
      open.remove(s);
    }
    return closed;
  }

  /** Forgets the sockets: the engine is gone. */
  void close() {
    REGISTRY.remove(id);
    open.clear();
  }

  /**
   * Names the factory of the sockets registered as {@code registration} in driver properties {@code
   * p} (under {@code prefix}: Debezium hands {@code database.*} on to the driver), unless they name
   * a socket factory of the user's own.
   */
  public static void use(Properties p, String prefix, String registration) {
    if (registration != null && !p.containsKey(prefix + "socketFactory")) {
      p.setProperty(prefix + "socketFactory", Factory.class.getName());
      p.setProperty(prefix + "socketFactoryArg", registration);
    }
  }

  private Socket track(Socket s) throws SocketException {
    if (aborted) {
      throw new SocketException("the change stream's engine was stopped: no new connection");
    }
    open.removeIf(Socket::isClosed);
    open.add(s);
    if (aborted) { // aborted meanwhile
      abort();
    }
    return s;
  }

  /**
   * The driver's socket factory for the engine's sessions; its argument names the session's {@link
   * EngineSockets}. Unknown (a registration gone): plain sockets.
   */
  public static final class Factory extends SocketFactory {
    private final EngineSockets sockets;

    public Factory(String registration) {
      this.sockets = REGISTRY.get(registration);
    }

    private Socket track(Socket s) throws SocketException {
      return sockets == null ? s : sockets.track(s);
    }

    @Override
    public Socket createSocket() throws IOException {
      return track(new Socket());
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
      return track(new Socket(host, port));
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort)
        throws IOException {
      return track(new Socket(host, port, localHost, localPort));
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
      return track(new Socket(host, port));
    }

    @Override
    public Socket createSocket(
        InetAddress address, int port, InetAddress localAddress, int localPort) throws IOException {
      return track(new Socket(address, port, localAddress, localPort));
    }
  }
}
