package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What docs/design.md's failure classes and per-key order require of every sink, as one suite each
 * sink's integration tests extend with a small subclass that says how to reach its real broker (the
 * tests are {@code final}: a sink passes them as they are, or the difference is a finding).
 */
public abstract class SinkContract {

  /** How long a test waits for a publish to answer when the broker is up. */
  protected static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(60);

  /** How long a test waits for published messages to reach its consumer. */
  protected static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

  private static final Instant CREATED_AT = Instant.parse("2024-05-01T10:15:30.123456Z");
  private static final AtomicLong IDS = new AtomicLong();

  private final List<Sink> sinks = new ArrayList<>();
  private final Teardown opened = new Teardown();

  /**
   * Makes a new, empty destination (a topic; an exchange with a queue bound to receive everything)
   * named uniquely for this test, and returns its name.
   */
  protected abstract String newDestination() throws Exception;

  /** Creates a sink on the live broker, with {@code extraSettings} (HOCON) over its defaults. */
  protected abstract Sink newSink(String extraSettings) throws Exception;

  /**
   * Creates a sink whose broker address answers nothing, with timeouts short enough that a publish
   * answers well within {@link #unavailableWithin()}.
   */
  protected abstract Sink newUnreachableSink() throws Exception;

  /** A destination name the broker can never accept. */
  protected abstract String invalidDestination();

  /**
   * Reads what arrived at {@code destination} until at least {@code expected} messages did or
   * {@code timeout} passed, and returns them: the messages of one key in arrival order.
   */
  protected abstract List<Delivered> read(String destination, int expected, Duration timeout)
      throws Exception;

  /**
   * Settings that make the sink hold messages a while before sending them (Kafka: {@code
   * producer.linger.ms}), so that {@code close} finds messages not yet acknowledged.
   */
  protected String slowFlushSettings() {
    return "";
  }

  /**
   * A destination whose broker, while the test publishes, refuses some messages and takes later
   * ones: it is full and something keeps making a little room (RabbitMQ: a queue at its {@code
   * x-max-length} with {@code x-overflow = reject-publish} that is purged now and then; NATS: a
   * stream at its {@code max-msgs} with {@code discard = new} that is purged down now and then;
   * Redis: a server kept busy by a script, answering BUSY, now and then; Kafka: a topic that
   * refuses records older than an hour, and a producer interceptor that back-dates one record in
   * 40). An event of a key is then refused while later events of its key are in flight: none of
   * those may be published before it. Things to stop go to {@link #closeAfter}.
   */
  protected abstract Refusing refusingDestination() throws Exception;

  /**
   * @param destination where to publish
   * @param sinkSettings the sink's settings for it (HOCON), over its defaults
   * @param capacity how many messages the destination holds at most: a run that publishes more than
   *     this saw the broker take messages after it refused some
   * @param keepsWhatItTook whether the destination keeps every message the broker took, so that
   *     {@link #readToEnd} shows what was delivered (Kafka); the others refuse by being full and
   *     drop messages to make room, so only the verdicts can be checked
   */
  public record Refusing(
      String destination, String sinkSettings, int capacity, boolean keepsWhatItTook) {
    public Refusing(String destination, String sinkSettings, int capacity) {
      this(destination, sinkSettings, capacity, false);
    }
  }

  /**
   * Everything {@code destination} holds, in the order a consumer reads it (per partition); only
   * called for a {@link Refusing} destination that {@linkplain Refusing#keepsWhatItTook keeps what
   * it took}.
   */
  protected List<Delivered> readToEnd(String destination) throws Exception {
    throw new UnsupportedOperationException(
        getClass().getSimpleName()
            + " keeps what its refusing destination took but cannot read it");
  }

  /** The bound within which an unreachable broker's publish and probe must answer. */
  protected Duration unavailableWithin() {
    return Duration.ofSeconds(10);
  }

  /** Called after each test, once its sinks are closed: delete what the test declared. */
  protected void cleanUp() throws Exception {}

  /**
   * Closes {@code resource} (a client the subclass reads with, say) after each test, once its sinks
   * are closed, before {@link #cleanUp()}; returns it.
   */
  protected final <T extends AutoCloseable> T closeAfter(T resource) {
    return opened.add(resource);
  }

