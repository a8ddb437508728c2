package io.outbox.relay.config;

import com.typesafe.config.Config;
import java.util.Objects;

/**
 * A configuration that was read and validated.
 *
 * @param source where it came from (the file's path), for messages
 * @param settings the typed settings
 * @param effective the {@code outbox-relay} subtree as used: the user's values over every reference
 *     default, with {@code pipeline-defaults} merged into each pipeline (and removed); secrets are
 *     NOT masked here, see {@link EffectiveSettingsPrinter}
 * @param secrets which of its keys hold secrets (the installed plug-ins' answers)
 */
public record LoadedConfig(
    String source, RelaySettings settings, Config effective, SecretMasker secrets) {
  public LoadedConfig {
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(effective, "effective");
    Objects.requireNonNull(secrets, "secrets");
  }
}
