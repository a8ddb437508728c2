package io.outbox.sink.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.GetResponse;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A queue at its {@code x-max-length} with {@code x-overflow = reject-publish} on the shared
 * RabbitMQ: the broker nacks what overflows. That is back-pressure, not the events' fault: the
 * refused events come back sink-unavailable (no attempt), the probe holds the pipeline back for a
 * while, and once a consumer drained the queue the same events are published.
 */
class RabbitBackPressureIT {

  private static final int MAX_LENGTH = 5;

  @RegisterExtension final RabbitSinks rabbitmq = new RabbitSinks();

  private String fullableQueue(String exchange) throws Exception {
    return rabbitmq
        .admin()
        .queue(
            RabbitAdmin.unique("q.full.it"),
            exchange,
            "#",
            Map.of("x-max-length", MAX_LENGTH, "x-overflow", "reject-publish"));
  }

  @Test
  void aFullQueueRefusingMessagesIsSinkUnavailableOnlyForTheRefusedEvents() throws Exception {
    String exchange = rabbitmq.admin().exchange(RabbitAdmin.unique("outbox.full.it"));
    String queue = fullableQueue(exchange);
    Sink sink = rabbitmq.sink("channels = 1");
    List<RoutedEvent> batch = new ArrayList<>();
    for (int i = 0; i < MAX_LENGTH + 3; i++) {
      batch.add(Events.routed(exchange, "o-" + i, "{\"n\":" + i + "}"));
    }

    List<Verdict> verdicts = RabbitSinkIT.publish(sink, batch);

    List<Outcome> expected = new ArrayList<>();
    for (int i = 0; i < batch.size(); i++) {
      expected.add(i < MAX_LENGTH ? Outcome.PUBLISHED : Outcome.SINK_UNAVAILABLE);
    }
    assertThat(RabbitSinkIT.outcomes(verdicts)).containsExactlyElementsOf(expected);
    assertThat(verdicts.get(MAX_LENGTH).error())
        .startsWith("exchange '" + exchange + "': basic.nack")
        .contains("reject-publish");
    assertThat(sink.probe(Duration.ofSeconds(5)))
        .as("the probe holds the pipeline back right after a nack")
        .isFalse();

    List<GetResponse> received = rabbitmq.admin().read(queue, MAX_LENGTH, Duration.ofSeconds(10));
    assertThat(rabbitmq.admin().depth(queue)).isZero();
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> sink.probe(Duration.ofSeconds(5)));
    // As the pipeline does after the pause: the refused events again, same message ids.
    List<RoutedEvent> refused = batch.subList(MAX_LENGTH, batch.size());
    assertThat(RabbitSinkIT.publish(sink, refused)).allMatch(Verdict::isPublished);

    received.addAll(rabbitmq.admin().read(queue, refused.size(), Duration.ofSeconds(10)));
    Set<String> ids = new HashSet<>();
    received.forEach(r -> ids.add(r.getProps().getMessageId()));
    Set<String> all = new HashSet<>();
    batch.forEach(r -> all.add(r.event().eventId().toString()));
    assertThat(ids).isEqualTo(all);
  }

  @Test
  void aRefusedEventHoldsBackItsKeysLaterEventsWithoutChargingThem() throws Exception {
    String exchange = rabbitmq.admin().exchange(RabbitAdmin.unique("outbox.full.key.it"));
    String queue = fullableQueue(exchange);
    // Fill the queue first, so that the nack of the key's first event comes back before the
    // sender reaches its later ones (max-unconfirmed = 1: one message in flight at a time).
    Sink sink = rabbitmq.sink("channels = 1\nmax-unconfirmed = 1");
    List<RoutedEvent> fill = new ArrayList<>();
    for (int i = 0; i < MAX_LENGTH; i++) {
      fill.add(Events.routed(exchange, "fill-" + i, "{}"));
    }
    assertThat(RabbitSinkIT.publish(sink, fill)).allMatch(Verdict::isPublished);

    List<Verdict> verdicts =
        RabbitSinkIT.publish(
            sink,
            List.of(
                Events.routed(exchange, "k", "{\"n\":1}"),
                Events.routed(exchange, "k", "{\"n\":2}"),
                Events.routed(exchange, "k", "{\"n\":3}")));

    assertThat(RabbitSinkIT.outcomes(verdicts)).containsOnly(Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts.get(0).error()).contains("basic.nack");
    assertThat(verdicts.get(1).error()).startsWith("not sent: an earlier event");
    assertThat(rabbitmq.admin().depth(queue)).isEqualTo(MAX_LENGTH);
  }
}
