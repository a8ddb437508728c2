package io.outbox.sink.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BlockedListener;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.ShutdownSignalException;
import io.outbox.relay.spi.support.BatchPublisher;
import io.outbox.relay.spi.support.PipelineThreads;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink's one connection to RabbitMQ, opened lazily and opened again after it was lost. The
 * client's automatic recovery is off: a recovered channel restarts its delivery tags and would
 * re-publish nothing, so the sink settles unconfirmed messages itself when a connection goes and
 * reconnects on the next publish or probe (the pipeline pauses and probes in between). Declares the
 * configured exchanges on every connect and remembers which exchanges were seen to exist.
 */
final class RabbitConnection {

  private static final Logger log = LoggerFactory.getLogger(RabbitConnection.class);

  private final String pipeline;
  private final RabbitSinkSettings settings;
  private final ConnectionFactory factory;
  private final Set<String> knownExchanges = ConcurrentHashMap.newKeySet();
  private Connection connection; // guarded by this
  private volatile boolean blocked;
  private volatile long maxMessageSize = -1; // learned from the broker; -1 while unknown
  private volatile boolean lostLogged;

  RabbitConnection(String pipeline, RabbitSinkSettings settings) {
    this.pipeline = pipeline;
    this.settings = settings;
    this.factory = factory(settings);
  }

  /** The open connection, connecting (and declaring exchanges) if there is none. */
  synchronized Connection open() throws IOException, TimeoutException {
    if (connection != null && connection.isOpen()) {
      return connection;
    }
    knownExchanges.clear();
    blocked = false;
    maxMessageSize = -1; // the broker may have restarted with another limit
    Connection c = factory.newConnection("outbox-relay-" + pipeline);
    try {
      declare(c);
    } catch (IOException | RuntimeException e) {
      c.abort();
      throw e;
    }
    c.addBlockedListener(
        new BlockedListener() {
          @Override
          public void handleBlocked(String reason) {
            blocked = true;
            log.warn("RabbitMQ blocks publishing for pipeline {}: {}", pipeline, reason);
          }

          @Override
          public void handleUnblocked() {
            blocked = false;
            log.info("RabbitMQ unblocked publishing for pipeline {}", pipeline);
          }
        });
    c.addShutdownListener(this::lost);
    connection = c;
    if (lostLogged) {
      log.info("Reconnected to RabbitMQ {} for pipeline {}", settings.maskedUri(), pipeline);
    } else {
      log.info("Connected to RabbitMQ {} for pipeline {}", settings.maskedUri(), pipeline);
    }
    lostLogged = false;
    return c;
  }

  /** Whether the broker told us to stop publishing (memory or disk alarm). */
  boolean isBlocked() {
    return blocked;
  }

  /**
   * The broker's max_message_size (body bytes) once a channel closure told it, else {@code -1}.
   * AMQP has no way to ask for it, so it is learned when the broker first refuses a message.
   */
  long maxMessageSize() {
    return maxMessageSize;
  }

  /**
   * Remembers the broker's max_message_size until the next connection.
   *
   * @return whether it was not known as this value before
   */
  boolean learnMaxMessageSize(long bytes) {
    long before = maxMessageSize;
    maxMessageSize = bytes;
    return before != bytes;
  }

  /**
   * Whether {@code exchange} exists, checked passively once per connection (a missing exchange is
   * checked again next time: it may be created).
   *
   * @throws IOException when RabbitMQ cannot be asked
   */
  boolean exchangeExists(String exchange) throws IOException, TimeoutException {
    if (knownExchanges.contains(exchange)) {
      return true;
    }
    Channel ch = open().createChannel();
    if (ch == null) {
      throw new IOException("RabbitMQ refused another channel (channel_max reached)");
    }
    try {
      ch.exchangeDeclarePassive(exchange);
      knownExchanges.add(exchange);
      return true;
    } catch (IOException e) {
      if (e.getCause() instanceof ShutdownSignalException s
          && !s.isHardError()
          && s.getReason() instanceof AMQP.Channel.Close close
          && close.getReplyCode() == 404) {
        return false;
      }
      throw e;
    } finally {
      if (ch.isOpen()) {
        ch.abort();
      }
    }
  }

  /** Forgets that {@code exchange} existed: it was deleted, so check it again before using it. */
  void forget(String exchange) {
    knownExchanges.remove(exchange);
  }

  /** Checks that the broker answers: connects if needed and opens and closes a channel. */
  boolean answers() throws IOException, TimeoutException {
    Channel ch = open().createChannel();
    if (ch == null) {
      return false;
    }
    ch.abort();
    return !blocked;
  }

