package io.outbox.testkit;

import static io.outbox.testkit.NumberedEvents.batch;
import static io.outbox.testkit.NumberedEvents.bytes;
import static io.outbox.testkit.NumberedEvents.json;
import static io.outbox.testkit.NumberedEvents.routed;
import static io.outbox.testkit.SinkAssertions.assertAllPublished;
import static io.outbox.testkit.SinkAssertions.assertArrivedAsSent;
import static io.outbox.testkit.SinkAssertions.assertArrivedOnceInPerKeyOrder;
import static io.outbox.testkit.SinkAssertions.outcomes;
import static io.outbox.testkit.SinkAssertions.publish;
import static org.assertj.core.api.Assertions.assertThat;

import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import io.cloudevents.jackson.JsonFormat;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.relay.spi.support.CloudEventsAttributes;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What docs/design.md's failure classes and per-key order require of every sink, as one suite each
 * sink's integration tests extend with a small subclass that says how to reach its real broker (the
 * tests are {@code final}: a sink passes them as they are, or the difference is a finding). The
 * events it sends are {@link NumberedEvents}, its checks {@link SinkAssertions} and {@link
 * RefusalOrder}.
 */
public abstract class SinkContract {

  /** How long a test waits for a publish to answer when the broker is up. */
  protected static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(60);

