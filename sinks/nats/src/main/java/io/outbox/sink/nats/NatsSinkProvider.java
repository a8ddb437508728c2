package io.outbox.sink.nats;

import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.support.SettingsSinkProvider;

/**
 * The {@code nats} sink: publishes each event as one JetStream message to the routed subject, with
 * its event id as {@code Nats-Msg-Id}, and gives each event's verdict from its publish ack.
 * Settings: {@link NatsSinkSettings}, defaults in this module's {@code reference.conf}.
 *
 * <p>{@code token} is a secret; {@code url} is not as a whole (the password in its user info is
 * hidden wherever it is shown, and a token there is refused); every other key holds no secret.
 */
public final class NatsSinkProvider extends SettingsSinkProvider<NatsSinkSettings> {

  /** The {@code sink.type} this provider serves. */
  public static final String TYPE = "nats";

  /** Called by {@link java.util.ServiceLoader}. */
  public NatsSinkProvider() {
    super(TYPE, NatsSinkSettings::read, SecretKeys.named("token"), NatsSink::new);
  }
}
