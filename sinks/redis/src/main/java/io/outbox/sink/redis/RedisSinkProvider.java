package io.outbox.sink.redis;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkProvider;
import java.util.List;

/**
 * The {@code redis} sink: adds each event as one entry to the routed Redis stream (XADD), a batch
 * as one pipeline, skipping re-sends within {@code dedup-window}. Settings: {@link
 * RedisSinkSettings}, defaults in this module's {@code reference.conf}.
 */
public final class RedisSinkProvider implements SinkProvider {

  /** The {@code sink.type} this provider serves. */
  public static final String TYPE = "redis";

  /** Called by {@link java.util.ServiceLoader}. */
  public RedisSinkProvider() {}

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public List<SettingsProblem> validate(PluginContext context) {
    return RedisSinkSettings.validate(context);
  }

  /**
   * Creates the sink; it connects lazily on the first publish or probe, so this never blocks on the
   * network.
   *
   * @throws IllegalArgumentException when the settings are invalid, listing every problem
   */
  @Override
  public Sink create(PluginContext context) {
    RedisSinkSettings settings = RedisSinkSettings.from(context);
    return new RedisSink(
        context.pipeline(), settings, new RedisConnections(context.pipeline(), settings));
  }

  /**
   * {@code password} is a secret; {@code uri} is not as a whole (the password in its user info is
   * hidden wherever it is shown); every other key holds no secret.
   */
  @Override
  public SecretKeys secretKeys() {
    return key -> key.equals("password") ? SecretKeys.Answer.SECRET : SecretKeys.Answer.NOT_SECRET;
  }
}
