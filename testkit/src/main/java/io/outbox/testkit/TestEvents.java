package io.outbox.testkit;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** Events for sink tests, and the verdicts a sink gave them. */
public final class TestEvents {

  private static final AtomicLong IDS = new AtomicLong();

  /** When every {@link #event} was created: fixed, so that what a sink derives from it is known. */
  public static final Instant CREATED_AT = Instant.parse("2024-05-01T10:15:30.123456Z");

  private TestEvents() {}

  /**
   * A new {@code order}/{@code OrderCreated} event of key {@code aggregateId}, a JSON body, created
   * at {@link #CREATED_AT}.
   */
  public static OutboxEvent event(String aggregateId, byte[] payload, Map<String, String> headers) {
    return event(aggregateId, payload, headers, CREATED_AT);
  }

  /** An {@code order}/{@code OrderCreated} event with row id {@code id}, body {@code {}}. */
  public static OutboxEvent event(long id, String aggregateId) {
    return event(id, aggregateId, "{}".getBytes(StandardCharsets.UTF_8), Map.of(), CREATED_AT);
  }

  /**
   * A new event of the given type, key and body, created at {@link #CREATED_AT}: what a row of any
   * shape is, for a sink.
   */
  public static OutboxEvent event(
      String aggregateType,
      String aggregateId,
      String eventType,
      byte[] payload,
      PayloadFormat format,
      Map<String, String> headers) {
    return event(
        IDS.incrementAndGet(),
        aggregateType,
        aggregateId,
        eventType,
        payload,
        format,
        headers,
        CREATED_AT);
  }

  private static OutboxEvent event(
      String aggregateId, byte[] payload, Map<String, String> headers, Instant createdAt) {
    return event(IDS.incrementAndGet(), aggregateId, payload, headers, createdAt);
  }

  private static OutboxEvent event(
      long id, String aggregateId, byte[] payload, Map<String, String> headers, Instant createdAt) {
    return event(
        id, "order", aggregateId, "OrderCreated", payload, PayloadFormat.JSON, headers, createdAt);
  }

  private static OutboxEvent event(
      long id,
      String aggregateType,
      String aggregateId,
      String eventType,
      byte[] payload,
      PayloadFormat format,
      Map<String, String> headers,
      Instant createdAt) {
    return new OutboxEvent(
        id,
        UUID.randomUUID(),
        aggregateType,
        aggregateId,
        eventType,
        null,
        payload,
        format,
        headers,
        createdAt,
        0);
  }

  /** A new {@code order}/{@code OrderCreated} event of key {@code aggregateId} with a JSON body. */
  public static RoutedEvent routed(String destination, String aggregateId, String json) {
    return new RoutedEvent(
        event(aggregateId, json.getBytes(StandardCharsets.UTF_8), null, Instant.now()),
        destination);
  }

  /** Publishes {@code batch} and returns its verdicts, waiting at most 30 s. */
  public static List<Verdict> verdicts(Sink sink, List<RoutedEvent> batch) throws Exception {
    return sink.publish(batch).toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** Publishes {@code batch} and returns the outcomes of its verdicts, waiting at most 30 s. */
  public static List<Verdict.Outcome> outcomes(Sink sink, List<RoutedEvent> batch)
      throws Exception {
    return verdicts(sink, batch).stream().map(Verdict::outcome).toList();
  }
}
