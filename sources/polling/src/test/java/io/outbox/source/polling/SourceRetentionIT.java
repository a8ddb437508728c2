package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.DatabaseSettings.Retention;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.testkit.Activation;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The polling source runs retention once it is the active instance, and only then. */
class SourceRetentionIT {

  private static final Retention HOUR_AND_DAY =
      new Retention(Duration.ofHours(1), Duration.ofDays(1), 2, Duration.ofSeconds(1));

  private PollingFixture fx;

  @BeforeEach
  void setUp() throws Exception {
    fx = PollingFixture.create("source_retention");
    // 5 rows published 2 hours ago, 1 published just now, 1 pending; 3 dead letters 2 days old.
    fx.execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, published_at)"
            + " SELECT 'order', 'old-' || g, 'E', '{}', now() - interval '2 hours'"
            + " FROM generate_series(1, 5) g");
    fx.execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, published_at)"
            + " VALUES ('order', 'young', 'E', '{}', now())");
    fx.execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)"
            + " VALUES ('order', 'pending', 'E', '{}')");
    fx.execute(
        "INSERT INTO outbox_dead_letter (id, event_id, aggregate_type, aggregate_id, event_type,"
            + " payload, created_at, available_at, attempts, dead_lettered_at, reason, pipeline)"
            + " SELECT 1000 + g, gen_random_uuid(), 'order', 'k', 'E', '{}', now(), now(), 1,"
            + " now() - interval '2 days', 'permanent', '"
            + PollingFixture.PIPELINE
            + "' FROM generate_series(1, 3) g");
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  @Test
  void theActiveInstanceDeletesOldRowsAndAStandbyDoesNot() throws Exception {
    List<Role> rolesOfB = new CopyOnWriteArrayList<>();
    PollingSource a = fx.source(1, OnPublish.MARK, Map.of(), new CopyOnWriteArrayList<>());
    PollingSource b = fx.source(1, OnPublish.MARK, Map.of(), rolesOfB, HOUR_AND_DAY);
    a.activate(); // without retention
    CompletableFuture<Void> standby = Activation.inBackground(b);
    await().atMost(Duration.ofSeconds(5)).until(() -> rolesOfB.equals(List.of(Role.STANDBY)));
    assertThat(fx.value("SELECT count(*) FROM outbox")).isEqualTo(7L);

    a.close(Duration.ofSeconds(5));
    await().atMost(Duration.ofSeconds(10)).until(standby::isDone);

    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> fx.value("SELECT count(*) FROM outbox").equals(2L));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> fx.value("SELECT count(*) FROM outbox_dead_letter").equals(0L));
    assertThat(fx.column("SELECT aggregate_id FROM outbox ORDER BY id"))
        .containsExactly("young", "pending");
    b.close(Duration.ofSeconds(5));
    assertThat(
            fx.value(
                "SELECT count(*) FROM pg_stat_activity"
                    + " WHERE application_name LIKE '% retention' AND datname = current_database()"))
        .as("the retention session is closed with the source")
        .isEqualTo(0L);
  }
}
