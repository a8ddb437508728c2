package io.outbox.relay.spi;

/**
 * Creates {@link Sink}s of one {@link #type()}; registered in {@code
 * META-INF/services/io.outbox.relay.spi.SinkProvider}.
 */
public interface SinkProvider {

  /** The name users write as {@code sink.type}, e.g. {@code kafka}. */
  String type();

  /**
   * Checks the settings under {@code sink.<type>} and returns every problem, without connecting.
   * Called by {@code check-config} and before {@link #create}.
   */
  java.util.List<SettingsProblem> validate(PluginContext context);

  /** Creates a sink from valid settings. May connect; must not block for long. */
  Sink create(PluginContext context);

  /**
   * Which settings under {@code sink.<type>} hold secrets, keys relative to that subtree; by
   * default none is known and the relay decides by the key's name.
   */
  default SecretKeys secretKeys() {
    return SecretKeys.unknown();
  }
}
