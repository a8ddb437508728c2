package io.outbox.sink.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.outbox.testkit.Services;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;

/**
 * The test's own view of the real RabbitMQ: declares and deletes exchanges and queues, reads what a
 * queue received. Everything it declares is deleted by {@link #close()}.
 */
final class RabbitAdmin implements AutoCloseable {

  private final Connection connection;
  private final List<String> exchanges = new ArrayList<>();
  private final List<String> queues = new ArrayList<>();

  RabbitAdmin() throws Exception {
    this(plainFactory());
  }

  /** An admin connected through {@code factory} (e.g. to a private TLS broker). */
  RabbitAdmin(ConnectionFactory factory) throws Exception {
    connection = factory.newConnection("outbox-relay-test-admin");
  }

  private static ConnectionFactory plainFactory() throws Exception {
    ConnectionFactory f = new ConnectionFactory();
    f.setUri(Services.rabbitUri());
    f.setAutomaticRecoveryEnabled(false);
    return f;
  }

  static String unique(String prefix) {
    return prefix + "." + UUID.randomUUID().toString().substring(0, 8);
  }

  /** Declares a durable topic exchange. */
  String exchange(String name) throws Exception {
    try (Channel ch = connection.createChannel()) {
      ch.exchangeDeclare(name, "topic", true);
    }
    exchanges.add(name);
    return name;
  }

  /** Remembers an exchange someone else declared, to delete it at the end. */
  void deleteLater(String exchange) {
    exchanges.add(exchange);
  }

  /** Remembers a queue someone else declared, to delete it at the end. */
  void deleteQueueLater(String queue) {
    queues.add(queue);
  }

  /** Declares a durable queue bound to {@code exchange} with {@code bindingKey}. */
  String queue(String name, String exchange, String bindingKey) throws Exception {
    return queue(name, exchange, bindingKey, null);
  }

  /**
   * Declares a durable queue with {@code arguments} (x-max-length...), bound to {@code exchange}.
   */
  String queue(String name, String exchange, String bindingKey, Map<String, Object> arguments)
      throws Exception {
    try (Channel ch = connection.createChannel()) {
      ch.queueDeclare(name, true, false, false, arguments);
      ch.queueBind(name, exchange, bindingKey);
    }
    queues.add(name);
    return name;
  }

  /** A channel of the admin's connection, for the caller to close. */
  Channel channel() throws Exception {
    return connection.createChannel();
  }

  void deleteExchange(String name) throws Exception {
    try (Channel ch = connection.createChannel()) {
      ch.exchangeDelete(name);
    }
  }

  boolean exchangeExists(String name) throws Exception {
    Channel ch = connection.createChannel();
    try {
      ch.exchangeDeclarePassive(name);
      return true;
    } catch (java.io.IOException e) {
      return false;
    } finally {
      if (ch.isOpen()) {
        ch.close();
      }
    }
  }

  /** Takes messages from {@code queue} until {@code expected} arrived; fails after the timeout. */
  List<GetResponse> read(String queue, int expected, Duration timeout) throws Exception {
    List<GetResponse> out = new ArrayList<>();
    try (Channel ch = connection.createChannel()) {
      Awaitility.await()
          .atMost(timeout.toMillis(), TimeUnit.MILLISECONDS)
          .pollInterval(Duration.ofMillis(50))
          .until(
              () -> {
                GetResponse r;
                while (out.size() < expected && (r = ch.basicGet(queue, true)) != null) {
                  out.add(r);
                }
                return out.size() >= expected;
              });
    }
    return out;
  }

  /** How many messages {@code queue} holds now. */
  long depth(String queue) throws Exception {
    try (Channel ch = connection.createChannel()) {
      return ch.queueDeclarePassive(queue).getMessageCount();
    }
  }

  /** Takes every message now in {@code queue}. */
  List<GetResponse> drain(String queue) throws Exception {
    List<GetResponse> out = new ArrayList<>();
    try (Channel ch = connection.createChannel()) {
      GetResponse r;
      while ((r = ch.basicGet(queue, true)) != null) {
        out.add(r);
      }
    }
    return out;
  }

  @Override
  public void close() throws java.io.IOException, java.util.concurrent.TimeoutException {
    if (connection.isOpen()) {
      try (Channel ch = connection.createChannel()) {
        for (String q : queues) {
          ch.queueDelete(q);
        }
        for (String e : exchanges) {
          ch.exchangeDelete(e);
        }
      }
      connection.close();
    }
  }
}
