package io.outbox.sink.nats;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkProvider;
import java.util.List;

/**
 * The {@code nats} sink: publishes each event as one JetStream message to the routed subject, with
 * its event id as {@code Nats-Msg-Id}, and gives each event's verdict from its publish ack.
 * Settings: {@link NatsSinkSettings}, defaults in this module's {@code reference.conf}.
 */
public final class NatsSinkProvider implements SinkProvider {

  /** The {@code sink.type} this provider serves. */
  public static final String TYPE = "nats";

  /** Called by {@link java.util.ServiceLoader}. */
  public NatsSinkProvider() {}

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public List<SettingsProblem> validate(PluginContext context) {
    return NatsSinkSettings.validate(context);
  }

  /**
   * Creates the sink; it connects lazily on the first publish or probe, so this never blocks on the
   * network.
   *
   * @throws IllegalArgumentException when the settings are invalid, listing every problem
   */
  @Override
  public Sink create(PluginContext context) {
    NatsSinkSettings settings = NatsSinkSettings.from(context);
    return new NatsSink(
        context.pipeline(), settings, new JetStreamLink(context.pipeline(), settings));
  }

  /**
   * {@code token} is a secret; {@code url} is not as a whole (the password in its user info is
   * hidden wherever it is shown, and a token there is refused); every other key holds no secret.
   */
  @Override
  public SecretKeys secretKeys() {
    return key -> key.equals("token") ? SecretKeys.Answer.SECRET : SecretKeys.Answer.NOT_SECRET;
  }
}
