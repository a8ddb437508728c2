package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.ConfigFactory;
import io.outbox.relay.Relay;
import io.outbox.relay.config.RelayConfigLoader;
import io.outbox.testkit.FaultProxy;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.Services;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * The CDC source's database cut off without a reset: the relay's sessions and the engine's
 * replication connection go through a {@link FaultProxy} that drops every byte both ways for 20 s
 * while the application keeps committing. The relay must notice within socket-timeout (the lanes'
 * settlements and the engine's heartbeat query fail) instead of waiting on silent sockets, and once
 * the network is back stream again by itself: nothing lost, first deliveries in per-key order.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CdcCutOffIT {
  private static final Duration SOCKET_TIMEOUT = Duration.ofSeconds(4);
  private static final Duration CUT_OFF = Duration.ofSeconds(20);

  /** What the relay logs when a lane's settlement or the stream fails. */
  private static final java.util.List<String> FAILURES =
      java.util.List.of(": database error", "change stream");

  private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
  private final Logger streamLog = (Logger) LoggerFactory.getLogger("io.outbox");
  private RelayFixture fx;
  private FaultProxy proxy;
  private Relay relay;
  private OutboxLoad stream;

  @AfterEach
  void tearDown() {
    if (stream != null) {
      stream.close();
    }
    if (relay != null) {
      relay.close(Duration.ofSeconds(10));
    }
    if (proxy != null) {
      proxy.close();
    }
    if (fx != null) {
      fx.close();
    }
    streamLog.detachAppender(logged);
  }

  @Test
  void theStreamNoticesABlackHoledDatabaseWithinTheSocketTimeoutAndStreamsAgainAfterIt()
      throws Exception {
    logged.start();
    streamLog.addAppender(logged);
    fx = new RelayFixture("cdc_cut_off");
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    proxy = FaultProxy.start(Services.pgHost(), Services.pgPort());
    String viaProxy = "jdbc:postgresql://" + proxy.address() + "/" + fx.db.name();
    String hocon =
        fx.config(
            "lanes = 4\n"
                + fx.cdc(
                    "socket-timeout = "
                        + SOCKET_TIMEOUT.toSeconds()
                        + "s, connection-timeout = 3s"),
            Services.kafkaBootstrap(),
            viaProxy);
    relay =
        Relay.start(
            RelayConfigLoader.standard().load(ConfigFactory.parseString(hocon), "test").settings());
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.slotConfirmedLsn() >= 0);
    stream = OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(20));
    await().atMost(Duration.ofSeconds(30)).until(() -> published() >= 500);

    Instant cutAt = Instant.now();
    proxy.set(FaultProxy.Mode.BLACKHOLE);
    await()
        .atMost(SOCKET_TIMEOUT.plusSeconds(10))
        .until(() -> firstFailureAfter(cutAt).isPresent());
    Duration detected = Duration.between(cutAt, firstFailureAfter(cutAt).orElseThrow());
    await()
        .pollDelay(CUT_OFF.minus(Duration.between(cutAt, Instant.now())))
        .atMost(CUT_OFF.plusSeconds(5))
        .until(() -> true);

    Instant healedAt = Instant.now();
    long committedAtHeal = stream.committedCount();
    proxy.set(FaultProxy.Mode.PASS);
    await().atMost(Duration.ofSeconds(60)).until(() -> published() >= committedAtHeal);
    Duration resumed = Duration.between(healedAt, Instant.now());
    Set<UUID> committed = stream.stop();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);

    assertThat(detected)
        .as("from the cut-off to the first failure the relay reports")
        .isLessThan(SOCKET_TIMEOUT.plusSeconds(6));
    Deliveries deliveries = Deliveries.readAll(fx.topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    RelayFixture.assertFirstDeliveriesInKeyOrder(deliveries.records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    System.out.printf(
        "CdcCutOffIT: the stream failed %d ms after the cut-off; caught up %d ms after the"
            + " network came back; %d events, %d duplicate(s)%n",
        detected.toMillis(), resumed.toMillis(), committed.size(), deliveries.duplicates());
  }

  private Optional<Instant> firstFailureAfter(Instant t) {
    return java.util.List.copyOf(logged.list).stream()
        .filter(e -> FAILURES.stream().anyMatch(e.getFormattedMessage()::contains))
        .map(e -> Instant.ofEpochMilli(e.getTimeStamp()))
        .filter(at -> !at.isBefore(t))
        .findFirst();
  }

  private long published() throws Exception {
    return fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL");
  }
}
