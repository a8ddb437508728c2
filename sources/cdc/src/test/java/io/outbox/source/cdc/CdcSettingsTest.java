package io.outbox.source.cdc;

import static io.outbox.source.cdc.CdcTestSettings.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.support.SettingsReader;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CdcSettingsTest {

  @Test
  void defaultsAreValidAndNamesComeFromDatabaseAndPipeline() {
    CdcSettings s = CdcTestSettings.named(context(Map.of()), "shop");
    assertThat(s.slotName()).isEqualTo("outbox_relay_shop_orders");
    assertThat(s.publicationName()).isEqualTo("outbox_relay_shop_orders");
    assertThat(s.onSlotLoss()).isEqualTo(CdcSettings.OnSlotLoss.FAIL);
    assertThat(s.reconcileAfter()).isEqualTo(Duration.ofMinutes(5));
    assertThat(s.createPublication()).isTrue();
    assertThat(s.debezium()).isEmpty();
    assertThat(s.socketTimeout()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void configuredNamesAndRawDebeziumPropertiesAreKept() {
    CdcSettings s =
        CdcTestSettings.named(
            context(
                Map.of(
                    "slot-name", "orders_slot",
                    "on-slot-loss", "recreate",
                    "debezium", Map.of("slot.stream.params", "a=1"))),
            "shop");
    assertThat(s.slotName()).isEqualTo("orders_slot");
    assertThat(s.onSlotLoss()).isEqualTo(CdcSettings.OnSlotLoss.RECREATE);
    assertThat(s.debezium()).containsEntry("slot.stream.params", "a=1");
  }

  @Test
  void everyProblemIsListedWithItsKeyPathAndValue() {
    List<SettingsProblem> problems =
        SettingsReader.problems(
            context(
                Map.of(
                    "slot-name", "Orders-Slot",
                    "on-slot-loss", "ignore",
                    "reconcile-after", "10ms",
                    "lane-buffer", 0,
                    "heartbeat-interval", "soon")),
            CdcSettings::read);
    assertThat(problems)
        .extracting(SettingsProblem::toString)
        .anySatisfy(p -> assertThat(p).contains("source.cdc.slot-name").contains("Orders-Slot"))
        .anySatisfy(
            p -> assertThat(p).contains("source.cdc.on-slot-loss").contains("fail | recreate"))
        .anySatisfy(
            p -> assertThat(p).contains("source.cdc.reconcile-after").contains("off (or 0)"))
        .anySatisfy(p -> assertThat(p).contains("source.cdc.lane-buffer").contains(">= 1, not 0"))
        .anySatisfy(p -> assertThat(p).contains("source.cdc.heartbeat-interval").contains("soon"))
        .hasSize(5);
    assertThatThrownBy(() -> CdcTestSettings.named(context(Map.of("lane-buffer", 0)), "shop"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lane-buffer");
  }

  @Test
  void leaseIsRenewedAtLeastThreeTimesPerLeaseTimeout() {
    CdcSettings s = CdcTestSettings.named(context(Map.of()), "shop");
    assertThat(s.leaseTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(s.leadershipCheckInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(s.fenceWait()).isEqualTo(Duration.ofSeconds(2));
    assertThat(
            SettingsReader.problems(
                context(Map.of("lease-timeout", "2s", "leadership-check-interval", "1s")),
                CdcSettings::read))
        .extracting(SettingsProblem::toString)
        .singleElement()
        .satisfies(
            p ->
                assertThat(p)
                    .contains("source.cdc.leadership-check-interval")
                    .contains("2000 ms")
                    .contains("1000 ms"));
  }

  @Test
  void longDerivedNamesStayDistinctWithin63Characters() {
    String a = CdcSettings.derivedName("d".repeat(60), "orders");
    String b = CdcSettings.derivedName("d".repeat(60), "payments");
    assertThat(a).hasSize(63).matches("[a-z0-9_]+");
    assertThat(b).hasSize(63).isNotEqualTo(a);
    assertThat(CdcSettings.derivedName("Shop-DB", "Orders.EU"))
        .isEqualTo("outbox_relay_shop_db_orders_eu");
  }
}
