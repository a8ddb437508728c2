package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.typesafe.config.ConfigFactory;
import io.outbox.client.OutboxMessage;
import io.outbox.relay.BuildInfo;
import io.outbox.relay.Relay;
import io.outbox.relay.config.RelayConfigLoader;
import io.outbox.relay.config.RelaySettings;
import io.outbox.relay.http.HttpEndpoints;
import io.outbox.testkit.PrivateKafka;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The HTTP endpoints of a running relay against the real database and broker: {@code /metrics}
 * values follow the events that flow, the backlog gauges follow the table, the sink-unavailable
 * gauge and readiness follow a broker that goes away and comes back, and a standby says so.
 */
class MetricsIT {
  private static final String P = "pipeline=\"it\"";
  private static final String FAST_BACKLOG = "\noutbox-relay.http.backlog-interval = 200ms\n";
  private static final Duration WAIT = Duration.ofSeconds(30);

  private RelayFixture fx;
  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    if (fx != null) {
      fx.close();
    }
  }

  /** Starts a relay with its HTTP endpoints on a free port. */
  private Scrape run(String hocon) {
    RelaySettings settings =
        RelayConfigLoader.standard().load(ConfigFactory.parseString(hocon), "test").settings();
    Relay relay = Relay.start(settings);
    open.add(relay);
    HttpEndpoints http = HttpEndpoints.start(settings.http(), relay);
    open.add(http);
    return new Scrape(http.port());
  }

  @Test
  void metricsFollowTheEventsAndTheTable() throws Exception {
    fx = new RelayFixture("metrics_flow");
    // Before the relay runs: one event due in an hour, and one that failed once and waits.
    fx.commit(
        List.of(
            OutboxMessage.builder()
                .aggregate("order", "later")
                .eventType("OrderScheduled")
                .payload("{\"later\":true}")
                .availableAt(Instant.now().plus(Duration.ofHours(1)))
                .build(),
            OutboxMessage.builder()
                .aggregate("order", "stuck")
                .eventType("OrderStuck")
                .payload("{\"stuck\":true}")
                .availableAt(Instant.now().plus(Duration.ofHours(1)))
                .build()));
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement()) {
      st.executeUpdate(
          "UPDATE outbox SET attempts = 1, next_attempt_at = now() + interval '1 hour',"
              + " last_error = 'broker said no' WHERE aggregate_id = 'stuck'");
    }
    Scrape scrape = run(fx.config("") + FAST_BACKLOG);

    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(scrape.get("/health/ready").statusCode()).isEqualTo(200);
              assertThat(scrape.pipeline("outbox_relay_active", "it")).isEqualTo(1);
              assertThat(scrape.pipeline("outbox_relay_pending_events", "it")).isEqualTo(2);
            });
    assertThat(scrape.get("/health/live").statusCode()).isEqualTo(200);
    assertThat(scrape.get("/health/ready").body())
        .isEqualTo("it: active, source connected, sink available\n");
    assertThat(scrape.pipeline("outbox_relay_retrying_events", "it")).isEqualTo(1);
    assertThat(scrape.pipeline("outbox_relay_dead_letters", "it")).isZero();
    assertThat(scrape.pipeline("outbox_relay_oldest_pending_age_seconds", "it")).isZero();
    assertThat(scrape.pipeline("outbox_relay_source_connected", "it")).isEqualTo(1);
    assertThat(scrape.pipeline("outbox_relay_sink_unavailable", "it")).isZero();
    assertThat(scrape.pipeline("outbox_relay_events_published_total", "it")).isZero();
    assertThat(scrape.metrics())
        .contains("jvm_memory_used_bytes")
        .doesNotContain("outbox_relay_cdc_")
        .containsPattern(
            "(?m)^outbox_relay_build_info\\{.*version=\"" + BuildInfo.version() + "\"} 1");

    List<OutboxMessage> batch = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      batch.add(event("k" + (i % 4), i));
    }
    batch.add(
        OutboxMessage.builder()
            .aggregate("order", "poison")
            .eventType("OrderBroken")
            .destination("not a valid topic!")
            .payload("{\"poison\":true}")
            .build());
    fx.commit(batch);

    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              String m = scrape.metrics();
              assertThat(Scrape.value(m, "outbox_relay_events_published_total", P)).hasValue(20);
              assertThat(
                      Scrape.value(
                          m,
                          "outbox_relay_events_dead_lettered_total",
                          P + ",reason=\"permanent\""))
                  .hasValue(1);
              assertThat(Scrape.value(m, "outbox_relay_dead_letters", P)).hasValue(1);
              assertThat(Scrape.value(m, "outbox_relay_pending_events", P)).hasValue(2);
            });
    String m = scrape.metrics();
    assertThat(Scrape.value(m, "outbox_relay_commit_to_ack_seconds_count", P)).hasValue(20);
    assertThat(Scrape.value(m, "outbox_relay_commit_to_ack_seconds_bucket", P + ",le=\"300.0\""))
        .hasValue(20);
    assertThat(Scrape.value(m, "outbox_relay_batch_size_events_sum", P)).hasValue(21);
    // Every claimed event was a new row: its wake stage counted once; the batches' stages each.
    assertThat(Scrape.value(m, "outbox_relay_stage_seconds_count", P + ",stage=\"wake\""))
        .hasValue(21);
    for (String stage : List.of("claim", "publish", "settle")) {
      String labels = P + ",stage=\"" + stage + "\"";
      assertThat(Scrape.value(m, "outbox_relay_stage_seconds_count", labels).orElseThrow())
          .as(stage)
          .isBetween(1.0, 21.0);
      assertThat(Scrape.value(m, "outbox_relay_stage_seconds_sum", labels).orElseThrow())
          .as(stage)
          .isPositive();
    }
    assertThat(Scrape.value(m, "outbox_relay_batch_size_events_count", P).orElseThrow())
        .isBetween(1.0, 21.0);
    assertThat(Scrape.value(m, "outbox_relay_publish_attempts_total", P).orElseThrow())
        .isGreaterThanOrEqualTo(20);
    assertThat(Scrape.value(m, "outbox_relay_publish_failures_total", "class=\"permanent\"," + P))
        .hasValue(1);
    assertThat(Scrape.value(m, "outbox_relay_publish_failures_total", "class=\"retryable\"," + P))
        .hasValue(0);
    assertThat(Scrape.value(m, "outbox_relay_events_retried_total", P)).hasValue(0);
    assertThat(Scrape.value(m, "outbox_relay_backlog_read_timestamp_seconds", P).orElseThrow())
        .isGreaterThan(Instant.now().minusSeconds(60).getEpochSecond());
  }

  @Test
  void sinkUnavailableGaugeAndReadinessFollowTheBroker() throws Exception {
    fx = new RelayFixture("metrics_outage");
    PrivateKafka kafka = PrivateKafka.start();
    open.add(kafka);
    Scrape scrape =
        run(fx.config("sink.kafka.send-timeout = 3s", kafka.bootstrap()) + FAST_BACKLOG);
    fx.commit(List.of(event("a", 1)));
    await()
        .atMost(WAIT)
        .until(() -> scrape.pipeline("outbox_relay_events_published_total", "it") == 1);
    assertThat(scrape.pipeline("outbox_relay_sink_unavailable", "it")).isZero();

    kafka.stop();
    fx.commit(List.of(event("a", 2)));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(scrape.pipeline("outbox_relay_sink_unavailable", "it")).isEqualTo(1);
              assertThat(scrape.get("/health/ready").statusCode()).isEqualTo(503);
            });
    assertThat(scrape.get("/health/ready").body()).contains("it: active", "sink unavailable");
    assertThat(scrape.pipeline("outbox_relay_sink_outages_total", "it")).isEqualTo(1);
    assertThat(
            scrape
                .value("outbox_relay_publish_failures_total", "class=\"sink_unavailable\"," + P)
                .orElseThrow())
        .isGreaterThanOrEqualTo(1);

    kafka.restart();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(scrape.pipeline("outbox_relay_sink_unavailable", "it")).isZero();
              assertThat(scrape.get("/health/ready").statusCode()).isEqualTo(200);
              assertThat(scrape.pipeline("outbox_relay_events_published_total", "it")).isEqualTo(2);
            });
    assertThat(scrape.pipeline("outbox_relay_events_retried_total", "it")).isZero();
  }

  @Test
  void standbyReportsItsRoleAndIsReady() throws Exception {
    fx = new RelayFixture("metrics_standby");
    Scrape active = run(fx.config("") + FAST_BACKLOG);
    await().atMost(WAIT).until(() -> active.pipeline("outbox_relay_active", "it") == 1);
    Scrape standby = run(fx.config("") + FAST_BACKLOG);
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(standby.pipeline("outbox_relay_source_connected", "it")).isEqualTo(1);
              assertThat(standby.get("/health/ready").statusCode()).isEqualTo(200);
            });
    assertThat(standby.pipeline("outbox_relay_active", "it")).isZero();
    assertThat(standby.get("/health/ready").body())
        .isEqualTo("it: standby, source connected, sink available\n");
    assertThat(active.pipeline("outbox_relay_active", "it")).isEqualTo(1);

    // The standby reads the same backlog as the active instance.
    fx.commit(
        List.of(
            OutboxMessage.builder()
                .aggregate("order", "later")
                .eventType("OrderScheduled")
                .payload("{}")
                .availableAt(Instant.now().plus(Duration.ofHours(1)))
                .build()));
    await().atMost(WAIT).until(() -> standby.pipeline("outbox_relay_pending_events", "it") == 1);
  }
}
