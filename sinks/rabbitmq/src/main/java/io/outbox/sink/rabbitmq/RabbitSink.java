package io.outbox.sink.rabbitmq;

import static io.outbox.relay.spi.support.BatchPublisher.describe;

import com.rabbitmq.client.AMQP;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.support.BatchPublisher;
import io.outbox.relay.spi.support.EventTemplate;
import io.outbox.relay.spi.support.PendingBatch;
import io.outbox.relay.spi.support.PublishingSink;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes batches to RabbitMQ over one connection and a small pool of confirm-mode channels. A
 * sender thread takes a channel, publishes one turn of its batch (a key's next event once the one
 * before was confirmed: {@link PendingBatch#nextTurn}) in order with {@code mandatory = true}
 * (waiting only for room in the channel's confirm window) and gives the channel back; the broker's
 * confirms, returns and channel closures then yield the verdicts. A batch completes when every
 * event has its verdict or {@code confirm-timeout} expired ({@link BatchPublisher}). A nack is
 * back-pressure: the event is sink-unavailable and the probe holds the pipeline back for a while
 * ({@link BackPressure}).
 */
final class RabbitSink extends PublishingSink {

  private static final Logger log = LoggerFactory.getLogger(RabbitSink.class);

  private final String pipeline;
  private final RabbitSinkSettings settings;
  private final EventTemplate routingKey;
  private final RabbitConnection connection;
  private final ChannelPool channels;
  private final BackPressure backPressure;

  /** Connects lazily, on the first publish or probe. */
  RabbitSink(PluginContext context, RabbitSinkSettings settings) {
    super(
        "RabbitMQ",
        context,
        settings.confirmTimeout(),
        "confirm-timeout",
        e -> "exchange '" + e.destination() + "'");
    this.pipeline = context.pipeline();
    this.backPressure = new BackPressure(context.ticker());
    this.settings = settings;
    this.routingKey = EventTemplate.parse(settings.routingKey());
    this.connection = new RabbitConnection(pipeline, settings);
    PublishChannel.Listener signals = new BrokerSignals(pipeline, connection, backPressure);
    this.channels =
        new ChannelPool(
            settings.channels(),
            () -> PublishChannel.open(connection.open(), settings.maxUnconfirmed(), signals));
  }

  // Sent on a sender thread, never the caller's: a broker that blocks publishing (a resource
  // alarm) can stop reading mid-write, and the lane must still get its verdicts by the deadline.
  // A turn holds at most one event per key (PendingBatch#nextTurn); events a dead channel sent
  // back come again in a later turn, before their key's later events.
  @Override
  protected void send(PendingBatch batch, List<Integer> todo) throws InterruptedException {
    List<RoutedEvent> events = batch.events();
    PublishChannel channel = null;
    Set<String> missing = new HashSet<>(); // checked once per send, not once per event
    int n = 0;
    try {
      for (; n < todo.size(); n++) {
        int i = todo.get(n);
        if (batch.verdict(i) != null) {
          continue;
        }
        RoutedEvent routed = events.get(i);
        String exchange = routed.destination();
        // No check of `closed` here: a batch taken before close() is still sent, and close()
        // waits for it (up to its timeout, then expires what is left).
        if (batch.expired()) {
          batch.failFrom(todo, n, batch.unavailable(i, "confirm-timeout expired before sending"));
          return;
        }
        String key = routingKey.render(routed.event());
        String problem = RabbitMessages.problem(exchange, key, routed, connection.maxMessageSize());
        if (problem != null) {
          batch.complete(i, Verdict.permanent(problem));
          continue;
        }
        if (settings.checkExchanges()
            && (missing.contains(exchange) || !connection.exchangeExists(exchange))) {
          missing.add(exchange);
          batch.complete(
              i,
              Verdict.permanent("exchange '" + exchange + "' does not exist (checked passively)"));
          continue;
        }
        if (connection.isBlocked()) {
          batch.failFrom(todo, n, batch.unavailable(i, "RabbitMQ blocks publishing (alarm)"));
          return;
        }
        if (channel == null) {
          channel = channels.borrow(batch.deadline());
          if (channel == null) {
            batch.failFrom(todo, n, batch.unavailable(i, "no free channel within confirm-timeout"));
            return;
          }
        }
        if (!channel.acquire(batch.deadline())) {
          batch.failFrom(
              todo,
              n,
              batch.unavailable(
                  i,
                  "max-unconfirmed ("
                      + settings.maxUnconfirmed()
                      + ") messages still unconfirmed at confirm-timeout"));
          return;
        }
        if (batch.verdict(i) != null) { // the batch expired while waiting for room
          channel.release();
          continue;
        }
        AMQP.BasicProperties properties = RabbitMessages.properties(routed);
        PublishChannel.Entry entry =
            new PublishChannel.Entry(
                batch,
                i,
                exchange,
                key,
                properties.getMessageId(),
                routed.event().payload().length);
        if (!channel.publish(entry, properties, routed.event().payload())) {
          if (channel.connectionLost()) {
            batch.failFrom(
                todo,
                n,
                batch.unavailable(i, "connection to RabbitMQ lost: " + channel.closeReason()));
          } else {
            // The channel died (a missing exchange, say): the rest goes out on another channel.
            for (int m = n; m < todo.size(); m++) {
              batch.resendLater(todo.get(m));
            }
          }
          return;
        }
      }
    } catch (IOException | TimeoutException e) {
      int i = todo.get(Math.min(n, todo.size() - 1));
      batch.failFrom(todo, n, batch.unavailable(i, "cannot reach RabbitMQ: " + describe(e)));
    } finally {
      if (channel != null) {
        channels.giveBack(channel);
      }
    }
  }

  @Override
  public List<String> missingDestinations(Set<String> exchanges) {
    List<String> missing =
        publisher()
            .ask(
                () -> {
                  List<String> out = new ArrayList<>();
                  for (String exchange : exchanges) {
                    if (!connection.exchangeExists(exchange)) {
                      out.add(
                          "RabbitMQ exchange '"
                              + exchange
                              + "' does not exist; declare it (or list it under"
                              + " sink.rabbitmq.declare)");
                    }
                  }
                  return out;
                },
                settings.connectionTimeout().multipliedBy(2),
                "exchange check");
    if (missing == null) {
      log.warn(
          "pipeline {}: cannot check the RabbitMQ exchanges at start-up; publishing will tell",
          pipeline);
      return List.of();
    }
    return missing;
  }

  @Override
  public boolean probe(Duration timeout) {
    if (backPressure.holds()) {
      // A full queue answers like a healthy broker: wait out the hold before publishing again.
      log.debug("RabbitMQ probe for pipeline {}: holding back after basic.nack", pipeline);
      return false;
    }
    return super.probe(timeout);
  }

  @Override
  protected boolean answers(Duration timeout) throws IOException, TimeoutException {
    return connection.answers();
  }

  @Override
  protected void closeClient(Duration left) {
    channels.close();
    connection.close((int) Math.max(1, Math.min(5000, left.toMillis())));
  }

  /** {@inheritDoc} Here the AMQP binding's: application properties {@code cloudEvents_id}, ... */
  @Override
  public String cloudEventsHeaderPrefix() {
    return "cloudEvents_";
  }
}
