package io.outbox.sink.rabbitmq;

import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.support.SettingsSinkProvider;

/**
 * The {@code rabbitmq} sink: publishes each event as one persistent message to the routed exchange,
 * with {@code mandatory = true} and asynchronous publisher confirms. Settings: {@link
 * RabbitSinkSettings}, defaults in this module's {@code reference.conf}.
 *
 * <p>{@code password} and {@code trust-store-password} are secrets; {@code uri} is not as a whole
 * (the password in its user info is hidden wherever it is shown); exchange declarations under
 * {@code declare} are left to the relay's fallback by name; every other key holds no secret.
 */
public final class RabbitSinkProvider extends SettingsSinkProvider<RabbitSinkSettings> {

  /** The {@code sink.type} this provider serves. */
  public static final String TYPE = "rabbitmq";

  /** Called by {@link java.util.ServiceLoader}. */
  public RabbitSinkProvider() {
    super(TYPE, RabbitSinkSettings::read, RabbitSinkProvider::secret, RabbitSink::new);
  }

  private static SecretKeys.Answer secret(String key) {
    if (key.equals("password") || key.equals("trust-store-password")) {
      return SecretKeys.Answer.SECRET;
    }
    return key.startsWith("declare.") ? SecretKeys.Answer.UNKNOWN : SecretKeys.Answer.NOT_SECRET;
  }
}
