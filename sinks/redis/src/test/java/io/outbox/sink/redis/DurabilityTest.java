package io.outbox.sink.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DurabilityTest {

  @Test
  void saysWhatAnAcknowledgedEntrySurvivesPerSetting() {
    assertThat(Durability.describe("r:6379", "no", "everysec", 0, 0).text())
        .contains("appendonly no")
        .contains("a kill or crash of Redis loses what came after the last one")
        .contains("0 connected replica(s)")
        .contains("a failover to a replica that had not received it loses it");
    assertThat(Durability.describe("r:6379", "yes", "always", 1, 0).text())
        .contains("survives a crash of Redis and of its host");
    assertThat(Durability.describe("r:6379", "yes", "everysec", 1, 0).text())
        .contains("can lose about the last second");
    assertThat(Durability.describe("r:6379", "yes", "no", 1, 0).text())
        .contains("up to about 30 s");
    assertThat(Durability.describe("r:6379", null, null, -1, 0).text())
        .contains("cannot be read")
        .contains("replicas unknown");
  }

  @Test
  void warnsWhenFewerReplicasAreConnectedThanWaitReplicasAsksFor() {
    Durability enough = Durability.describe("r:6379", "yes", "everysec", 2, 2);
    assertThat(enough.warning()).isFalse();
    assertThat(enough.text()).contains("wait-replicas = 2").contains("survives a failover");
    Durability tooFew = Durability.describe("r:6379", "yes", "everysec", 1, 2);
    assertThat(tooFew.warning()).isTrue();
    assertThat(tooFew.text()).contains("every batch waits wait-timeout and is sink-unavailable");
  }

  @Test
  void readsTheConnectedReplicasOfInfoReplication() {
    assertThat(
            Durability.connectedReplicas("# Replication\r\nrole:master\r\nconnected_slaves:2\r\n"))
        .isEqualTo(2);
    assertThat(Durability.connectedReplicas("role:slave\r\n")).isEqualTo(-1);
  }
}
