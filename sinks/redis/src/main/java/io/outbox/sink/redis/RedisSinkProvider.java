package io.outbox.sink.redis;

import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.support.SettingsSinkProvider;

/**
 * The {@code redis} sink: adds each event as one entry to the routed Redis stream (XADD), a batch
 * as one pipeline, skipping re-sends within {@code dedup-window}. Settings: {@link
 * RedisSinkSettings}, defaults in this module's {@code reference.conf}.
 *
 * <p>{@code password} is a secret; {@code uri} is not as a whole (the password in its user info is
 * hidden wherever it is shown); every other key holds no secret.
 */
public final class RedisSinkProvider extends SettingsSinkProvider<RedisSinkSettings> {

  /** The {@code sink.type} this provider serves. */
  public static final String TYPE = "redis";

  /** Called by {@link java.util.ServiceLoader}. */
  public RedisSinkProvider() {
    super(TYPE, RedisSinkSettings::read, SecretKeys.named("password"), RedisSink::new);
  }
}
