package io.outbox.sink.rabbitmq;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the sink's channels learn from RabbitMQ besides verdicts, routed to where it is kept:
 * refusals and acceptances to the {@link BackPressure} that holds the probe back, a missing
 * exchange and the broker's max_message_size to the {@link RabbitConnection}.
 */
final class BrokerSignals implements PublishChannel.Listener {

  private static final Logger log = LoggerFactory.getLogger(BrokerSignals.class);

  private final String pipeline;
  private final RabbitConnection connection;
  private final BackPressure backPressure;

  BrokerSignals(String pipeline, RabbitConnection connection, BackPressure backPressure) {
    this.pipeline = pipeline;
    this.connection = connection;
    this.backPressure = backPressure;
  }

  @Override
  public void missingExchange(String exchange) {
    connection.forget(exchange);
  }

  @Override
  public void refused() {
    backPressure.refused();
  }

  @Override
  public void accepted() {
    backPressure.accepted();
  }

  @Override
  public void maxMessageSize(long bytes) {
    if (connection.learnMaxMessageSize(bytes)) {
      log.warn(
          "pipeline {}: RabbitMQ closed a channel for a message over its max_message_size of {}"
              + " bytes; larger events are now dead-lettered (permanent) without being sent",
          pipeline,
          bytes);
    }
  }
}
