package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.outbox.relay.Relay;
import io.outbox.relay.StartupException;
import io.outbox.testkit.Services;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A statically routed exchange that does not exist stops the relay at start-up, naming it. */
class RabbitStartupCheckIT {
  private final RelayFixture fx = new RelayFixture("rabbitstartup");
  private final String exchange = "startup-check-" + UUID.randomUUID();

  @AfterEach
  void tearDown() throws Exception {
    try (Connection c = connect();
        Channel ch = c.createChannel()) {
      ch.exchangeDelete(exchange);
    }
    fx.close();
  }

  private String rabbit() {
    return "sink { type = rabbitmq, rabbitmq.uri = \""
        + Services.rabbitUri()
        + "\" }\nrouting.destination = \""
        + exchange
        + "\"";
  }

  @Test
  void aMissingStaticExchangeFailsTheStartNamingIt() {
    assertThatThrownBy(() -> fx.start(rabbit()))
        .isInstanceOf(StartupException.class)
        .hasMessageContaining("pipeline it")
        .hasMessageContaining("'" + exchange + "' does not exist");
  }

  @Test
  void anExistingStaticExchangePasses() throws Exception {
    try (Connection c = connect();
        Channel ch = c.createChannel()) {
      ch.exchangeDeclare(exchange, "topic", true);
    }
    Relay relay = fx.start(rabbit());
    try {
      assertThat(relay.pipelines()).hasSize(1);
    } finally {
      relay.close(Duration.ofSeconds(10));
    }
  }

  private static Connection connect() throws Exception {
    ConnectionFactory f = new ConnectionFactory();
    f.setUri(Services.rabbitUri());
    return f.newConnection();
  }
}
