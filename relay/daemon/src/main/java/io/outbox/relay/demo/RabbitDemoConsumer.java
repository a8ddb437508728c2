package io.outbox.relay.demo;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import java.util.Map;

/**
 * Declares the demo's topic exchange and a private queue bound to it with {@code #}, and consumes
 * the queue.
 */
final class RabbitDemoConsumer extends DemoConsumer {
  private final Connection connection;

  private RabbitDemoConsumer(Connection connection) {
    this.connection = connection;
  }

  static RabbitDemoConsumer start(String uri, String exchange) throws Exception {
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(uri);
    factory.setAutomaticRecoveryEnabled(false);
    Connection connection = factory.newConnection("outbox-relay-demo-consumer");
    RabbitDemoConsumer consumer = new RabbitDemoConsumer(connection);
    Channel channel = connection.createChannel();
    channel.exchangeDeclare(exchange, "topic", true);
    String queue = channel.queueDeclare("", false, true, true, Map.of()).getQueue();
    channel.queueBind(queue, exchange, "#");
    channel.basicQos(1000);
    channel.basicConsume(
        queue,
        true,
        new DefaultConsumer(channel) {
          @Override
          public void handleDelivery(
              String tag, Envelope envelope, AMQP.BasicProperties props, byte[] body) {
            Map<String, Object> headers = props.getHeaders();
            Object aggregateId = headers == null ? null : headers.get("aggregate-id");
            consumer.received(
                props.getMessageId(),
                aggregateId == null ? null : aggregateId.toString(),
                props.getType());
          }
        });
    return consumer;
  }

  @Override
  public void close() {
    try {
      connection.close(5000);
    } catch (Exception e) {
      // Closing the demo's own consumer: nothing to recover.
    }
  }
}
