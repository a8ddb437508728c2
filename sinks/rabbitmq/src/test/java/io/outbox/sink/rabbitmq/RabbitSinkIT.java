package io.outbox.sink.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.GetResponse;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkProvider;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.testkit.LocalPorts;
import io.outbox.testkit.SinkContexts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The RabbitMQ sink against the real broker of {@code scripts/services.sh}. */
class RabbitSinkIT {

  private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

  @RegisterExtension final RabbitSinks rabbitmq = new RabbitSinks();

  static SinkProvider provider() {
    return SinkContexts.provider(RabbitSinkProvider.TYPE);
  }

  static List<Verdict> publish(Sink sink, List<RoutedEvent> batch) throws Exception {
    return sink.publish(batch).toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  static List<Outcome> outcomes(List<Verdict> verdicts) {
    return verdicts.stream().map(Verdict::outcome).toList();
  }

  private static String header(GetResponse r, String name) {
    Object v = r.getProps().getHeaders().get(name);
    return v == null ? null : v.toString();
  }

  @Test
  void aBoundQueueReceivesEveryMessageWithExactPropertiesAndHeadersInPerKeyOrder()
      throws Exception {
    String exchange = RabbitAdmin.unique("outbox.order.it");
    rabbitmq.admin().deleteLater(exchange);
    Sink sink =
        rabbitmq.sink(
            "declare { \"" + exchange + "\" { type = topic } }\n" + "max-unconfirmed = 7\n");
    List<String> keys = List.of("o-1", "o-2", "o-3", "o-ü-4");
    List<RoutedEvent> batch = new ArrayList<>();
    for (int seq = 0; seq < 50; seq++) {
      for (String key : keys) {
        OutboxEvent event =
            Events.event(
                key,
                "{\"key\":\"" + key + "\",\"seq\":" + seq + "}",
                Map.of("trace-id", "t-" + seq));
        batch.add(new RoutedEvent(event, exchange, Map.of("x-extra", "e")));
      }
    }
    // The queue can only be bound once the sink declared the exchange: publish a first event.
    assertThat(rabbitmq.admin().exchangeExists(exchange)).isFalse();
    assertThat(sink.probe(Duration.ofSeconds(10))).isTrue();
    assertThat(rabbitmq.admin().exchangeExists(exchange)).isTrue();
    String queue =
        rabbitmq.admin().queue(RabbitAdmin.unique("q.it"), exchange, "order.OrderCreated");

    List<Verdict> verdicts = publish(sink, batch);

    assertThat(outcomes(verdicts)).hasSize(batch.size()).containsOnly(Outcome.PUBLISHED);
    List<GetResponse> received = rabbitmq.admin().read(queue, batch.size(), READ_TIMEOUT);
    assertThat(received).hasSize(batch.size());
    Map<String, OutboxEvent> byId = new HashMap<>();
    batch.forEach(r -> byId.put(r.event().eventId().toString(), r.event()));
    Map<String, Long> lastIdByKey = new HashMap<>();
    for (GetResponse r : received) {
      AMQP.BasicProperties p = r.getProps();
      OutboxEvent sent = byId.get(p.getMessageId());
      assertThat(sent).as("message_id %s", p.getMessageId()).isNotNull();
      assertThat(r.getEnvelope().getExchange()).isEqualTo(exchange);
      assertThat(r.getEnvelope().getRoutingKey()).isEqualTo("order.OrderCreated");
      assertThat(r.getBody()).isEqualTo(sent.payload());
      assertThat(p.getType()).isEqualTo("OrderCreated");
      assertThat(p.getTimestamp())
          .isEqualTo(Date.from(Events.CREATED_AT.truncatedTo(ChronoUnit.SECONDS)));
      assertThat(p.getDeliveryMode()).isEqualTo(2);
      assertThat(p.getContentType()).isEqualTo("application/json");
      assertThat(p.getHeaders()).hasSize(7);
      assertThat(header(r, "event-id")).isEqualTo(sent.eventId().toString());
      assertThat(header(r, "event-type")).isEqualTo("OrderCreated");
      assertThat(header(r, "aggregate-type")).isEqualTo("order");
      assertThat(header(r, "aggregate-id")).isEqualTo(sent.aggregateId());
      assertThat(header(r, "created-at")).isEqualTo("2024-05-01T10:15:30.123456Z");
      assertThat(header(r, "trace-id")).isEqualTo(sent.headers().get("trace-id"));
      assertThat(header(r, "x-extra")).isEqualTo("e");
      Long previous = lastIdByKey.put(sent.aggregateId(), sent.id());
      assertThat(previous == null || previous < sent.id())
          .as("per-key order of %s", sent.aggregateId())
          .isTrue();
    }
  }

  @Test
  void anUnroutableEventIsPermanentAndTheOthersArePublished() throws Exception {
    String exchange = rabbitmq.admin().exchange(RabbitAdmin.unique("outbox.unroutable.it"));
    String queue = rabbitmq.admin().queue(RabbitAdmin.unique("q.it"), exchange, "bound");
    Sink sink = rabbitmq.sink("routing-key = \"${aggregate_id}\"");
    List<RoutedEvent> batch =
        List.of(
            Events.routed(exchange, "bound", "{\"n\":1}"),
            Events.routed(exchange, "nobody-listens", "{\"n\":2}"),
            Events.routed(exchange, "bound", "{\"n\":3}"));

    List<Verdict> verdicts = publish(sink, batch);

    assertThat(outcomes(verdicts))
        .containsExactly(Outcome.PUBLISHED, Outcome.PERMANENT, Outcome.PUBLISHED);
    assertThat(verdicts.get(1).error())
        .isEqualTo(
            "unroutable: exchange '"
                + exchange
                + "' routing key 'nobody-listens' (no queue bound; 312 NO_ROUTE)");
    List<GetResponse> received = rabbitmq.admin().read(queue, 2, READ_TIMEOUT);
    assertThat(received)
        .extracting(r -> r.getProps().getMessageId())
        .containsExactly(
            batch.get(0).event().eventId().toString(), batch.get(2).event().eventId().toString());
  }

  @Test
  void aMissingExchangeClosingTheChannelFailsOnlyItsEventAndLosesNothing() throws Exception {
    missingExchangeMidBatch(false);
  }

  @Test
  void aMissingExchangeFoundByThePassiveCheckFailsOnlyItsEvent() throws Exception {
    missingExchangeMidBatch(true);
  }

  private void missingExchangeMidBatch(boolean checkExchanges) throws Exception {
    String exchange = rabbitmq.admin().exchange(RabbitAdmin.unique("outbox.present.it"));
    String queue = rabbitmq.admin().queue(RabbitAdmin.unique("q.it"), exchange, "#");
    String missing = RabbitAdmin.unique("outbox.missing.it");
    Sink sink = rabbitmq.sink("check-exchanges = " + checkExchanges);
    List<RoutedEvent> batch = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      batch.add(Events.routed(i == 100 ? missing : exchange, "o-" + (i % 10), "{\"n\":" + i + "}"));
    }

    List<Verdict> verdicts = publish(sink, batch);

    for (int i = 0; i < batch.size(); i++) {
      assertThat(verdicts.get(i).outcome())
          .as("event %d: %s", i, verdicts.get(i).error())
          .isEqualTo(i == 100 ? Outcome.PERMANENT : Outcome.PUBLISHED);
    }
    assertThat(verdicts.get(100).error()).startsWith("exchange '" + missing + "' does not exist");
    List<GetResponse> received = rabbitmq.admin().read(queue, 199, READ_TIMEOUT);
    received.addAll(rabbitmq.admin().drain(queue));
    Set<String> ids = new HashSet<>();
    received.forEach(r -> ids.add(r.getProps().getMessageId()));
    Set<String> expected = new HashSet<>();
    for (int i = 0; i < batch.size(); i++) {
      if (i != 100) {
        expected.add(batch.get(i).event().eventId().toString());
      }
    }
    assertThat(ids).isEqualTo(expected); // duplicates (in doubt, sent again) share the message_id
    assertFirstDeliveriesInBatchOrderPerKey(batch, received);
    // The sink keeps working on a fresh channel.
    assertThat(outcomes(publish(sink, List.of(Events.routed(exchange, "o-1", "{}")))))
        .containsExactly(Outcome.PUBLISHED);
  }

