package io.outbox.sink.nats;

import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.ErrorListener;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamOptions;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink's one connection to NATS, opened lazily and opened again once closed, with its JetStream
 * contexts; declares the configured stream on each connect and remembers which subjects a stream
 * binds. While the client reconnects it buffers nothing: a publish then fails at once (sink
 * unavailable) instead of waiting in the client.
 */
final class JetStreamLink implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(JetStreamLink.class);

  /** The stream is not found (JetStream API error code). */
  static final int STREAM_NOT_FOUND = 10059;

  /** Most subjects remembered as bound; beyond that the memory starts over. */
  private static final int BOUND_SUBJECTS = 10_000;

  private final String pipeline;
  private final NatsSinkSettings settings;
  private final Map<String, Boolean> bound = new ConcurrentHashMap<>();
  private Connection connection;
  private JetStream jetStream;
  private JetStreamManagement management;
  private boolean closed;

  JetStreamLink(String pipeline, NatsSinkSettings settings) {
    this.pipeline = pipeline;
    this.settings = settings;
  }

  /** JetStream on an open connection, connecting first when there is none. */
  synchronized JetStream jetStream()
      throws IOException, JetStreamApiException, InterruptedException {
    connect();
    return jetStream;
  }

  /**
   * Whether a stream binds {@code subject} (asked once per connection while it does).
   *
   * @throws IOException or JetStreamApiException when JetStream does not answer
   */
  boolean bound(String subject) throws IOException, JetStreamApiException, InterruptedException {
    if (bound.containsKey(subject)) {
      return true;
    }
    JetStreamManagement jsm;
    synchronized (this) {
      connect();
      jsm = management;
    }
    if (jsm.getStreamNames(subject).isEmpty()) {
      return false;
    }
    if (bound.size() >= BOUND_SUBJECTS) {
      bound.clear();
    }
    bound.put(subject, Boolean.TRUE);
    return true;
  }

  /** Forgets that a stream binds {@code subject}: a publish to it found no stream. */
  void forget(String subject) {
    bound.remove(subject);
  }

  /** Whether JetStream answers on an open connection (the probe): one account info request. */
  boolean answers() throws IOException, JetStreamApiException, InterruptedException {
    JetStreamManagement jsm;
    synchronized (this) {
      connect();
      jsm = management;
    }
    jsm.getAccountStatistics();
    return true;
  }

  private void connect() throws IOException, JetStreamApiException, InterruptedException {
    if (closed) {
      throw new IOException("the NATS sink is closed");
    }
    if (connection != null && connection.getStatus() != Connection.Status.CLOSED) {
      return;
    }
    Options.Builder options =
        Options.builder()
            .servers(settings.servers().toArray(String[]::new))
            .connectionName("outbox-relay-" + pipeline)
            .connectionTimeout(settings.connectionTimeout())
            .maxReconnects(-1) // for ever: the pipeline's probe decides when to publish again
            .reconnectBufferSize(0) // never hold publishes in the client while disconnected
            .requestCleanupInterval(settings.publishTimeout())
            .errorListener(new QuietErrors())
            .connectionListener(this::changed);
    if (settings.token() != null) {
      options.token(settings.token().toCharArray());
    }
    Connection c = Nats.connect(options.build());
    try {
      JetStreamOptions jso =
          JetStreamOptions.builder().requestTimeout(settings.connectionTimeout()).build();
      JetStreamManagement jsm = c.jetStreamManagement(jso);
      declare(jsm);
      jetStream = c.jetStream(jso);
      management = jsm;
      connection = c;
      bound.clear();
    } catch (IOException | JetStreamApiException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  /** Creates the configured stream unless it exists. */
  private void declare(JetStreamManagement jsm) throws IOException, JetStreamApiException {
    NatsSinkSettings.Stream stream = settings.stream();
    if (stream == null) {
      return;
    }
    try {
      jsm.getStreamInfo(stream.name());
      return;
    } catch (JetStreamApiException e) {
      if (e.getApiErrorCode() != STREAM_NOT_FOUND) {
        throw e;
      }
    }
    jsm.addStream(
        StreamConfiguration.builder()
            .name(stream.name())
            .subjects(stream.subjects())
            .storageType(stream.memory() ? StorageType.Memory : StorageType.File)
            .duplicateWindow(stream.duplicateWindow())
            .maxAge(stream.maxAge())
            .replicas(stream.replicas())
            .build());
    log.info(
        "pipeline {}: declared the NATS stream {} {}", pipeline, stream.name(), stream.subjects());
  }

  private void changed(Connection c, ConnectionListener.Events event) {
    log.debug("pipeline {}: NATS connection {}", pipeline, event);
  }

  @Override
  public void close() {
    Connection c;
    synchronized (this) {
      closed = true;
      c = connection;
      connection = null;
    }
    if (c != null) {
      try {
        c.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The client's own error reports, at debug level: the sink reports failures per batch. */
  private final class QuietErrors implements ErrorListener {
    @Override
    public void errorOccurred(Connection c, String error) {
      log.debug("pipeline {}: NATS error: {}", pipeline, error);
    }

    @Override
    public void exceptionOccurred(Connection c, Exception e) {
      log.debug("pipeline {}: NATS client exception: {}", pipeline, e.toString());
    }
  }
}
