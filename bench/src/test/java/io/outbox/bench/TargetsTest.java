package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class TargetsTest {

  private static final RelayUnderTest.Setup CDC =
      new RelayUnderTest.Setup("cdc", "kafka", "mark", null, null, "", List.of(), "", null);

  @Test
  void aStreamedCdcDrainIsPutBesideDebeziumsStream() {
    Report r = cdcRun(new Results.Streamed(2.0, 100_000, 6.0, false, 150_000, 25_000.0, 0.5, 0.1));

    Targets.evaluate(r, CDC, true);

    assertThat(r.ratios)
        .containsEntry("relay / debezium default", 2.0)
        .containsEntry("relay / debezium tuned", 1.6)
        .containsEntry("relay after the insertion / debezium default", 2.5)
        .containsEntry("relay after the insertion / debezium tuned", 2.0);
    assertThat(r.targets)
        .extracting(Report.Target::target)
        .contains("relay / debezium default >= 2.0", "relay / debezium tuned >= 1.2");
  }

  @Test
  void anInsertBoundDrainGetsNoRatioAfterTheInsertion() {
    Report r = cdcRun(new Results.Streamed(10.0, 20_000, 0.1, true, 300, 3_000.0, 0.5, 0.1));

    Targets.evaluate(r, CDC, true);

    assertThat(r.ratios).containsKeys("relay / debezium default", "relay / debezium tuned");
    assertThat(r.ratios.keySet()).noneMatch(k -> k.startsWith("relay after the insertion"));
  }

  @Test
  void theTableCatchUpIsNotPutBesideDebeziumsStream() {
    Report r = cdcRun(null);

    Targets.evaluate(r, CDC, false);

    assertThat(r.ratios.keySet()).noneMatch(k -> k.contains("debezium"));
    assertThat(r.targets).extracting(Report.Target::target).noneMatch(t -> t.contains("debezium"));
    assertThat(r.notes).anyMatch(n -> n.startsWith("no relay / debezium ratio"));
  }

  @Test
  void aPollingDrainIsPutBesideDebezium() {
    Report r = new Report();
    r.throughput.add(throughput("relay polling->kafka mark", 40_000));
    r.throughput.add(throughput("debezium default", 10_000));
    r.throughput.add(throughput("debezium tuned", 12_500));

    Targets.evaluate(
        r,
        new RelayUnderTest.Setup("polling", "kafka", "mark", null, null, "", List.of(), "", null),
        false);

    assertThat(r.ratios)
        .containsEntry("relay / debezium default", 4.0)
        .containsEntry("relay / debezium tuned", 3.2);
  }

  /** A CDC run's drain of 20,000 events/s beside Debezium's 10,000 and 12,500. */
  private static Report cdcRun(Results.Streamed streamed) {
    Report r = new Report();
    r.throughput.add(throughput("relay cdc->kafka mark", 20_000));
    r.throughput.add(throughput("debezium default", 10_000));
    r.throughput.add(throughput("debezium tuned", 12_500));
    if (streamed != null) {
      r.streamed.put("relay cdc->kafka mark", streamed);
    }
    return r;
  }

  private static Results.Throughput throughput(String name, double eventsPerSecond) {
    return Results.Throughput.of(name, "", 100_000, Math.round(100_000 / eventsPerSecond * 1e9));
  }
}
