package io.outbox.relay.demo;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.impl.Headers;
import java.time.Duration;

/**
 * Creates a JetStream stream binding the demo's subject (deleted again on close) and reads it in
 * stream order, message by message.
 */
final class NatsDemoConsumer extends DemoConsumer {
  private final Connection connection;
  private final JetStreamManagement jsm;
  private final String stream;
  private long next = 1;

  private NatsDemoConsumer(Connection connection, String stream) throws Exception {
    this.connection = connection;
    this.jsm = connection.jetStreamManagement();
    this.stream = stream;
  }

  static NatsDemoConsumer start(String url, String subject) throws Exception {
    Connection connection =
        Nats.connect(
            Options.builder().server(url).connectionTimeout(Duration.ofSeconds(5)).build());
    String stream = "DEMO_" + subject.replaceAll("[^A-Za-z0-9_-]", "_");
    NatsDemoConsumer consumer = new NatsDemoConsumer(connection, stream);
    consumer.jsm.addStream(
        StreamConfiguration.builder()
            .name(stream)
            .subjects(subject)
            .storageType(StorageType.File)
            .build());
    consumer.startReading("outbox-relay-demo-nats-consumer", consumer::readNext);
    return consumer;
  }

  /** Reads the next message by its sequence; {@code false} while it is not there yet. */
  private boolean readNext() throws Exception {
    MessageInfo m;
    try {
      m = jsm.getMessage(stream, next);
    } catch (JetStreamApiException e) {
      return false; // no message of this sequence yet
    }
    Headers h = m.getHeaders();
    received(h.getFirst("event-id"), h.getFirst("aggregate-id"), h.getFirst("event-type"));
    next++;
    return true;
  }

  @Override
  public void close() {
    try {
      stopReading();
      jsm.deleteStream(stream);
      connection.close();
    } catch (Exception e) {
      // Closing the demo's own consumer: nothing to recover.
    }
  }
}
