package io.outbox.source.cdc;

import static io.outbox.source.cdc.CdcFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.SourceException;
import io.outbox.testkit.Teardown;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The settlement of CDC claims: a batch of published events alone is written by one fenced
 * statement ({@link io.outbox.source.cdc.claim.FencedPublish}), which changes nothing under an
 * epoch no longer current; other verdicts take the transaction.
 */
class CdcSettleIT {

  @RegisterExtension final Teardown teardown = new Teardown();

  private CdcFixture fixture(TestInfo info) {
    return teardown.add(new CdcFixture("cdc_" + info.getTestMethod().orElseThrow().getName()));
  }

  /** An active one-lane source's one claim of the two events {@code a#1}, {@code b#1}. */
  private static Claim claimOfTwo(CdcFixture fx) throws Exception {
    CdcSource source = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    source.activate();
    fx.commit(List.of(event("a", 1), event("b", 1)));
    List<Claim> claims = CdcFixture.claimAll(source, 1, 2, Duration.ofSeconds(30));
    assertThat(claims).hasSize(1);
    assertThat(claims.get(0).events()).hasSize(2);
    return claims.get(0);
  }

  @Test
  void publishedEventsAreMarked(TestInfo info) throws Exception {
    CdcFixture fx = fixture(info);
    CdcSource source = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    source.activate();
    fx.commit(List.of(event("a", 1), event("b", 1), event("a", 2)));
    List<Claim> claims = CdcFixture.claimAll(source, 1, 3, Duration.ofSeconds(30));
    assertThat(claims).hasSize(1);
    CdcFixture.publishAll(claims.get(0));
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL")).isEqualTo(3);
    // Set after the row was created, within the statement (clock_timestamp(), not now()).
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at < created_at")).isZero();
  }

  @Test
  void publishedEventsAreDeletedWithOnPublishDelete(TestInfo info) throws Exception {
    CdcFixture fx = fixture(info);
    CdcSource source = fx.source(1, OnPublish.DELETE, Map.of(), new CopyOnWriteArrayList<>());
    source.activate();
    fx.commit(List.of(event("a", 1), event("b", 1)));
    fx.commit(List.of(event("c", 1)));
    List<Claim> claims = CdcFixture.claimAll(source, 1, 3, Duration.ofSeconds(30));
    CdcFixture.publishAll(claims.get(0));
    assertThat(fx.count("SELECT count(*) FROM outbox")).isZero();
  }

  @Test
  void aSettlementUnderAnEpochNoLongerCurrentChangesNothing(TestInfo info) throws Exception {
    CdcFixture fx = fixture(info);
    Claim claim = claimOfTwo(fx);
    // What a take-over does to this instance's epoch (it also ends its sessions; here the epoch
    // alone moves, so that the statement's own check is what refuses the write).
    fx.execute("UPDATE outbox_relay_leader SET epoch = epoch + 1");

    assertThatThrownBy(() -> CdcFixture.publishAll(claim))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("no longer current");
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL")).isZero();
  }

  @Test
  void aBatchWithARetryIsWrittenInOneTransaction(TestInfo info) throws Exception {
    CdcFixture fx = fixture(info);
    Claim claim = claimOfTwo(fx);
    List<OutboxEvent> events = claim.events();
    claim.settle(
        List.of(
            new Settlement.Published(events.get(0)),
            new Settlement.Retry(events.get(1), 1, Duration.ofMinutes(1), "broker said no")));
    assertThat(
            fx.count(
                "SELECT count(*) FROM outbox WHERE published_at IS NOT NULL AND id = "
                    + events.get(0).id()))
        .isEqualTo(1);
    assertThat(
            fx.count(
                "SELECT count(*) FROM outbox WHERE published_at IS NULL AND attempts = 1"
                    + " AND next_attempt_at > now() AND id = "
                    + events.get(1).id()))
        .isEqualTo(1);
  }
}
