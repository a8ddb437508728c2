package io.outbox.source.cdc.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.junit.jupiter.api.Test;

/** What the session's gate guarantees about the connector task once the engine is stopped. */
class TaskGateTest {

  private final TaskGate gate = new TaskGate("orders");
  private final RecordingTask task = new RecordingTask();

  @Test
  void aCallInFlightWhenTheGateClosesIsStoppedAsItLeaves() throws Exception {
    assertThat(gate.enter(task)).isTrue(); // a start, still running
    gate.close();
    assertThat(task.stops).as("not stopped under a start in flight").isEmpty();
    assertThat(gate.quiet()).isFalse();
    assertThat(gate.running()).containsExactly("1 call(s) of the connector task in flight");

    gate.exit();
    assertThat(task.stops).hasSize(1);
    assertThat(gate.quiet()).isTrue();
    assertThat(gate.running()).isEmpty();
    assertThat(gate.awaitQuiet(Ticker.SYSTEM.deadline(Duration.ZERO))).isTrue();
  }

  @Test
  void noCallReachesTheConnectorOnceClosed() {
    gate.close();
    assertThat(gate.enter(task)).isFalse();
    assertThat(task.stops).as("never entered: nothing to stop").isEmpty();
    assertThat(gate.quiet()).isTrue();
  }

  @Test
  void closingWithNoCallInFlightStopsTheTaskAtOnceAndOnlyOnce() {
    assertThat(gate.enter(task)).isTrue();
    gate.exit();
    assertThat(gate.quiet()).as("open: the task may be called again").isFalse();
    assertThat(gate.running()).containsExactly("the connector task, not stopped");

    gate.close();
    gate.close();
    assertThat(task.stops).hasSize(1);
    assertThat(gate.quiet()).isTrue();
  }

  @Test
  void anInterruptedLastCallStopsTheTaskUninterruptedAndKeepsItsInterrupt() {
    assertThat(gate.enter(task)).isTrue(); // a poll the engine cancels
    gate.close();
    Thread.currentThread().interrupt();
    gate.exit();
    assertThat(task.stops).containsExactly(false);
    assertThat(Thread.interrupted()).as("the interrupt is kept").isTrue();
  }

  @Test
  void aTaskOfAClosedGateDoesNotStart() {
    gate.close();
    EngineTask engineTask = new EngineTask();
    assertThatThrownBy(() -> engineTask.start(Map.of(TaskGate.REGISTRATION, gate.open())))
        .isInstanceOf(ConnectException.class)
        .hasMessageContaining("stopped it");
  }

  /** Records each stop and whether its thread was interrupted then. */
  private static final class RecordingTask extends SourceTask {
    final List<Boolean> stops = new ArrayList<>();

    @Override
    public String version() {
      return "test";
    }

    @Override
    public void start(Map<String, String> props) {}

    @Override
    public List<SourceRecord> poll() {
      return null;
    }

    @Override
    public void stop() {
      stops.add(Thread.currentThread().isInterrupted());
    }
  }
}