  /**
   * Closes the connection, waiting at most about {@code timeoutMillis}. Closing writes to the
   * socket, and a broker that blocks publishing (a resource alarm) may not be reading it: the close
   * then goes on in the background on a daemon thread instead of holding up the relay's stop.
   */
  void close(int timeoutMillis) {
    Connection c;
    synchronized (this) {
      c = connection;
    }
    if (c == null || !c.isOpen()) {
      return;
    }
    Thread closer =
        PipelineThreads.daemon(
            pipeline,
            "outbox-relay-rabbitmq-" + pipeline + "-close",
            () -> {
              try {
                c.close(timeoutMillis);
              } catch (IOException | RuntimeException e) {
                c.abort(timeoutMillis);
              }
            });
    closer.start();
    try {
      closer.join(timeoutMillis + 500L);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (closer.isAlive()) {
      log.warn(
          "The connection to RabbitMQ of pipeline {} did not close within {} ms (the broker is not"
              + " reading it); left to close in the background",
          pipeline,
          timeoutMillis);
    }
  }

  private void declare(Connection c) throws IOException {
    if (settings.declare().isEmpty()) {
      return;
    }
    Channel ch = c.createChannel();
    try {
      for (RabbitSinkSettings.Exchange e : settings.declare().values()) {
        try {
          ch.exchangeDeclare(e.name(), e.type(), e.durable(), e.autoDelete(), null);
        } catch (IOException ex) {
          throw new IOException(
              "cannot declare exchange '"
                  + e.name()
                  + "' ("
                  + e.type()
                  + (e.durable() ? ", durable" : "")
                  + "): "
                  + ex.getCause(),
              ex);
        }
      }
    } finally {
      if (ch.isOpen()) {
        ch.abort();
      }
    }
  }

  private void lost(ShutdownSignalException cause) {
    if (!cause.isInitiatedByApplication() && !lostLogged) {
      lostLogged = true;
      log.warn(
          "Connection to RabbitMQ {} lost for pipeline {}: {}",
          settings.maskedUri(),
          pipeline,
          cause.getReason() instanceof AMQP.Connection.Close close
              ? close.getReplyCode() + " " + close.getReplyText()
              : BatchPublisher.describe(cause.getCause() == null ? cause : cause.getCause()));
    }
  }

  /** A factory for {@code settings}: no automatic recovery, bounded waits, TLS for amqps. */
  static ConnectionFactory factory(RabbitSinkSettings settings) {
    ConnectionFactory f = new ConnectionFactory();
    URI uri = URI.create(settings.uri());
    boolean tls = "amqps".equals(uri.getScheme().toLowerCase(Locale.ROOT));
    try {
      // amqps through setUri would trust every certificate; TLS is set up below instead.
      f.setUri(tls ? "amqp" + settings.uri().substring("amqps".length()) : settings.uri());
      if (tls) {
        f.setPort(
            uri.getPort() == -1 ? ConnectionFactory.DEFAULT_AMQP_OVER_SSL_PORT : uri.getPort());
        f.useSslProtocol(sslContext(settings));
        f.enableHostnameVerification();
      }
      if (settings.password() != null) {
        f.setPassword(settings.password());
      }
    } catch (java.net.URISyntaxException | GeneralSecurityException | IOException e) {
      throw new IllegalArgumentException(
          "cannot use RabbitMQ URI " + settings.maskedUri() + ": " + e.getClass().getSimpleName(),
          e);
    }
    f.setAutomaticRecoveryEnabled(false);
    f.setTopologyRecoveryEnabled(false);
    int timeout = (int) Math.min(Integer.MAX_VALUE, settings.connectionTimeout().toMillis());
    f.setConnectionTimeout(timeout);
    f.setHandshakeTimeout(timeout);
    f.setShutdownTimeout(timeout);
    f.setChannelRpcTimeout(timeout);
    f.setRequestedHeartbeat((int) settings.heartbeat().toSeconds());
    return f;
  }

  private static SSLContext sslContext(RabbitSinkSettings settings)
      throws GeneralSecurityException, IOException {
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    if (settings.trustStore().isBlank()) {
      tmf.init((KeyStore) null); // the JVM's default trust store
    } else {
      char[] password = settings.trustStorePassword().toCharArray();
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      try (InputStream in = Files.newInputStream(Path.of(settings.trustStore()))) {
        store.load(in, password.length == 0 ? null : password);
      }
      tmf.init(store);
    }
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    return context;
  }
}
