package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import java.util.List;
import java.util.Map;
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
    assertThat(RelayUnderTest.jvmOptions(List.of(), Map.of()))
        .containsExactly("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");
    assertThat(RelayUnderTest.jvmOptions(List.of("-Xmx128m", "-XX:TieredStopAtLevel=4"), Map.of()))
        .containsExactly(
            "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m", "-XX:TieredStopAtLevel=4");
    // Options that merely mention GC are not collectors.
    assertThat(
            RelayUnderTest.jvmOptions(
                List.of("-XX:+UseGCOverheadLimit", "-XX:+DisableExplicitGC"), Map.of()))
        .containsExactly(
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-XX:+UseGCOverheadLimit",
            "-XX:+DisableExplicitGC");
  }

  @Test
  void aGivenCollectorReplacesTheDefaultOneSinceTwoStopTheJvm() {
    assertThat(RelayUnderTest.jvmOptions(List.of("-XX:+UseG1GC", "-Xmx1g"), Map.of()))
        .containsExactly("-XX:TieredStopAtLevel=1", "-XX:+UseG1GC", "-Xmx1g");
    assertThat(RelayUnderTest.jvmOptions(List.of("-XX:+UseZGC"), Map.of()))
        .containsExactly("-XX:TieredStopAtLevel=1", "-XX:+UseZGC");
  }

  @Test
  void aCollectorInTheVariablesJavaReadsItselfReplacesTheDefaultOneToo() {
    // The relay's JVM inherits the bench's environment.
    for (String variable : RelayUnderTest.JAVA_VARIABLES) {
      assertThat(RelayUnderTest.jvmOptions(List.of(), Map.of(variable, " -Xss1m -XX:+UseG1GC ")))
          .as(variable)
          .containsExactly("-XX:TieredStopAtLevel=1");
    }
    assertThat(RelayUnderTest.jvmOptions(List.of(), Map.of("JAVA_TOOL_OPTIONS", "-Xss1m")))
        .containsExactly("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");
  }

  private static RelayUnderTest.Setup setup(Integer lanes) {
    return new RelayUnderTest.Setup(
        "polling", "rabbitmq", "mark", lanes, null, "", List.of(), "", null);
  }
}
