package io.outbox.source.cdc;

import static io.outbox.source.cdc.CdcFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.SourceException;
import io.outbox.testkit.Teardown;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The CDC source on its own against the real PostgreSQL (wal_level = logical). */
class CdcSourceIT {
  @RegisterExtension final Teardown teardown = new Teardown();
  private CdcFixture fx;

  private CdcFixture fixture(TestInfo info) {
    fx = teardown.add(new CdcFixture("cdc_" + info.getTestMethod().orElseThrow().getName()));
    return fx;
  }

  @Test
  void streamsInsertsAndCommitsOffsetsOnlyOnceFinal(TestInfo info) throws Exception {
    fixture(info);
    List<Role> roles = new CopyOnWriteArrayList<>();
    CdcSource source = fx.source(1, Map.of(), roles);
    source.activate();
    assertThat(roles).containsExactly(Role.ACTIVE);
    assertThat(fx.instances().role()).as("the role status shows").isEqualTo("active");
    assertThat(fx.count("SELECT count(*) FROM pg_publication_tables WHERE tablename = 'outbox'"))
        .isEqualTo(1);

    List<UUID> ids = fx.commit(List.of(event("a", 1), event("b", 1), event("a", 2)));
    List<Claim> claims = CdcFixture.claimAll(source, 1, 3, Duration.ofSeconds(30));
    List<OutboxEvent> events = claims.stream().flatMap(c -> c.events().stream()).toList();
    assertThat(events).extracting(OutboxEvent::eventId).containsExactlyElementsOf(ids);
    OutboxEvent first = events.get(0);
    assertThat(first.payloadFormat()).isEqualTo(PayloadFormat.JSON);
    assertThat(new String(first.payload(), StandardCharsets.UTF_8)).isEqualTo("{\"seq\": 1}");
    assertThat(first.headers()).containsEntry("seq", "1");
    assertThat(first.aggregateId()).isEqualTo("a");
    assertThat(first.attempts()).isZero();
    assertThat(first.createdAt())
        .as("created_at to the microsecond, through the stream's epoch-microsecond timestamps")
        .isEqualTo(
            Instant.EPOCH.plus(
                fx.count(
                    "SELECT (extract(epoch FROM created_at) * 1000000)::bigint FROM outbox"
                        + " WHERE event_id = '"
                        + ids.get(0)
                        + "'"),
                ChronoUnit.MICROS));

    claims.forEach(CdcFixture::publishAll);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL")).isEqualTo(3);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> fx.count("SELECT count(*) FROM outbox_relay_offsets") > 0);
    // The relay's own UPDATEs (mark) are not events.
    Claim next = source.claim(0, 100, Duration.ofMillis(500));
    assertThat(next.events()).isEmpty();
    next.release();
  }

  @Test
  void retryHoldsTheKeyBackButNotOtherKeys(TestInfo info) throws Exception {
    fixture(info);
    CdcSource source = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    source.activate();
    fx.commit(List.of(event("k", 1), event("k", 2), event("other", 1)));
    List<Claim> claims = CdcFixture.claimAll(source, 1, 3, Duration.ofSeconds(30));
    assertThat(claims).hasSize(1);
    Claim claim = claims.get(0);
    List<OutboxEvent> e = claim.events();
    claim.settle(
        List.of(
            new Settlement.Retry(e.get(0), 1, Duration.ofSeconds(2), "broker said no"),
            new Settlement.Release(e.get(1)),
            new Settlement.Published(e.get(2))));
    assertThat(
            fx.count(
                "SELECT count(*) FROM outbox WHERE attempts = 1 AND last_error = 'broker said no'"
                    + " AND next_attempt_at > now()"))
        .isEqualTo(1);
    Backlog backlog = source.backlog().orElseThrow();
    assertThat(backlog.pending()).isEqualTo(2);
    assertThat(backlog.retrying()).isEqualTo(1);
    assertThat(backlog.lastError()).isEqualTo("broker said no");

    // Within the backoff, k's later event is held back.
    Claim held = source.claim(0, 100, Duration.ofMillis(300));
    assertThat(held.events()).isEmpty();
    held.release();

    // Once due: the retried event first, with its attempts, then k's next one.
    Claim again = source.claim(0, 100, Duration.ofSeconds(10));
    List<OutboxEvent> order = again.events();
    assertThat(order).extracting(OutboxEvent::id).containsExactly(e.get(0).id(), e.get(1).id());
    assertThat(order.get(0).attempts()).isEqualTo(1);
    CdcFixture.publishAll(again);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isZero();
  }

