package io.outbox.sink.rabbitmq;

import static io.outbox.sink.rabbitmq.Contexts.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.GetResponse;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.testkit.Rabbitmqctl;
import io.outbox.testkit.Services;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Stops and starts the shared RabbitMQ ({@code rabbitmqctl stop_app / start_app}) while the sink
 * publishes. Only RabbitMQ tests use that broker, and it is always started again.
 */
// Exclusive: stops and starts the shared RabbitMQ, which every other RabbitMQ test uses.
@Tag("exclusive")
class RabbitRestartIT {

  @Test
  void aBrokerRestartMidStreamPublishesNothingUnconfirmedAndPublishingResumes() throws Exception {
    // Its connection dies with the broker; a second one reads and cleans up afterwards.
    RabbitAdmin before = new RabbitAdmin();
    String exchange = before.exchange(RabbitAdmin.unique("outbox.restart.it"));
    String queue = before.queue(RabbitAdmin.unique("q.restart.it"), exchange, "#");
    Sink sink =
        RabbitSinkIT.provider()
            .create(
                context(
                    "uri = \""
                        + Services.rabbitUri()
                        + "\"\nconfirm-timeout = 5s\nconnection-timeout = 2s"));
    Map<String, Outcome> verdicts = new ConcurrentHashMap<>();
    AtomicInteger unavailableBatches = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService lane = Executors.newSingleThreadExecutor();
    try {
      Future<?> publisher =
          lane.submit(
              () -> {
                for (int seq = 0; !stop.get(); seq++) {
                  List<RoutedEvent> batch = new ArrayList<>();
                  for (int i = 0; i < 50; i++) {
                    batch.add(Events.routed(exchange, "o-" + i % 10, "{\"seq\":" + seq + "}"));
                  }
                  List<Verdict> answered = RabbitSinkIT.publish(sink, batch);
                  for (int i = 0; i < batch.size(); i++) {
                    verdicts.put(
                        batch.get(i).event().eventId().toString(), answered.get(i).outcome());
                  }
                  if (answered.stream().anyMatch(v -> !v.isPublished())) {
                    unavailableBatches.incrementAndGet();
                    // As the pipeline does: pause and probe until the sink answers again.
                    await()
                        .atMost(Duration.ofSeconds(120))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> stop.get() || sink.probe(Duration.ofSeconds(2)));
                  }
                }
                return null;
              });
      await().atMost(Duration.ofSeconds(30)).until(() -> verdicts.size() >= 1000);
      try {
        Rabbitmqctl.run(Duration.ofSeconds(90), "stop_app");
        await().atMost(Duration.ofSeconds(30)).until(() -> unavailableBatches.get() > 0);
      } finally {
        Rabbitmqctl.run(Duration.ofSeconds(90), "start_app");
      }
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> sink.probe(Duration.ofSeconds(2)));
      long publishedAtRestart = count(verdicts, Outcome.PUBLISHED);
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> count(verdicts, Outcome.PUBLISHED) >= publishedAtRestart + 500);
      stop.set(true);
      publisher.get(60, TimeUnit.SECONDS);
    } finally {
      stop.set(true);
      lane.shutdownNow();
      sink.close(Duration.ofSeconds(5));
      before.close(); // a no-op once the restart closed its connection
    }

    assertThat(verdicts.values())
        .as("an outage is never the events' fault")
        .containsOnly(Outcome.PUBLISHED, Outcome.SINK_UNAVAILABLE);
    assertThat(count(verdicts, Outcome.SINK_UNAVAILABLE)).isPositive();
    Set<String> published = new HashSet<>();
    verdicts.forEach(
        (id, outcome) -> {
          if (outcome == Outcome.PUBLISHED) {
            published.add(id);
          }
        });
    try (RabbitAdmin admin = new RabbitAdmin()) {
      admin.deleteLater(exchange);
      List<GetResponse> received = admin.read(queue, published.size(), Duration.ofSeconds(30));
      received.addAll(admin.drain(queue));
      admin.deleteQueueLater(queue);
      Set<String> ids = new HashSet<>();
      received.forEach(r -> ids.add(r.getProps().getMessageId()));
      assertThat(ids).as("every confirmed message survived the restart").containsAll(published);
    }
  }

  private static long count(Map<String, Outcome> verdicts, Outcome outcome) {
    return verdicts.values().stream().filter(o -> o == outcome).count();
  }
}