  @AfterEach
  final void closeSinksAndCleanUp() throws Exception {
    sinks.forEach(s -> s.close(Duration.ofSeconds(5)));
    try {
      opened.closeAll();
    } finally {
      cleanUp();
    }
  }

  // ---- the contract ----

  @Test
  final void everyEventGetsExactlyOneVerdictInBatchOrder() throws Exception {
    String first = newDestination();
    String second = newDestination();
    String invalid = invalidDestination();
    Sink sink = sink("");
    List<RoutedEvent> batch = new ArrayList<>();
    List<Outcome> expected = new ArrayList<>();
    for (int i = 0; i < 24; i++) {
      boolean bad = i == 3 || i == 11 || i == 17;
      String destination = bad ? invalid : i % 2 == 0 ? first : second;
      // Each failing event has a key of its own: later events of a failed key may be held back.
      String key = bad ? "bad-" + i : "k-" + i % 5;
      batch.add(routed(destination, key, json(i)));
      expected.add(bad ? Outcome.PERMANENT : Outcome.PUBLISHED);
    }

    assertThat(publish(sink, List.of())).isEmpty();
    List<Verdict> verdicts = publish(sink, batch);

    assertThat(outcomes(verdicts)).containsExactlyElementsOf(expected);
    assertThat(read(first, 12, READ_TIMEOUT).size() + read(second, 9, READ_TIMEOUT).size())
        .isEqualTo(21);
  }

  @Test
  final void aClosedSinkStillAnswersEveryEventWithoutFailingTheStage() throws Exception {
    String destination = newDestination();
    Sink sink = sink("");
    assertThat(outcomes(publish(sink, List.of(routed(destination, "k", json(0))))))
        .containsExactly(Outcome.PUBLISHED);
    sink.close(Duration.ofSeconds(10));

    List<RoutedEvent> batch =
        List.of(routed(destination, "k", json(1)), routed(destination, "j", json(2)));
    List<Verdict> verdicts = publish(sink, batch);

    assertThat(verdicts).hasSize(2).noneMatch(Verdict::isPublished);
    assertThat(verdicts).allSatisfy(v -> assertThat(v.error()).isNotBlank());
  }

  @Test
  final void aPublishedEventArrivesWithItsIdentityHeadersAndExactBody() throws Exception {
    String destination = newDestination();
    Sink sink = sink("");
    byte[] binary = {0, 1, (byte) 0xfe, (byte) 0xff, '\n', 0x7f};
    List<RoutedEvent> batch =
        List.of(
            new RoutedEvent(
                event(
                    "order",
                    "o-ü-1",
                    "OrderPlaced",
                    bytes("{\"total\":\"12,50 €\"}"),
                    PayloadFormat.JSON,
                    Map.of("trace-id", "t-1", "tenant", "acmé")),
                destination,
                Map.of("x-outbox-extra", "e-1")),
            new RoutedEvent(
                event("invoice", "i-2", "InvoiceSent", bytes("plain ü"), PayloadFormat.TEXT, null),
                destination),
            new RoutedEvent(
                event("blob", "b-3", "BlobStored", binary, PayloadFormat.BINARY, Map.of("n", "3")),
                destination,
                Map.of("x-outbox-extra", "e-3")));

    assertAllPublished(publish(sink, batch), 3);

    List<Delivered> delivered = read(destination, 3, READ_TIMEOUT);
    assertThat(delivered).hasSize(3);
    Map<String, Delivered> byEventId = new HashMap<>();
    delivered.forEach(d -> byEventId.put(d.eventId(), d));
    for (RoutedEvent routed : batch) {
      OutboxEvent sent = routed.event();
      Delivered got = byEventId.get(sent.eventId().toString());
      assertThat(got).as("message of %s", sent).isNotNull();
      assertThat(got.eventType()).isEqualTo(sent.eventType());
      assertThat(got.key()).as("broker key").isIn(null, sent.aggregateId());
      assertThat(got.contentType()).isIn(null, sent.payloadFormat().contentType());
      assertThat(got.body()).as("body of %s", sent).isEqualTo(sent.payload());
      Map<String, String> expected = new LinkedHashMap<>();
      expected.put("event-id", sent.eventId().toString());
      expected.put("event-type", sent.eventType());
      expected.put("aggregate-type", sent.aggregateType());
      expected.put("aggregate-id", sent.aggregateId());
      expected.putAll(routed.extraHeaders());
      expected.putAll(sent.headers());
      Map<String, String> headers = new LinkedHashMap<>(got.headers());
      String createdAt = headers.remove("created-at");
      assertThat(createdAt).as("created-at of %s", sent).isNotNull();
      assertThatCode(() -> OffsetDateTime.parse(createdAt))
          .as("created-at '%s' is ISO-8601", createdAt)
          .doesNotThrowAnyException();
      assertThat(OffsetDateTime.parse(createdAt).toInstant()).isEqualTo(sent.createdAt());
      assertThat(headers).as("headers of %s", sent).containsExactlyInAnyOrderEntriesOf(expected);
    }
  }

