package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import java.util.List;
import org.junit.jupiter.api.Test;

class RelayUnderTestTest {

  @Test
  void theRawBaselinesDefaultLanesAreTheRelays() {
    // The raw RabbitMQ and Redis baselines open one channel or connection per lane of the relay:
    // a run without --lanes must give them the relay's own default, not a guess.
    int relayDefault =
        ConfigFactory.defaultReference().getInt("outbox-relay.pipeline-defaults.lanes");
    assertThat(setup(null).lanesInEffect()).isEqualTo(relayDefault);
    assertThat(RelayUnderTest.RELAY_DEFAULT_LANES).isEqualTo(relayDefault);
  }

  @Test
  void lanesGivenOnTheCommandLineWin() {
    assertThat(setup(4).lanesInEffect()).isEqualTo(4);
  }

  @Test
  void theRelayRunsWithTheLaunchersDefaultsThenTheGivenOptions() {
    assertThat(RelayUnderTest.jvmOptions(List.of()))
        .containsExactly("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");
    assertThat(RelayUnderTest.jvmOptions(List.of("-Xmx128m", "-XX:TieredStopAtLevel=4")))
        .containsExactly(
            "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m", "-XX:TieredStopAtLevel=4");
  }

  @Test
  void aGivenCollectorReplacesTheDefaultOneSinceTwoStopTheJvm() {
    assertThat(RelayUnderTest.jvmOptions(List.of("-XX:+UseG1GC", "-Xmx1g")))
        .containsExactly("-XX:TieredStopAtLevel=1", "-XX:+UseG1GC", "-Xmx1g");
    assertThat(RelayUnderTest.jvmOptions(List.of("-XX:+UseParallelGC")))
        .containsExactly("-XX:TieredStopAtLevel=1", "-XX:+UseParallelGC");
  }

  private static RelayUnderTest.Setup setup(Integer lanes) {
    return new RelayUnderTest.Setup(
        "polling", "rabbitmq", "mark", lanes, null, "", List.of(), "", null);
  }
}
