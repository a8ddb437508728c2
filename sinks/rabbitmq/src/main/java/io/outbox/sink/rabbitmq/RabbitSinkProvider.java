package io.outbox.sink.rabbitmq;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkProvider;
import java.util.List;
import java.util.Set;

/**
 * The {@code rabbitmq} sink: publishes each event as one persistent message to the routed exchange,
 * with {@code mandatory = true} and asynchronous publisher confirms. Settings: {@link
 * RabbitSinkSettings}, defaults in this module's {@code reference.conf}.
 */
public final class RabbitSinkProvider implements SinkProvider {

  /** The {@code sink.type} this provider serves. */
  public static final String TYPE = "rabbitmq";

  /** The passwords among the settings; the URI's user info is hidden wherever a URI is shown. */
  private static final Set<String> SECRETS = Set.of("password", "trust-store-password");

  /** Called by {@link java.util.ServiceLoader}. */
  public RabbitSinkProvider() {}

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public List<SettingsProblem> validate(PluginContext context) {
    return RabbitSinkSettings.validate(context);
  }

  /**
   * Creates the sink; it connects lazily on the first publish or probe, so this never blocks on the
   * network.
   *
   * @throws IllegalArgumentException when the settings are invalid, listing every problem
   */
  @Override
  public Sink create(PluginContext context) {
    RabbitSinkSettings settings = RabbitSinkSettings.from(context);
    return new RabbitSink(
        context.pipeline(), settings, new RabbitConnection(context.pipeline(), settings));
  }

  /**
   * {@code password} and {@code trust-store-password} are secrets; {@code uri} is not as a whole
   * (the password in its user info is hidden wherever it is shown); exchange declarations under
   * {@code declare} are left to the relay's fallback by name; every other key holds no secret.
   */
  @Override
  public SecretKeys secretKeys() {
    return key -> {
      if (SECRETS.contains(key)) {
        return SecretKeys.Answer.SECRET;
      }
      return key.startsWith("declare.") ? SecretKeys.Answer.UNKNOWN : SecretKeys.Answer.NOT_SECRET;
    };
  }
}
