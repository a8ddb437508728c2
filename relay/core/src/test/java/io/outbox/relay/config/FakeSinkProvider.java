package io.outbox.relay.config;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A test-only sink plug-in, type {@code fake}, registered in META-INF/services; its settings
 * ({@code sink.fake}, with the free-form map {@code client}) come from the test reference.conf.
 */
public final class FakeSinkProvider implements SinkProvider {

  @Override
  public String type() {
    return "fake";
  }

  @Override
  public List<SettingsProblem> validate(PluginContext context) {
    List<SettingsProblem> problems = new ArrayList<>();
    if (context.settings().getString("servers").isBlank()) {
      problems.add(new SettingsProblem(context.pathOf("servers"), "must not be blank"));
    }
    return problems;
  }

  /**
   * Answers like a Kafka-style client that declares its property types: the private key and the
   * JAAS line are secrets, a trust store's certificates and a token endpoint URL are not (although
   * the URL's name contains "token"); other client properties are unknown to it.
   */
  @Override
  public SecretKeys secretKeys() {
    Map<String, SecretKeys.Answer> client =
        Map.of(
            "ssl.keystore.key", SecretKeys.Answer.SECRET,
            "sasl.jaas.config", SecretKeys.Answer.SECRET,
            "ssl.truststore.certificates", SecretKeys.Answer.NOT_SECRET,
            "sasl.oauthbearer.token.endpoint.url", SecretKeys.Answer.NOT_SECRET,
            "client.id", SecretKeys.Answer.NOT_SECRET);
    return key -> {
      if (key.startsWith("client.")) {
        return client.getOrDefault(key.substring("client.".length()), SecretKeys.Answer.UNKNOWN);
      }
      return key.equals("servers") || key.equals("uri")
          ? SecretKeys.Answer.NOT_SECRET
          : SecretKeys.Answer.UNKNOWN;
    };
  }

  @Override
  public Sink create(PluginContext context) {
    throw new UnsupportedOperationException("validation-only test plug-in");
  }
}
