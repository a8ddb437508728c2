package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.typesafe.config.ConfigFactory;
import io.outbox.client.OutboxMessage;
import io.outbox.relay.Relay;
import io.outbox.relay.config.RelayConfigLoader;
import io.outbox.relay.pipeline.Pipeline;
import io.outbox.testkit.Delivered;
import io.outbox.testkit.PrivateServer;
import io.outbox.testkit.RelayProcess;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The end-to-end delivery scenarios of docs/design.md that every sink added after Kafka and
 * RabbitMQ passes (the tests are {@code final}; a subclass only says how to reach its broker):
 * {@code kill -9} of a relay process mid-backlog loses nothing and keeps each key's first
 * deliveries in order; the broker stopped and started again pauses the pipeline and resumes it
 * without a counted attempt or a dead letter; a poison event is dead-lettered while the other
 * events flow.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
abstract class SinkDeliveryScenarios {

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private Relay relay;

  /** The shared server of {@code scripts/services.sh}. */
  protected abstract String sharedServer();

  /** A private server of this test, which it may stop and start again. */
  protected abstract PrivateServer startPrivateServer();

  /** The URL of {@code server} as the sink's settings take it. */
  protected abstract String url(PrivateServer server);

  /** The inside of {@code sink { }} for the broker at {@code url}, with short test timeouts. */
  protected abstract String sink(String url);

  /**
   * Prepares the broker at {@code url} for events routed to {@code <prefix>.<aggregate type>} (e.g.
   * a stream binding them); what it makes is removed by {@link #cleanUp}.
   */
  protected abstract void prepare(String url, String prefix) throws Exception;

  /**
   * Every message that reached {@code <prefix>.order}, in arrival order, once there are {@code
   * expected}.
   */
  protected abstract List<Delivered> read(String url, String prefix, int expected) throws Exception;

  /**
   * A destination for {@code <prefix>}'s poison event that the broker at {@code url} can never
   * accept (the row's {@code destination} column).
   */
  protected abstract String poisonDestination(String url, String prefix) throws Exception;

  /** Removes what {@link #prepare} and {@link #poisonDestination} made. */
  protected abstract void cleanUp() throws Exception;

  /** Closed after the test, in reverse order of registration. */
  protected final <T extends AutoCloseable> T closeLater(T closeable) {
    closeables.add(0, closeable);
    return closeable;
  }

  @AfterEach
  final void tearDown() throws Exception {
    relays.killAll();
    if (relay != null) {
      relay.close(Duration.ofSeconds(10));
    }
    cleanUp();
    for (AutoCloseable c : closeables) {
      c.close();
    }
  }

  @Test
  final void killDashNineMidBacklogLosesNothing(TestInfo info) throws Exception {
    int events = 5_000;
    RelayFixture fx = fixture(info);
    prepare(sharedServer(), fx.topicPrefix);
    List<UUID> committed = OutboxLoad.backlog(fx, events, 50);
    String config =
        fx.configWithSink(fx.db.url(), sink(sharedServer()), "lanes = 4, batch-size = 250");

    RelayProcess crashing = relays.start("crashing", config);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> fx.published() >= events * 3 / 10);
    crashing.kill9();
    long atKill = fx.published();
    assertThat(atKill).as("killed in the middle of the backlog").isLessThan(events);
    assertThat(crashing.log()).doesNotContain("outbox-relay stopping");

    RelayProcess finishing = relays.start("finishing", config);
    await().atMost(Duration.ofSeconds(90)).until(() -> fx.unpublished() == 0);
    assertThat(finishing.terminate(Duration.ofSeconds(30))).contains(0);

