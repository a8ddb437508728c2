package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.MessageProperties;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A private RabbitMQ node stops and starts again with its durable queues and their messages. */
class PrivateRabbitIT {

  @Test
  void aStoppedNodeStartsAgainWithItsDurableQueueAndPersistentMessages() throws Exception {
    try (PrivateRabbit rabbit = PrivateRabbit.startPlain(List.of())) {
      assertThat(rabbit.amqpUri()).isEqualTo(rabbit.uri("127.0.0.1")).startsWith("amqp://");
      assertThatThrownBy(rabbit::restart).hasMessageContaining("still running");
      ConnectionFactory factory = new ConnectionFactory();
      factory.setUri(rabbit.amqpUri());
      try (Connection c = factory.newConnection();
          Channel ch = c.createChannel()) {
        ch.queueDeclare("kept", true, false, false, Map.of());
        ch.confirmSelect();
        ch.basicPublish(
            "",
            "kept",
            MessageProperties.PERSISTENT_BASIC,
            "before".getBytes(StandardCharsets.UTF_8));
        ch.waitForConfirmsOrDie(10_000);
      }

      rabbit.stop();
      assertThat(rabbit.isRunning()).isFalse();
      assertThat(LocalPorts.accepts("127.0.0.1", rabbit.port())).as("port closed").isFalse();

      rabbit.restart();
      assertThat(rabbit.isRunning()).isTrue();
      try (Connection c = factory.newConnection();
          Channel ch = c.createChannel()) {
        GetResponse kept = ch.basicGet("kept", true);
        assertThat(kept).isNotNull();
        assertThat(new String(kept.getBody(), StandardCharsets.UTF_8)).isEqualTo("before");
      }
    }
  }
}
