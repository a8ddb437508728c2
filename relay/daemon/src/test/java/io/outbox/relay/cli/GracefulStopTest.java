package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class GracefulStopTest {
  private final List<Integer> halts = new CopyOnWriteArrayList<>();
  private final AtomicInteger stops = new AtomicInteger();
  private final List<Integer> exits = new CopyOnWriteArrayList<>();
  private final GracefulStop stop = new GracefulStop(Duration.ofSeconds(5), halts::add, exits::add);

  @Test
  void stopsWhatStartedThenExitsZero() {
    stop.started(stops::incrementAndGet);

    stop.run();

    assertThat(stops).hasValue(1);
    assertThat(halts).containsExactly(0);
  }

  @Test
  void signalDuringStartUpWaitsForItThenStops() {
    Thread hook = new Thread(stop, "test-hook");
    hook.start();
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(2))
        .until(() -> hook.isAlive() && halts.isEmpty() && stops.get() == 0);

    stop.started(stops::incrementAndGet);

    await().atMost(Duration.ofSeconds(5)).until(() -> !hook.isAlive());
    assertThat(stops).hasValue(1);
    assertThat(halts).containsExactly(0);
  }

  @Test
  void aFatalPipelineFailureStopsEverythingThenExitsWithItsStatus() {
    stop.started(stops::incrementAndGet);

    stop.fatal(70);
    await().atMost(Duration.ofSeconds(5)).until(() -> exits.contains(70));
    stop.run(); // the shutdown hook that exit starts

    assertThat(stops).hasValue(1);
    assertThat(halts).containsExactly(70);
  }

  @Test
  void failedStartUpIsNotReportedAsACleanStop() {
    stop.startFailed();

    stop.run();

    assertThat(halts).isEmpty();
  }
}
