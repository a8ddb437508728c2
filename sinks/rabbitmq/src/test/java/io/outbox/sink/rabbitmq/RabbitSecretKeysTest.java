package io.outbox.sink.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SecretKeys.Answer;
import org.junit.jupiter.api.Test;

class RabbitSecretKeysTest {

  private final SecretKeys keys = new RabbitSinkProvider().secretKeys();

  @Test
  void thePasswordsAreSecretTheUriIsMaskedOnlyInItsUserInfo() {
    assertThat(keys.of("password")).isEqualTo(Answer.SECRET);
    assertThat(keys.of("trust-store-password")).isEqualTo(Answer.SECRET);
    assertThat(keys.of("uri")).isEqualTo(Answer.NOT_SECRET);
    assertThat(keys.of("trust-store")).isEqualTo(Answer.NOT_SECRET);
    assertThat(keys.of("declare.orders.arguments.x-token")).isEqualTo(Answer.UNKNOWN);
  }
}
