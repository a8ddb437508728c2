package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@link SinkContract}'s checks of what a sink answered (one verdict per event, all published) and
 * of what its broker delivered (each event once, each key in order; the identity headers and the
 * exact body).
 */
final class SinkAssertions {

  private SinkAssertions() {}

  /** Publishes {@code batch}, waiting {@link SinkContract#ANSWER_TIMEOUT}: a verdict per event. */
  static List<Verdict> publish(Sink sink, List<RoutedEvent> batch) throws Exception {
    CompletableFuture<List<Verdict>> stage = sink.publish(batch).toCompletableFuture();
    List<Verdict> verdicts =
        stage.get(SinkContract.ANSWER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(verdicts).as("one verdict per event").hasSize(batch.size()).doesNotContainNull();
    return verdicts;
  }

  /** All {@code size} verdicts are published; a failure names the distinct errors given. */
  static void assertAllPublished(List<Verdict> verdicts, int size) {
    List<String> errors =
        verdicts.stream().map(Verdict::error).filter(Objects::nonNull).distinct().limit(5).toList();
    assertThat(outcomes(verdicts))
        .as("outcomes (distinct errors: %s)", errors)
        .hasSize(size)
        .containsOnly(Outcome.PUBLISHED);
  }

  static List<Outcome> outcomes(List<Verdict> verdicts) {
    return verdicts.stream().map(Verdict::outcome).toList();
  }

  /**
   * Every event of {@code sent} arrived exactly once, nothing else did, and each key's events
   * arrived in the order they were sent ({@code sent} lists each key's events in that order).
   */
  static void assertArrivedOnceInPerKeyOrder(List<RoutedEvent> sent, List<Delivered> delivered) {
    Map<String, Integer> position = new HashMap<>();
    for (int i = 0; i < sent.size(); i++) {
      position.put(sent.get(i).event().eventId().toString(), i);
    }
    assertThat(delivered.stream().map(Delivered::eventId).toList())
        .as("event ids that arrived")
        .doesNotHaveDuplicates()
        .containsExactlyInAnyOrderElementsOf(position.keySet());
    Map<String, Integer> lastByKey = new HashMap<>();
    List<String> violations = new ArrayList<>();
    for (Delivered d : delivered) {
      int at = position.get(d.eventId());
      String key = sent.get(at).event().key().toString();
      Integer previous = lastByKey.put(key, at);
      if (previous != null && previous > at) {
        violations.add(key + ": event #" + at + " arrived after #" + previous);
      }
    }
    assertThat(violations).as("per-key order").isEmpty();
  }

  /**
   * Each event of {@code sent} arrived as sent: its type, key, content type and exact body, the
   * identity headers, the routing's extra headers and the row's own, and {@code created-at} in
   * ISO-8601 to the microsecond.
   */
  static void assertArrivedAsSent(List<RoutedEvent> sent, List<Delivered> delivered) {
    Map<String, Delivered> byEventId = new HashMap<>();
    delivered.forEach(d -> byEventId.put(d.eventId(), d));
    for (RoutedEvent routed : sent) {
      OutboxEvent event = routed.event();
      Delivered got = byEventId.get(event.eventId().toString());
      assertThat(got).as("message of %s", event).isNotNull();
      assertThat(got.eventType()).isEqualTo(event.eventType());
      assertThat(got.key()).as("broker key").isIn(null, event.aggregateId());
      assertThat(got.contentType()).isIn(null, event.payloadFormat().contentType());
      assertThat(got.body()).as("body of %s", event).isEqualTo(event.payload());
      Map<String, String> expected = new LinkedHashMap<>();
      expected.put("event-id", event.eventId().toString());
      expected.put("event-type", event.eventType());
      expected.put("aggregate-type", event.aggregateType());
      expected.put("aggregate-id", event.aggregateId());
      expected.putAll(routed.extraHeaders());
      expected.putAll(event.headers());
      Map<String, String> headers = new LinkedHashMap<>(got.headers());
      String createdAt = headers.remove("created-at");
      assertThat(createdAt).as("created-at of %s", event).isNotNull();
      assertThatCode(() -> OffsetDateTime.parse(createdAt))
          .as("created-at '%s' is ISO-8601", createdAt)
          .doesNotThrowAnyException();
      assertThat(OffsetDateTime.parse(createdAt).toInstant()).isEqualTo(event.createdAt());
      assertThat(headers).as("headers of %s", event).containsExactlyInAnyOrderEntriesOf(expected);
    }
  }
}
