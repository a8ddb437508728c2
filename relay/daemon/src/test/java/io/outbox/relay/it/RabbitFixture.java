package io.outbox.relay.it;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.outbox.relay.Relay;
import io.outbox.testkit.Services;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.awaitility.Awaitility;

/**
 * One end-to-end RabbitMQ test's world: a {@link RelayFixture} for the database, its own exchange
 * prefix, queues bound to its exchanges, and a relay configuration with the {@code rabbitmq} sink.
 * {@link #close()} deletes what it declared.
 */
final class RabbitFixture implements AutoCloseable {
  final RelayFixture fx;
  final String exchangePrefix;
  private final ConnectionFactory factory = new ConnectionFactory();
  private Connection admin;
  private final List<String> exchanges = new ArrayList<>();
  private final List<String> queues = new ArrayList<>();

  private final String uri;

  RabbitFixture(String name) throws Exception {
    this(name, Services.rabbitUri());
  }

  /** A fixture whose relay and admin connection use the broker at {@code uri}. */
  RabbitFixture(String name, String uri) throws Exception {
    fx = new RelayFixture(name);
    exchangePrefix = fx.topicPrefix; // unique per test
    this.uri = uri;
    factory.setUri(uri);
    factory.setAutomaticRecoveryEnabled(false);
    admin = factory.newConnection("outbox-relay-it-admin");
  }

  /** The test's own connection, opened again after a broker restart closed it. */
  private synchronized Connection admin() throws IOException, TimeoutException {
    if (!admin.isOpen()) {
      admin = factory.newConnection("outbox-relay-it-admin");
    }
    return admin;
  }

  /** The exchange events of {@code aggregateType} are routed to. */
  String exchange(String aggregateType) {
    return exchangePrefix + "." + aggregateType;
  }

  /** Declares {@code exchange} (durable topic) and a queue bound to it with {@code bindingKey}. */
  String bindQueue(String exchange, String bindingKey) throws IOException, TimeoutException {
    return bindQueue(exchange, bindingKey, null);
  }

  /** As {@link #bindQueue(String, String)}, the queue declared with {@code arguments}. */
  String bindQueue(String exchange, String bindingKey, Map<String, Object> arguments)
      throws IOException, TimeoutException {
    String queue = exchange + ".q." + queues.size();
    try (Channel ch = admin().createChannel()) {
      ch.exchangeDeclare(exchange, "topic", true);
      ch.queueDeclare(queue, true, false, false, arguments);
      ch.queueBind(queue, exchange, bindingKey);
    }
    if (!exchanges.contains(exchange)) {
      exchanges.add(exchange);
    }
    queues.add(queue);
    return queue;
  }

  /** HOCON for one pipeline named {@code it}; {@code extra} is merged into the pipeline. */
  String config(String extra) {
    return fx.configWithSink(
        fx.db.url(),
        """
        type = rabbitmq, rabbitmq { uri = "%s", confirm-timeout = 5s,
                     declare { "%s" { type = topic, durable = true } } }"""
            .formatted(uri, exchange("order")),
        extra);
  }

  Relay start(String extra) {
    return RelayFixture.startWith(config(extra));
  }

  /** Takes messages from {@code queue} until at least {@code expected} arrived, or the timeout. */
  List<GetResponse> read(String queue, int expected, Duration timeout) throws IOException {
    List<GetResponse> out = new ArrayList<>();
    try (Channel ch = admin().createChannel()) {
      Awaitility.await()
          .atMost(timeout.toMillis(), TimeUnit.MILLISECONDS)
          .pollInterval(Duration.ofMillis(100))
          .until(
              () -> {
                GetResponse r;
                while ((r = ch.basicGet(queue, true)) != null) {
                  out.add(r);
                }
                return out.size() >= expected;
              });
    } catch (TimeoutException e) {
      throw new IOException(e);
    }
    return out;
  }

  /** How many messages {@code queue} holds now. */
  long depth(String queue) throws IOException, TimeoutException {
    try (Channel ch = admin().createChannel()) {
      return ch.queueDeclarePassive(queue).getMessageCount();
    }
  }

  /** Takes every message now in {@code queue}. */
  List<GetResponse> drain(String queue) throws IOException, TimeoutException {
    List<GetResponse> out = new ArrayList<>();
    try (Channel ch = admin().createChannel()) {
      GetResponse r;
      while ((r = ch.basicGet(queue, true)) != null) {
        out.add(r);
      }
    }
    return out;
  }

  static String header(GetResponse r, String name) {
    Object v = r.getProps().getHeaders() == null ? null : r.getProps().getHeaders().get(name);
    return v == null ? null : v.toString();
  }

  @Override
  public void close() throws IOException, TimeoutException {
    try {
      if (admin().isOpen()) {
        try (Channel ch = admin().createChannel()) {
          for (String q : queues) {
            ch.queueDelete(q);
          }
          for (String e : exchanges) {
            ch.exchangeDelete(e);
          }
          if (!exchanges.contains(exchange("order"))) {
            ch.exchangeDelete(exchange("order")); // declared by the relay (sink.rabbitmq.declare)
          }
        }
        admin.close();
      }
    } finally {
      fx.close();
    }
  }
}