  /** How long a test waits for published messages to reach its consumer. */
  protected static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

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
                TestEvents.event(
                    "order",
                    "o-ü-1",
                    "OrderPlaced",
                    bytes("{\"total\":\"12,50 €\"}"),
                    PayloadFormat.JSON,
                    // W3C trace context as the application wrote it into the row's headers:
                    // consumers continue the trace from these two headers on every broker.
                    Map.of(
                        "traceparent",
                        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                        "tracestate",
                        "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
                        "tenant",
                        "acmé")),
                destination,
                Map.of("x-outbox-extra", "e-1")),
            new RoutedEvent(
                TestEvents.event(
                    "invoice", "i-2", "InvoiceSent", bytes("plain ü"), PayloadFormat.TEXT, null),
                destination),
            new RoutedEvent(
                TestEvents.event(
                    "blob", "b-3", "BlobStored", binary, PayloadFormat.BINARY, Map.of("n", "3")),
                destination,
                Map.of("x-outbox-extra", "e-3")));

    assertAllPublished(publish(sink, batch), 3);

    List<Delivered> delivered = read(destination, 3, READ_TIMEOUT);
    assertThat(delivered).hasSize(3);
    assertArrivedAsSent(batch, delivered);
  }

  /**
   * The prefix under which the broker's CloudEvents protocol binding carries the attributes as
   * headers in binary content mode, as the binding specifies it (Kafka's {@code ce_} unless
   * overridden); the sink must declare the same.
   */
  protected String cloudEventsBindingPrefix() {
    return "ce_";
  }

  /**
   * What {@code cloudevents.mode} makes of an event reaches a consumer whole: in binary mode the
   * attributes as headers under the broker binding's prefix and the payload as the body; in
   * structured mode the JSON event format as the body with its content type, read back by the
   * CloudEvents SDK.
   */
  @Test
  final void aCloudEventArrivesInBinaryAndInStructuredContentMode() throws Exception {
    String destination = newDestination();
    Sink sink = sink("");
    String prefix = sink.cloudEventsHeaderPrefix();
    assertThat(prefix).as("the binding's header prefix").isEqualTo(cloudEventsBindingPrefix());
    OutboxEvent binary =
        TestEvents.event(
            "order",
            "o-1",
            "OrderPlaced",
            bytes("{\"n\":1}"),
            PayloadFormat.JSON,
            Map.of("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    OutboxEvent plain =
        TestEvents.event(
            "order", "o-2", "OrderPlaced", bytes("{\"n\":2}"), PayloadFormat.JSON, null);
    CloudEvent cloudEvent =
        CloudEventBuilder.v1()
            .withId(plain.eventId().toString())
            .withSource(URI.create("/shop/order"))
            .withType(plain.eventType())
            .withSubject(plain.aggregateId())
            .withDataContentType(plain.payloadFormat().contentType())
            .withData(plain.payload())
            .build();
    OutboxEvent structured =
        plain.withBody(new JsonFormat().serialize(cloudEvent), PayloadFormat.CLOUDEVENTS_JSON);
    List<RoutedEvent> batch =
        List.of(
            new RoutedEvent(
                binary,
                destination,
                CloudEventsAttributes.binaryHeaders(binary, "/shop/order", prefix)),
            new RoutedEvent(
                structured,
                destination,
                Map.of("content-type", PayloadFormat.CLOUDEVENTS_JSON.contentType())));

    assertAllPublished(publish(sink, batch), 2);

    Map<String, Delivered> byId = new HashMap<>();
    read(destination, 2, READ_TIMEOUT).forEach(d -> byId.put(d.eventId(), d));
    Delivered gotBinary = byId.get(binary.eventId().toString());
    Map<String, String> attributes = new HashMap<>();
    gotBinary
        .headers()
        .forEach(
            (name, value) -> {
              if (name.startsWith(prefix)) {
                attributes.put(name.substring(prefix.length()), value);
              }
            });
    assertThat(attributes)
        .containsEntry("specversion", "1.0")
        .containsEntry("id", binary.eventId().toString())
        .containsEntry("source", "/shop/order")
        .containsEntry("type", "OrderPlaced")
        .containsEntry("subject", "o-1")
        .containsEntry("time", binary.createdAt().toString());
    assertThat(contentType(gotBinary)).isEqualTo("application/json");
    assertThat(gotBinary.body()).isEqualTo(binary.payload());
    assertThat(gotBinary.headers())
        .containsEntry("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");

    Delivered gotStructured = byId.get(plain.eventId().toString());
    assertThat(contentType(gotStructured)).isEqualTo(PayloadFormat.CLOUDEVENTS_JSON.contentType());
    CloudEvent read = new JsonFormat().deserialize(gotStructured.body());
    assertThat(read.getId()).isEqualTo(plain.eventId().toString());
    assertThat(read.getType()).isEqualTo("OrderPlaced");
    assertThat(read.getData().toBytes()).isEqualTo(plain.payload());
  }

  /** The message's content type: the broker's own property, else the content-type header. */
  private static String contentType(Delivered delivered) {
    return delivered.contentType() != null
        ? delivered.contentType()
        : delivered.headers().get("content-type");
  }

  @Test
  final void eachKeysEventsArriveInOrderWithinAndAcrossConsecutiveBatches() throws Exception {
    String destination = newDestination();
    Sink sink = sink("");
    List<RoutedEvent> all = new ArrayList<>();
    for (int b = 0; b < 3; b++) {
      List<RoutedEvent> batch = batch(destination, "key-", 6, b * 60, 60);
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
        mine.addAll(batch(destination, "lane-" + lane + "-key-", 7, 0, 500));
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
    RefusalOrder order = new RefusalOrder();
    // One batch in flight at a time, as a lane does; four, and more (at most twelve) until the
    // broker both refused some and took more than it holds: a broker that refuses by timing
    // (Redis kept busy by a script) can refuse all of four batches on a loaded machine.
    for (int b = 0; b < 4 || (b < 12 && !order.refusedAndTookMore(refusing.capacity())); b++) {
      List<RoutedEvent> batch = batch(refusing.destination(), "key-", 20, b * 500, 500);
      order.judge("batch " + b, batch, publish(sink, batch));
    }
    if (refusing.keepsWhatItTook()) {
      // What the broker took, not only what the sink said: a later event the broker took while an
      // earlier one of its key was refused reaches consumers first, whatever its verdict.
      sink.close(Duration.ofSeconds(10)); // whatever the sink still had in flight is in, or failed
      order.taken(readToEnd(refusing.destination()));
    }
    order.assertHeldBack(getClass().getSimpleName(), refusing.capacity());
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
    List<RoutedEvent> batch = batch(destination, "k-", 5, 0, 50);
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
    List<RoutedEvent> batch = batch(destination, "key-", 37, 0, 2_000);

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
}
