package io.outbox.relay.config;

import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A test-only source plug-in, type {@code fake}, registered in META-INF/services; its settings
 * ({@code source.fake}) come from the test reference.conf. It rejects a {@code poll-interval} over
 * one minute, to exercise plug-in validation.
 */
public final class FakeSourceProvider implements SourceProvider {

  @Override
  public String type() {
    return "fake";
  }

  @Override
  public List<SettingsProblem> validate(PluginContext context) {
    List<SettingsProblem> problems = new ArrayList<>();
    if (context.settings().getDuration("poll-interval").toSeconds() > 60) {
      problems.add(
          new SettingsProblem(
              context.pathOf("poll-interval"),
              "must be at most 1m, not " + context.settings().getString("poll-interval")));
    }
    return problems;
  }

  /** Answers like a JDBC driver that declares two secret properties. */
  @Override
  public SecretKeys databaseSecretKeys() {
    Map<String, SecretKeys.Answer> declared =
        Map.of(
            "password", SecretKeys.Answer.SECRET,
            "sslpassword", SecretKeys.Answer.SECRET,
            "sslkey", SecretKeys.Answer.NOT_SECRET,
            "sslpasswordcallback", SecretKeys.Answer.NOT_SECRET,
            "sslmode", SecretKeys.Answer.NOT_SECRET);
    return key -> declared.getOrDefault(key, SecretKeys.Answer.UNKNOWN);
  }

  @Override
  public Source create(PluginContext context, DatabaseSettings database) {
    throw new UnsupportedOperationException("validation-only test plug-in");
  }
}