  /** The first delivery of each event never comes before an earlier event of its key. */
  private static void assertFirstDeliveriesInBatchOrderPerKey(
      List<RoutedEvent> batch, List<GetResponse> received) {
    Map<String, Integer> position = new HashMap<>();
    for (int i = 0; i < batch.size(); i++) {
      position.put(batch.get(i).event().eventId().toString(), i);
    }
    Set<String> seen = new HashSet<>();
    Map<String, Integer> lastByKey = new HashMap<>();
    List<String> violations = new ArrayList<>();
    for (GetResponse r : received) {
      String id = r.getProps().getMessageId();
      if (!seen.add(id)) {
        continue;
      }
      String key = header(r, "aggregate-id");
      int at = position.get(id);
      Integer previous = lastByKey.put(key, at);
      if (previous != null && previous > at) {
        violations.add(key + ": event " + at + " after " + previous);
      }
    }
    assertThat(violations).as("per-key order of first deliveries").isEmpty();
  }

  @Test
  void concurrentBatchesShareTheChannelsAndKeepPerKeyOrder() throws Exception {
    String exchange = rabbitmq.admin().exchange(RabbitAdmin.unique("outbox.concurrent.it"));
    String queue = rabbitmq.admin().queue(RabbitAdmin.unique("q.it"), exchange, "#");
    Sink sink = rabbitmq.sink("channels = 2\nmax-unconfirmed = 16");
    int lanes = 6;
    List<List<RoutedEvent>> batches = new ArrayList<>();
    for (int lane = 0; lane < lanes; lane++) {
      for (int round = 0; round < 5; round++) {
        List<RoutedEvent> batch = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
          batch.add(Events.routed(exchange, "lane" + lane + "-k" + i % 7, "{\"i\":" + i + "}"));
        }
        batches.add(batch);
      }
    }
    List<Future<List<Verdict>>> results = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(lanes);
    try {
      for (int lane = 0; lane < lanes; lane++) {
        List<List<RoutedEvent>> mine = batches.subList(lane * 5, lane * 5 + 5);
        results.add(
            pool.submit(
                () -> {
                  List<Verdict> all = new ArrayList<>();
                  for (List<RoutedEvent> batch : mine) {
                    all.addAll(publish(sink, batch)); // one batch in flight per lane
                  }
                  return all;
                }));
      }
      for (var f : results) {
        assertThat(outcomes(f.get(120, TimeUnit.SECONDS))).containsOnly(Outcome.PUBLISHED);
      }
    } finally {
      pool.shutdownNow();
    }
    List<RoutedEvent> all = batches.stream().flatMap(List::stream).toList();
    List<GetResponse> received = rabbitmq.admin().read(queue, all.size(), READ_TIMEOUT);
    received.addAll(rabbitmq.admin().drain(queue));
    assertThat(received).hasSize(all.size());
    assertFirstDeliveriesInBatchOrderPerKey(all, received);
  }

  @Test
  void anExchangeDeletedWhileInUseFailsItsEventsAndIsCheckedAgainNextTime() throws Exception {
    String exchange = rabbitmq.admin().exchange(RabbitAdmin.unique("outbox.deleted.it"));
    String other = rabbitmq.admin().exchange(RabbitAdmin.unique("outbox.other.it"));
    String queue = rabbitmq.admin().queue(RabbitAdmin.unique("q.it"), other, "#");
    rabbitmq.admin().queue(RabbitAdmin.unique("q.it"), exchange, "#");
    Sink sink = rabbitmq.sink("channels = 1");
    assertThat(outcomes(publish(sink, List.of(Events.routed(exchange, "o-1", "{}")))))
        .containsExactly(Outcome.PUBLISHED); // now known to exist
    rabbitmq.admin().deleteExchange(exchange);

    List<Verdict> first =
        publish(
            sink,
            List.of(
                Events.routed(other, "o-1", "{}"),
                Events.routed(exchange, "o-2", "{}"),
                Events.routed(other, "o-3", "{}")));
    List<Verdict> second = publish(sink, List.of(Events.routed(exchange, "o-2", "{}")));

    assertThat(outcomes(first))
        .containsExactly(Outcome.PUBLISHED, Outcome.PERMANENT, Outcome.PUBLISHED);
    assertThat(first.get(1).error()).contains("404 NOT_FOUND");
    assertThat(outcomes(second)).containsExactly(Outcome.PERMANENT);
    assertThat(second.get(0).error()).endsWith("does not exist (checked passively)");
    assertThat(rabbitmq.admin().read(queue, 2, READ_TIMEOUT)).hasSize(2);
  }

  @Test
  void anUnreachableBrokerIsSinkUnavailableWithinTheTimeoutAndTheProbeSaysNo() throws Exception {
    int port = LocalPorts.unbound();
    Sink sink =
        rabbitmq.sinkWith(
            "uri = \"amqp://guest:guest@127.0.0.1:"
                + port
                + "/%2f\"\nconfirm-timeout = 3s\nconnection-timeout = 2s");
    long start = System.nanoTime();

    List<Verdict> verdicts =
        publish(
            sink,
            List.of(
                Events.routed("outbox.x", "o-1", "{}"), Events.routed("outbox.x", "o-2", "{}")));

    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    assertThat(outcomes(verdicts)).containsOnly(Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts.get(0).error()).contains("cannot reach RabbitMQ").doesNotContain("guest:");
    assertThat(sink.probe(Duration.ofSeconds(2))).isFalse();
  }

  @Test
  void aClosedSinkAnswersSinkUnavailable() throws Exception {
    String exchange = rabbitmq.admin().exchange(RabbitAdmin.unique("outbox.closed.it"));
    Sink sink = rabbitmq.sink("");
    assertThat(sink.probe(Duration.ofSeconds(5))).isTrue();
    sink.close(Duration.ofSeconds(5));

    assertThat(outcomes(publish(sink, List.of(Events.routed(exchange, "o-1", "{}")))))
        .containsExactly(Outcome.SINK_UNAVAILABLE);
    assertThat(sink.probe(Duration.ofSeconds(1))).isFalse();
  }

  @Test
  void aLargePayloadGoesThroughByteForByte() throws Exception {
    String exchange = rabbitmq.admin().exchange(RabbitAdmin.unique("outbox.large.it"));
    String queue = rabbitmq.admin().queue(RabbitAdmin.unique("q.it"), exchange, "#");
    Sink sink = rabbitmq.sink("");
    String payload = "{\"blob\":\"" + "é".repeat(300_000) + "\"}";
    RoutedEvent event = Events.routed(exchange, "o-1", payload);

    assertThat(outcomes(publish(sink, List.of(event)))).containsExactly(Outcome.PUBLISHED);
    assertThat(rabbitmq.admin().read(queue, 1, READ_TIMEOUT).get(0).getBody())
        .isEqualTo(payload.getBytes(StandardCharsets.UTF_8));
  }
}
