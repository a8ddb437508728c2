package io.outbox.relay.spi;

import java.util.List;

/**
 * Creates {@link Source}s of one {@link #type()}; registered in {@code
 * META-INF/services/io.outbox.relay.spi.SourceProvider}.
 */
public interface SourceProvider {

  /** The name users write as {@code source.type}, e.g. {@code polling}. */
  String type();

  /** Checks the settings under {@code source.<type>}; every problem, without connecting. */
  List<SettingsProblem> validate(PluginContext context);

  /** Creates a source from valid settings. Must not block for long. */
  Source create(PluginContext context, DatabaseSettings database);

  /**
   * Which settings under {@code source.<type>} hold secrets, keys relative to that subtree; by
   * default none is known and the relay decides by the key's name.
   */
  default SecretKeys secretKeys() {
    return SecretKeys.unknown();
  }

  /**
   * Which JDBC driver properties ({@code database.properties.<name>}, keys are the property names)
   * hold secrets, as the driver this source connects with declares them; by default none is known.
   */
  default SecretKeys databaseSecretKeys() {
    return SecretKeys.unknown();
  }
}