    List<Delivered> received = read(sharedServer(), fx.topicPrefix, events);
    assertDelivered(fx, received, Set.copyOf(committed));
    System.out.printf(
        "%s kill -9: killed at %d published; %d messages for %d events%n",
        getClass().getSimpleName(), atKill, received.size(), events);
  }

  @Test
  final void aBrokerStoppedAndStartedAgainPausesThePipelineWithoutDeadLetters(TestInfo info)
      throws Exception {
    PrivateServer server = closeLater(startPrivateServer());
    RelayFixture fx = fixture(info);
    prepare(url(server), fx.topicPrefix);
    relay = start(fx, sink(url(server)), "lanes = 4, batch-size = 100, retry.max-attempts = 2");
    Pipeline pipeline = relay.pipelines().get(0);
    InvariantWatch watch = closeLater(new InvariantWatch(fx, pipeline));
    Set<UUID> committed;
    try (OutboxLoad load = OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(10))) {
      await().atMost(Duration.ofSeconds(30)).until(() -> fx.published() >= 300);
      server.stop();
      int before = load.committedCount();
      await().atMost(Duration.ofSeconds(30)).until(() -> !pipeline.sinkAvailable());
      // The application keeps writing while the broker is down.
      await().atMost(Duration.ofSeconds(30)).until(() -> load.committedCount() >= before + 300);
      assertThat(fx.unpublished()).as("events written during the outage wait").isPositive();
      server.restart();
      int afterRestart = load.committedCount();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> load.committedCount() >= afterRestart + 200);
      committed = load.stop();
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);

    assertDelivered(fx, read(url(server), fx.topicPrefix, committed.size()), committed);
    watch.assertClean();
    assertThat(watch.sinkWentDown()).as("the pipeline saw the outage").isTrue();
    assertThat(pipeline.sinkAvailable()).isTrue();
    assertThat(pipeline.stats().deadLettered()).isZero();
  }

  @Test
  final void aPoisonEventIsDeadLetteredWhileTheRestFlows(TestInfo info) throws Exception {
    RelayFixture fx = fixture(info);
    prepare(sharedServer(), fx.topicPrefix);
    String poisonDestination = poisonDestination(sharedServer(), fx.topicPrefix);
    relay = start(fx, sink(sharedServer()), "");
    List<UUID> healthy = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      healthy.addAll(fx.commit(List.of(RelayFixture.event("healthy-" + (i % 3), i))));
    }
    UUID poison =
        fx.commit(
                List.of(
                    OutboxMessage.builder()
                        .aggregate("order", "healthy-0")
                        .eventType("Poison")
                        .destination(poisonDestination)
                        .payload("{}")
                        .build()))
            .get(0);
    for (int i = 10; i < 30; i++) {
      healthy.addAll(fx.commit(List.of(RelayFixture.event("healthy-" + (i % 3), i))));
    }

    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> fx.count("SELECT count(*) FROM outbox_dead_letter") == 1);
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    assertDelivered(fx, read(sharedServer(), fx.topicPrefix, healthy.size()), Set.copyOf(healthy));
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT event_id, reason, last_error FROM outbox_dead_letter")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getObject("event_id", UUID.class)).isEqualTo(poison);
      assertThat(rs.getString("reason")).isEqualTo("permanent");
      assertThat(rs.getString("last_error")).contains(poisonDestination);
    }
  }

  private RelayFixture fixture(TestInfo info) {
    String name =
        getClass().getSimpleName().replace("DeliveryIT", "").toLowerCase()
            + "_"
            + info.getTestMethod().orElseThrow().getName().toLowerCase().substring(0, 12);
    return closeLater(new RelayFixture(name));
  }

  private static Relay start(RelayFixture fx, String sink, String extra) {
    return Relay.start(
        RelayConfigLoader.standard()
            .load(ConfigFactory.parseString(fx.configWithSink(fx.db.url(), sink, extra)), "test")
            .settings());
  }

  /**
   * Every committed event arrived, nothing else did, every copy of an event carries its event id,
   * each key's first deliveries follow row-id order, and nothing was dead-lettered or retried.
   */
  private static void assertDelivered(
      RelayFixture fx, List<Delivered> received, Set<UUID> committed) throws Exception {
    Map<UUID, Long> rowIds = fx.rowIds();
    Set<UUID> seen = new HashSet<>();
    Map<String, Long> lastByKey = new HashMap<>();
    List<String> violations = new ArrayList<>();
    for (Delivered d : received) {
      UUID id = UUID.fromString(d.eventId());
      if (!seen.add(id)) {
        continue;
      }
      String key = d.headers().get("aggregate-id");
      Long previous = lastByKey.put(key, rowIds.get(id));
      if (previous != null && previous > rowIds.get(id)) {
        violations.add("key " + key + ": row " + rowIds.get(id) + " after row " + previous);
      }
    }
    assertThat(seen)
        .as("every committed event, at least once, and nothing else")
        .isEqualTo(committed);
    assertThat(violations).as("per-key order of first deliveries").isEmpty();
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts > 0")).isZero();
    System.out.printf(
        "%d messages for %d events (%d duplicates)%n",
        received.size(), seen.size(), received.size() - seen.size());
  }
}
