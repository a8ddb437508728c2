package io.outbox.testkit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.HashMap;
import java.util.Map;

/** The settings block of a source ({@code source.<type>}) as its tests build it. */
public final class SourceSettings {
  private SourceSettings() {}

  /**
   * Settings of source {@code type}: {@code fast} (the test's short intervals), then {@code
   * overrides} over them, then the defaults of reference.conf ({@code
   * outbox-relay.pipeline-defaults.source.<type>}).
   */
  public static Config of(String type, Map<String, ?> fast, Map<String, ?> overrides) {
    Map<String, Object> merged = new HashMap<>(fast);
    merged.putAll(overrides);
    return ConfigFactory.parseMap(merged)
        .withFallback(
            ConfigFactory.defaultReference()
                .getConfig("outbox-relay.pipeline-defaults.source." + type));
  }
}
