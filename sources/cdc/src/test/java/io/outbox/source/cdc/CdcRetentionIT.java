package io.outbox.source.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.DatabaseSettings.Retention;
import io.outbox.testkit.Teardown;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The CDC source runs the pipeline's retention once it is the active instance. */
class CdcRetentionIT {

  @RegisterExtension final Teardown teardown = new Teardown();
  private CdcFixture fx;

  @Test
  void theActiveInstanceDeletesOldPublishedRowsAndDeadLetters() throws Exception {
    fx = teardown.add(new CdcFixture("cdc_retention"));
    // 3 rows published 2 hours ago and 1 just now; 2 dead letters 2 days old, 1 from today.
    fx.execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, published_at)"
            + " SELECT 'order', 'old-' || g, 'E', '{}', now() - interval '2 hours'"
            + " FROM generate_series(1, 3) g");
    fx.execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, published_at)"
            + " VALUES ('order', 'young', 'E', '{}', now())");
    fx.execute(
        "INSERT INTO outbox_dead_letter (id, event_id, aggregate_type, aggregate_id, event_type,"
            + " payload, created_at, available_at, attempts, dead_lettered_at, reason, pipeline)"
            + " SELECT 1000 + g, gen_random_uuid(), 'order', 'k', 'E', '{}', now(), now(), 1,"
            + " now() - CASE WHEN g < 3 THEN interval '2 days' ELSE interval '1 hour' END,"
            + " 'permanent', '"
            + CdcFixture.PIPELINE
            + "' FROM generate_series(1, 3) g");
    CdcSource source =
        fx.source(
            1,
            OnPublish.MARK,
            Map.of(),
            new CopyOnWriteArrayList<>(),
            new Retention(Duration.ofHours(1), Duration.ofDays(1), 2, Duration.ofSeconds(1)));

    source.activate();

    await()
        .atMost(Duration.ofSeconds(15))
        .until(
            () ->
                fx.count("SELECT count(*) FROM outbox") == 1
                    && fx.count("SELECT count(*) FROM outbox_dead_letter") == 1);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE aggregate_id = 'young'")).isEqualTo(1);
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter WHERE id = 1003")).isEqualTo(1);
  }
}
