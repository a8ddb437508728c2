package io.outbox.relay.it;

import static io.outbox.relay.it.RabbitFixture.header;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.GetResponse;
import io.outbox.testkit.RelayProcess;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code kill -9} of a relay process publishing to RabbitMQ in the middle of a backlog: nothing
 * committed is lost, a re-sent event is the same message again, and no key's first deliveries go
 * backwards.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RabbitCrashRecoveryIT {
  private static final int EVENTS = 10_000;
  private static final int KEYS = 100;

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RabbitFixture rx;

  @AfterEach
  void tearDown() throws Exception {
    relays.killAll();
    if (rx != null) {
      rx.close();
    }
  }

  @Test
  void killDashNineMidBacklogLosesNothing() throws Exception {
    long started = System.nanoTime();
    rx = new RabbitFixture("rabbit_crash_recovery");
    RelayFixture fx = rx.fx;
    String queue = rx.bindQueue(rx.exchange("order"), "#");
    List<UUID> committed = OutboxLoad.backlog(fx, EVENTS, KEYS);
    String config = rx.config("lanes = 4, batch-size = 500");

    RelayProcess crashing = relays.start("crashing", config);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> published(fx) >= EVENTS * 3 / 10);
    crashing.kill9();
    long atKill = published(fx);
    assertThat(atKill).as("killed in the middle of the backlog").isLessThan(EVENTS);
    assertThat(crashing.log())
        .as("SIGKILL: no shutdown hook ran")
        .contains("pipeline it: active")
        .doesNotContain("outbox-relay stopping");

    RelayProcess finishing = relays.start("finishing", config);
    await().atMost(Duration.ofSeconds(90)).until(() -> fx.unpublished() == 0);
    assertThat(finishing.terminate(Duration.ofSeconds(30))).contains(0);

    List<GetResponse> received = rx.read(queue, EVENTS, Duration.ofSeconds(30));
    // Give a late duplicate, if any, the chance to show up.
    await().pollDelay(Duration.ofSeconds(1)).until(() -> true);
    received.addAll(rx.drain(queue));

    Map<UUID, GetResponse> first = new LinkedHashMap<>();
    List<String> differingDuplicates = new ArrayList<>();
    for (GetResponse r : received) {
      UUID id = UUID.fromString(r.getProps().getMessageId());
      GetResponse earlier = first.putIfAbsent(id, r);
      if (earlier != null && !sameMessage(earlier, r)) {
        differingDuplicates.add(id.toString());
      }
    }
    int duplicates = received.size() - first.size();
    assertThat(first.keySet())
        .as("every committed event, at least once")
        .containsExactlyInAnyOrderElementsOf(committed);
    assertThat(differingDuplicates).as("a re-sent event is the same message").isEmpty();
    assertFirstDeliveriesInKeyOrder(received, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts <> 0")).isZero();
    System.out.printf(
        "RabbitCrashRecoveryIT: killed at %d published; %d messages for %d events, %d duplicate(s),"
            + " %d s%n",
        atKill,
        received.size(),
        EVENTS,
        duplicates,
        TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));
  }

  /**
   * The first delivery of each event, per key ({@code aggregate-id} header), comes in row-id order;
   * later deliveries of an event already seen (re-sends after the crash) are not counted.
   */
  static void assertFirstDeliveriesInKeyOrder(List<GetResponse> messages, Map<UUID, Long> rowIds) {
    Map<String, Long> lastByKey = new HashMap<>();
    Set<UUID> seen = new HashSet<>();
    List<String> violations = new ArrayList<>();
    for (GetResponse r : messages) {
      UUID id = UUID.fromString(r.getProps().getMessageId());
      if (!seen.add(id)) {
        continue;
      }
      String key = header(r, "aggregate-id");
      long rowId = rowIds.get(id);
      Long previous = lastByKey.put(key, rowId);
      if (previous != null && previous > rowId) {
        violations.add("key " + key + ": row " + rowId + " after row " + previous);
      }
    }
    assertThat(violations).as("per-key order of first deliveries").isEmpty();
  }

  /** Same routing, body, message properties and headers (the redelivered flag aside). */
  private static boolean sameMessage(GetResponse a, GetResponse b) {
    return a.getEnvelope().getExchange().equals(b.getEnvelope().getExchange())
        && a.getEnvelope().getRoutingKey().equals(b.getEnvelope().getRoutingKey())
        && new String(a.getBody(), StandardCharsets.UTF_8)
            .equals(new String(b.getBody(), StandardCharsets.UTF_8))
        && Objects.equals(a.getProps().getMessageId(), b.getProps().getMessageId())
        && Objects.equals(a.getProps().getType(), b.getProps().getType())
        && Objects.equals(a.getProps().getContentType(), b.getProps().getContentType())
        && Objects.equals(a.getProps().getDeliveryMode(), b.getProps().getDeliveryMode())
        && Objects.equals(a.getProps().getTimestamp(), b.getProps().getTimestamp())
        && headers(a).equals(headers(b));
  }

  private static Map<String, String> headers(GetResponse r) {
    Map<String, String> out = new HashMap<>();
    if (r.getProps().getHeaders() != null) {
      r.getProps().getHeaders().forEach((k, v) -> out.put(k, String.valueOf(v)));
    }
    return out;
  }

  private static long published(RelayFixture fx) throws Exception {
    return fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL");
  }
}