  @Test
  void idleOutboxStillAdvancesTheSlot(TestInfo info) throws Exception {
    fixture(info);
    CdcSource source = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    source.activate();
    fx.execute("CREATE TABLE busy (id bigserial PRIMARY KEY, filler text)");
    long start = fx.confirmedLsn();
    assertThat(start).isPositive();
    for (int i = 0; i < 20; i++) {
      fx.execute("INSERT INTO busy (filler) SELECT repeat('x', 200) FROM generate_series(1, 2000)");
    }
    long written = fx.count("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(fx.confirmedLsn()).isGreaterThanOrEqualTo(written));
    assertThat(source.retainedWalBytes()).isBetween(0L, 64L * 1024 * 1024);
    Backlog backlog = source.backlog().orElseThrow();
    assertThat(backlog.pending()).isZero();
    assertThat(backlog.retainedWalBytes()).isPresent();
    assertThat(backlog.retainedWalBytes().getAsLong()).isNotNegative();
  }

  @Test
  void missingSlotWithStoredOffsetsIsALoudError(TestInfo info) throws Exception {
    fixture(info);
    storeOffsetsThenDropTheSlot();

    CdcSource second = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    assertThatThrownBy(second::activate)
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("replication slot " + fx.slot() + " is missing")
        .hasMessageContaining("outbox_relay_offsets")
        .hasMessageContaining("on-slot-loss = recreate");
    assertThat(fx.confirmedLsn()).as("no slot was created").isEqualTo(-1);
  }

  @Test
  void reCreatedSlotWithStoredOffsetsIsALoudError(TestInfo info) throws Exception {
    fixture(info);
    storeOffsetsThenDropTheSlot();
    fx.execute("CREATE TABLE filler AS SELECT generate_series(1, 1000) AS n");
    fx.execute("SELECT pg_create_logical_replication_slot('" + fx.slot() + "', 'pgoutput')");

    CdcSource second = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    assertThatThrownBy(second::activate)
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("replication slot " + fx.slot() + " was re-created")
        .hasMessageContaining("on-slot-loss = recreate");
  }

  @Test
  void reconcileSweepPublishesRowsTheStreamMissed(TestInfo info) throws Exception {
    fixture(info);
    CdcSource source = fx.source(1, Map.of("reconcile-after", "1s"), new CopyOnWriteArrayList<>());
    source.activate();
    String publication = CdcSettings.derivedName(fx.db.name(), CdcFixture.PIPELINE);
    // Rows committed while the table is out of the publication never reach the stream.
    fx.execute("ALTER PUBLICATION " + publication + " DROP TABLE outbox");
    List<UUID> missed = fx.commit(List.of(event("m", 1), event("m", 2)));
    fx.execute("ALTER PUBLICATION " + publication + " ADD TABLE outbox");
    UUID streamed = fx.commit(List.of(event("m", 3))).get(0);

    List<Claim> claims = CdcFixture.claimAll(source, 1, 3, Duration.ofSeconds(30));
    List<UUID> order =
        claims.stream().flatMap(c -> c.events().stream()).map(OutboxEvent::eventId).toList();
    assertThat(order).containsExactly(missed.get(0), missed.get(1), streamed);
    claims.forEach(CdcFixture::publishAll);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isZero();
  }

  @Test
  void thePublicationCarriesOnlyTheColumnsTheStreamReads(TestInfo info) throws Exception {
    fixture(info);
    CdcSource source = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    source.activate();
    String published =
        "SELECT count(*) FROM pg_publication_tables, unnest(attnames) a WHERE pubname = '"
            + fx.slot()
            + "' AND tablename = 'outbox'";
    assertThat(fx.count(published)).isEqualTo(4);
    assertThat(
            fx.count(
                published + " AND a IN ('id', 'aggregate_type', 'aggregate_id', 'available_at')"))
        .isEqualTo(4);
  }

  @Test
  void aMappedColumnWhoseNameNeedsQuotingIsPublishedStreamedAndSettled(TestInfo info)
      throws Exception {
    fixture(info);
    fx.execute("ALTER TABLE outbox RENAME COLUMN aggregate_id TO \"AggregateId\"");
    Map<String, String> columns =
        new java.util.HashMap<>(io.outbox.client.OutboxColumns.DEFAULT.byKey());
    columns.put("aggregate-id", "AggregateId");
    CdcSource source = fx.sourceWithColumns(columns);
    source.activate(); // creates the publication with its column list
    fx.execute(
        "INSERT INTO outbox (aggregate_type, \"AggregateId\", event_type, payload)"
            + " VALUES ('order', 'a', 'OrderCreated', '{}'), ('order', 'b', 'OrderCreated', '{}')");

    List<Claim> claims = CdcFixture.claimAll(source, 1, 2, Duration.ofSeconds(30));
    assertThat(claims.stream().flatMap(c -> c.events().stream()))
        .extracting(OutboxEvent::aggregateId)
        .containsExactly("a", "b");
    claims.forEach(CdcFixture::publishAll);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isZero();
  }

  @Test
  void aPublicationOfEveryColumnStillStreamsTheRowsAsTheyAre(TestInfo info) throws Exception {
    fixture(info);
    // As a relay before column lists created it (or a DBA without one).
    fx.execute(
        "CREATE PUBLICATION \"" + fx.slot() + "\" FOR TABLE outbox WITH (publish = 'insert')");
    CdcSource source = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    source.activate();
    List<UUID> ids = fx.commit(List.of(event("a", 1), event("b", 2)));
    List<Claim> claims = CdcFixture.claimAll(source, 1, 2, Duration.ofSeconds(30));
    List<OutboxEvent> events = claims.stream().flatMap(c -> c.events().stream()).toList();
    assertThat(events).extracting(OutboxEvent::eventId).containsExactlyElementsOf(ids);
    assertThat(new String(events.get(1).payload(), StandardCharsets.UTF_8))
        .isEqualTo("{\"seq\": 2}");
    assertThat(events.get(1).headers()).containsEntry("seq", "2");
    claims.forEach(CdcFixture::publishAll);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isZero();
  }

  @Test
  void aPublicationWithoutAColumnTheStreamNeedsIsRefusedWithTheFix(TestInfo info) throws Exception {
    fixture(info);
    fx.execute(
        "CREATE PUBLICATION \""
            + fx.slot()
            + "\" FOR TABLE outbox (id, aggregate_id, payload) WITH (publish = 'insert')");
    CdcSource source = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    assertThatThrownBy(source::activate)
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("publishes columns [id, aggregate_id, payload]")
        .hasMessageContaining("not [aggregate_type, available_at]")
        .hasMessageContaining(
            "ALTER PUBLICATION "
                + fx.slot()
                + " SET TABLE \"public\".\"outbox\" (id, aggregate_type, aggregate_id,"
                + " available_at)");
  }

  @Test
  void missingPublicationIsNamedWhenTheRelayMayNotCreateIt(TestInfo info) throws Exception {
    fixture(info);
    CdcSource source =
        fx.source(1, Map.of("create-publication", false), new CopyOnWriteArrayList<>());
    assertThatThrownBy(source::activate)
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("publication outbox_relay_")
        .hasMessageContaining("does not exist")
        .hasMessageContaining("CREATE PUBLICATION");
  }

  /** A first source publishes one event, stores its offsets and closes; the slot is dropped. */
  private void storeOffsetsThenDropTheSlot() throws Exception {
    CdcSource first = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    first.activate();
    fx.commit(List.of(event("a", 1)));
    CdcFixture.claimAll(first, 1, 1, Duration.ofSeconds(30)).forEach(CdcFixture::publishAll);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> fx.count("SELECT count(*) FROM outbox_relay_offsets") > 0);
    first.close(Duration.ofSeconds(10));
    fx.execute("SELECT pg_drop_replication_slot('" + fx.slot() + "')");
  }
}
