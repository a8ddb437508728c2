package io.outbox.sink.rabbitmq;

import io.outbox.testkit.SecretKeyAnswers;
import org.junit.jupiter.api.Test;

class RabbitSecretKeysTest {

  @Test
  void thePasswordsAreSecretTheUriIsMaskedOnlyInItsUserInfo() {
    SecretKeyAnswers.of(new RabbitSinkProvider().secretKeys())
        .secret("password", "trust-store-password")
        .notSecret("uri", "trust-store")
        .unknown("declare.orders.arguments.x-token");
  }
}
