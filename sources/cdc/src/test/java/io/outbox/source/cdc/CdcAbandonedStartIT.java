package io.outbox.source.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.SourceException;
import io.outbox.testkit.FaultProxy;
import io.outbox.testkit.Services;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A start of the engine given up (it did not stream within {@code start-timeout}: every round trip
 * to the database delayed by a {@link FaultProxy}) leaves nothing behind: no replication connection
 * on the slot, no engine thread; the next start streams.
 */
class CdcAbandonedStartIT {

  private CdcFixture fx;
  private FaultProxy proxy;

  @AfterEach
  void tearDown() {
    if (fx != null) {
      fx.close();
    }
    if (proxy != null) {
      proxy.close();
    }
  }

  @Test
  void aStartGivenUpLeavesNoEngineSessionAndTheNextStartStreams() throws Exception {
    fx = new CdcFixture("cdc_abandoned_start");
    proxy = FaultProxy.start(Services.pgHost(), Services.pgPort());
    String viaProxy = "jdbc:postgresql://" + proxy.address() + "/" + fx.db.name();
    CdcSource slow =
        fx.source(viaProxy, fx.db.user(), fx.db.password(), Map.of("start-timeout", "4s"));
    proxy.set(FaultProxy.Mode.latency(Duration.ofMillis(100)));
    assertThatThrownBy(slow::activate)
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("did not start within PT4S");
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(engineSessions()).as("sessions of the engine given up").isZero();
              assertThat(engineThreads()).as("engine threads").isEmpty();
              assertThat(slow.engineLeft()).as("what is left of the engine").isEmpty();
            });
    // And it stays so: an engine left running would reconnect.
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(4))
        .until(() -> engineSessions() == 0 && activeSlots() == 0);
    slow.close(Duration.ofSeconds(10));

    proxy.set(FaultProxy.Mode.PASS);
    CdcSource source = fx.source(viaProxy, fx.db.user(), fx.db.password(), Map.of());
    source.activate();
    fx.commit(List.of(CdcFixture.event("a", 1)));
    List<Claim> claims = CdcFixture.claimAll(source, 1, 1, Duration.ofSeconds(30));
    claims.forEach(CdcFixture::publishAll);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isZero();
    assertThat(activeSlots()).as("the running engine's replication connection").isEqualTo(1);
    assertThat(engineThreads()).isNotEmpty();
    assertThat(source.engineLeft()).as("the running engine").isNotEmpty();
  }

  /** The engine's sessions (Debezium names them), this test's database only. */
  private long engineSessions() throws Exception {
    return fx.count(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'Debezium%'"
            + " AND datname = current_database()");
  }

  private long activeSlots() throws Exception {
    return fx.count(
        "SELECT count(*) FROM pg_replication_slots WHERE active AND slot_name = '"
            + fx.slot()
            + "'");
  }

  /** The relay's engine threads still alive. */
  private static List<String> engineThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(n -> n.endsWith("-cdc-engine"))
        .toList();
  }
}