  @Test
  final void eachKeysEventsArriveInOrderWithinAndAcrossConsecutiveBatches() throws Exception {
    String destination = newDestination();
    Sink sink = sink("");
    List<RoutedEvent> all = new ArrayList<>();
    for (int b = 0; b < 3; b++) {
      List<RoutedEvent> batch = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        batch.add(routed(destination, "key-" + i % 6, json(b * 60 + i)));
      }
      assertAllPublished(publish(sink, batch), batch.size());
      all.addAll(batch);
    }

    assertArrivedOnceInPerKeyOrder(all, read(destination, all.size(), READ_TIMEOUT));
  }

  @Test
  final void twoLanesPublishingAtOnceKeepEachKeysOrder() throws Exception {
    String destination = newDestination();
    Sink sink = sink("");
    List<List<RoutedEvent>> lanes = List.of(new ArrayList<>(), new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<List<Outcome>>> runs = new ArrayList<>();
      for (int lane = 0; lane < 2; lane++) {
        List<RoutedEvent> mine = lanes.get(lane);
        for (int i = 0; i < 500; i++) {
          mine.add(routed(destination, "lane-" + lane + "-key-" + i % 7, json(i)));
        }
        runs.add(
            pool.submit(
                () -> {
                  List<Outcome> outcomes = new ArrayList<>();
                  for (int b = 0; b < 5; b++) { // one batch in flight per lane, as a lane does
                    outcomes.addAll(outcomes(publish(sink, mine.subList(b * 100, b * 100 + 100))));
                  }
                  return outcomes;
                }));
      }
      for (Future<List<Outcome>> run : runs) {
        assertThat(run.get(ANSWER_TIMEOUT.toSeconds() * 2, TimeUnit.SECONDS))
            .hasSize(500)
            .containsOnly(Outcome.PUBLISHED);
      }
    } finally {
      pool.shutdownNow();
    }

    List<RoutedEvent> all = new ArrayList<>(lanes.get(0));
    all.addAll(lanes.get(1));
    assertArrivedOnceInPerKeyOrder(all, read(destination, all.size(), READ_TIMEOUT));
  }

  /**
   * per-key order (docs/design.md) where brokers answer each message on its own: the broker refuses
   * an event of a key (full) while later events of that key are already in flight, and takes one of
   * those once there is room again. The later event must not be published ahead of the refused one:
   * each key's verdicts, in batch order, are published (or permanent) up to its first refusal and
   * never published after it.
   */
  @Test
  final void aRefusedEventHoldsBackTheLaterEventsOfItsKeyAlreadyInFlight() throws Exception {
    Refusing refusing = refusingDestination();
    Sink sink = sink(refusing.sinkSettings());
    int refused = 0;
    int published = 0;
    List<String> violations = new ArrayList<>();
    Map<Integer, String> behindARefusal = new HashMap<>(); // event number -> why
    for (int b = 0; b < 4; b++) { // one batch in flight at a time, as a lane does
      List<RoutedEvent> batch = new ArrayList<>();
      for (int i = 0; i < 500; i++) {
        batch.add(routed(refusing.destination(), "key-" + i % 20, json(b * 500 + i)));
      }
      List<Verdict> verdicts = publish(sink, batch);
      Map<String, Integer> firstRefusal = new HashMap<>();
      for (int i = 0; i < batch.size(); i++) {
        String key = batch.get(i).event().aggregateId();
        Outcome outcome = verdicts.get(i).outcome();
        Integer earlier = firstRefusal.get(key);
        String behind =
            earlier == null
                ? null
                : "batch "
                    + b
                    + ", "
                    + key
                    + ": event #"
                    + i
                    + " {what} although #"
                    + earlier
                    + " was refused ("
                    + verdicts.get(earlier).error()
                    + ")";
        if (behind != null) {
          behindARefusal.put(b * 500 + i, behind.replace("{what}", "reached the broker"));
        }
        if (outcome == Outcome.RETRYABLE || outcome == Outcome.SINK_UNAVAILABLE) {
          refused++;
          firstRefusal.putIfAbsent(key, i);
        } else if (outcome == Outcome.PUBLISHED) {
          published++;
          if (behind != null) {
            violations.add(behind.replace("{what}", "published"));
          }
        }
      }
    }
    int delivered = -1;
    if (refusing.keepsWhatItTook()) {
      // What the broker took, not only what the sink said: a later event the broker took while an
      // earlier one of its key was refused reaches consumers first, whatever its verdict.
      sink.close(Duration.ofSeconds(10)); // whatever the sink still had in flight is in, or failed
      List<Delivered> all = readToEnd(refusing.destination());
      delivered = all.size();
      for (Delivered d : all) {
        String why = behindARefusal.get(number(d.body()));
        if (why != null) {
          violations.add(why);
        }
      }
    }
    System.out.printf(
        "%s: %d published, %d refused or held back, %d read back, %d out of key order%n",
        getClass().getSimpleName(), published, refused, delivered, violations.size());
    assertThat(refused).as("events refused: the broker must have been full").isPositive();
    assertThat(published)
        .as("events published: more than the destination holds, so it took some after refusing")
        .isGreaterThan(refusing.capacity());
    assertThat(violations)
        .as("events published, or taken by the broker, behind a refused event of their key")
        .isEmpty();
  }

  @Test
  final void anInvalidDestinationIsPermanentForItsEventOnly() throws Exception {
    String destination = newDestination();
    String invalid = invalidDestination();
    Sink sink = sink("");
    List<RoutedEvent> batch =
        List.of(
            routed(destination, "a", json(1)),
            routed(invalid, "b", json(2)),
            routed(destination, "c", json(3)),
            routed(destination, "a", json(4)));

    List<Verdict> verdicts = publish(sink, batch);

    assertThat(outcomes(verdicts))
        .containsExactly(
            Outcome.PUBLISHED, Outcome.PERMANENT, Outcome.PUBLISHED, Outcome.PUBLISHED);
    assertThat(verdicts.get(1).error()).isNotBlank();
    assertArrivedOnceInPerKeyOrder(
        List.of(batch.get(0), batch.get(2), batch.get(3)), read(destination, 3, READ_TIMEOUT));
  }

  @Test
  final void anUnreachableBrokerAnswersSinkUnavailableInBoundedTimeAndFailsTheProbe()
      throws Exception {
    Sink sink = register(newUnreachableSink());
    List<RoutedEvent> batch =
        List.of(
            routed("outbox.contract.a", "a", json(1)),
            routed("outbox.contract.b", "b", json(2)),
            routed("outbox.contract.a", "c", json(3)));
    long start = System.nanoTime();

    List<Verdict> verdicts =
        sink.publish(batch)
            .toCompletableFuture()
            .get(unavailableWithin().toMillis(), TimeUnit.MILLISECONDS);

    assertThat(outcomes(verdicts)).hasSize(3).containsOnly(Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts).allSatisfy(v -> assertThat(v.error()).isNotBlank());
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(unavailableWithin());
    start = System.nanoTime();
    assertThat(sink.probe(Duration.ofSeconds(1))).isFalse();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(unavailableWithin());
  }

  @Test
  final void theProbeIsTrueAgainstTheLiveBroker() throws Exception {
    assertThat(sink("").probe(Duration.ofSeconds(10))).isTrue();
  }

  @Test
  final void closeAfterAPublishStillDeliversWhatItAcknowledged() throws Exception {
    String destination = newDestination();
    Sink sink = sink(slowFlushSettings());
    assertThat(outcomes(publish(sink, List.of(routed(destination, "warm-up", json(0))))))
        .containsExactly(Outcome.PUBLISHED);
    List<RoutedEvent> batch = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      batch.add(routed(destination, "k-" + i % 5, json(i)));
    }
    CompletableFuture<List<Verdict>> stage = sink.publish(batch).toCompletableFuture();

    sink.close(Duration.ofSeconds(10));

    // Flushing within a timeout the live broker easily meets: everything is acknowledged.
    assertAllPublished(stage.get(10, TimeUnit.SECONDS), 50);
    List<Delivered> delivered = new ArrayList<>(read(destination, 51, READ_TIMEOUT));
    delivered.removeIf(d -> "warm-up".equals(d.headers().get("aggregate-id")));
    assertArrivedOnceInPerKeyOrder(batch, delivered);
  }

  @Test
  final void aLargeBatchIsPublishedWhole() throws Exception {
    String destination = newDestination();
    Sink sink = sink("");
    List<RoutedEvent> batch = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      batch.add(routed(destination, "key-" + i % 37, json(i)));
    }

    List<Verdict> verdicts = publish(sink, batch);

    assertAllPublished(verdicts, 2_000);
    assertArrivedOnceInPerKeyOrder(batch, read(destination, batch.size(), READ_TIMEOUT));
  }

  // ---- helpers ----

  private Sink sink(String extraSettings) throws Exception {
    return register(newSink(extraSettings));
  }

  private Sink register(Sink sink) {
    sinks.add(sink);
    return sink;
  }

  private static List<Verdict> publish(Sink sink, List<RoutedEvent> batch) throws Exception {
    CompletableFuture<List<Verdict>> stage = sink.publish(batch).toCompletableFuture();
    List<Verdict> verdicts = stage.get(ANSWER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(verdicts).as("one verdict per event").hasSize(batch.size()).doesNotContainNull();
    return verdicts;
  }

  /** All {@code size} verdicts are published; a failure names the distinct errors given. */
  private static void assertAllPublished(List<Verdict> verdicts, int size) {
    List<String> errors =
        verdicts.stream().map(Verdict::error).filter(Objects::nonNull).distinct().limit(5).toList();
    assertThat(outcomes(verdicts))
        .as("outcomes (distinct errors: %s)", errors)
        .hasSize(size)
        .containsOnly(Outcome.PUBLISHED);
  }

  private static List<Outcome> outcomes(List<Verdict> verdicts) {
    return verdicts.stream().map(Verdict::outcome).toList();
  }

  /**
   * Every event of {@code sent} arrived exactly once, nothing else did, and each key's events
   * arrived in the order they were sent ({@code sent} lists each key's events in that order).
   */
  private static void assertArrivedOnceInPerKeyOrder(
      List<RoutedEvent> sent, List<Delivered> delivered) {
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

  private static RoutedEvent routed(String destination, String aggregateId, byte[] payload) {
    return new RoutedEvent(
        event("order", aggregateId, "OrderCreated", payload, PayloadFormat.JSON, null),
        destination);
  }

  private static OutboxEvent event(
      String aggregateType,
      String aggregateId,
      String eventType,
      byte[] payload,
      PayloadFormat format,
      Map<String, String> headers) {
    return new OutboxEvent(
        IDS.incrementAndGet(),
        UUID.randomUUID(),
        aggregateType,
        aggregateId,
        eventType,
        null,
        payload,
        format,
        headers,
        CREATED_AT,
        0);
  }

  private static byte[] json(int n) {
    return bytes("{\"n\":" + n + "}");
  }

  /** The number {@link #json} wrote into {@code body}. */
  private static int number(byte[] body) {
    String s = new String(body, StandardCharsets.UTF_8);
    return Integer.parseInt(s.substring(s.indexOf(':') + 1, s.indexOf('}')));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
