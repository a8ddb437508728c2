package io.outbox.soak;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.sink.kafka.KafkaSinkProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SentTwiceTest {

  @Test
  void takesTheEventIdsAfterThePhraseOnly(@TempDir Path dir) throws Exception {
    UUID before = UUID.randomUUID();
    UUID a = UUID.randomUUID();
    UUID b = UUID.randomUUID();
    UUID elsewhere = UUID.randomUUID();
    Path log = dir.resolve("a.log");
    Files.write(
        log,
        List.of(
            "10:00:00.000 WARN TransactionalLane - pipeline soak lane 1: claim "
                + before
                + " ... so its events on [t-0] are delivered twice: "
                + KafkaSinkProvider.SENT_TWICE
                + " ["
                + a
                + ", "
                + b
                + "]",
            "10:00:01.000 INFO something else about " + elsewhere));

    assertThat(SentTwice.listedIn(List.of(log))).containsExactlyInAnyOrder(a, b);
  }
}
