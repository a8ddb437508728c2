package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class RelayActivationTest {

  @Test
  void theLatestActiveLineOfTheBenchPipelineGivesTheTime() {
    String log =
        "2026-12-06T23:58:01.615Z INFO  [outbox-relay-bench] io.outbox.relay.pipeline.Pipeline -"
            + " pipeline bench: waiting to become the active instance\n"
            + "2026-12-06T23:58:02.275Z INFO  [outbox-relay-bench] io.outbox.relay.pipeline.Pipeline"
            + " - pipeline bench: active, 2 lane(s), batches of up to 500 events\n"
            + "2026-12-06T23:58:09.001Z WARN  [outbox-relay-bench] x - pipeline bench: the change"
            + " stream stopped; starting it again\n"
            + "2026-12-06T23:58:10.500Z INFO  [outbox-relay-bench] io.outbox.relay.pipeline.Pipeline"
            + " - pipeline bench: active, 2 lane(s), batches of up to 500 events\n";

    assertThat(RelayActivation.lastIn(log)).isEqualTo(Instant.parse("2026-12-06T23:58:10.500Z"));
  }

  @Test
  void aLogWithoutActivationGivesNoTime() {
    assertThat(
            RelayActivation.lastIn(
                "2026-12-06T23:58:01.615Z INFO  [outbox-relay-bench] p - pipeline bench: waiting"
                    + " to become the active instance\n"
                    + "2026-12-06T23:58:02.275Z INFO  [x] p - pipeline other: active, 2 lane(s)\n"))
        .isNull();
  }
}
