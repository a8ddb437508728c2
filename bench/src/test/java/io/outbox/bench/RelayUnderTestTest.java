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

  private static RelayUnderTest.Setup setup(Integer lanes) {
    return new RelayUnderTest.Setup(
        "polling", "rabbitmq", "mark", lanes, null, "", List.of(), "", null);
  }
}
