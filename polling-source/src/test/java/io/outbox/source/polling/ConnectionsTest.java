package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.schema.OutboxVerdicts;
import org.junit.jupiter.api.Test;

class ConnectionsTest {

  @Test
  void redactsPasswordsFromUrls() {
    assertThat(
            Connections.redact("jdbc:postgresql://db:5432/app?user=app&password=s3cret&ssl=true"))
        .isEqualTo("jdbc:postgresql://db:5432/app?user=app&password=******&ssl=true");
    assertThat(Connections.redact("jdbc:postgresql://app:s3cret@db/app"))
        .isEqualTo("jdbc:postgresql://app:******@db/app");
    assertThat(Connections.redact("jdbc:postgresql://db/app"))
        .isEqualTo("jdbc:postgresql://db/app");
  }

  @Test
  void errorTextFitsTheLastErrorColumn() {
    assertThat(OutboxVerdicts.clean("a\0b")).isEqualTo("a b");
    assertThat(OutboxVerdicts.clean("x".repeat(5000))).hasSize(2000).endsWith("...");
  }
}
