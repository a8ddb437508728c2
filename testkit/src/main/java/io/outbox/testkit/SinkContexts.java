package io.outbox.testkit;

import com.typesafe.config.ConfigFactory;
import io.outbox.relay.spi.PluginContext;
import java.time.Clock;

/** Plug-in contexts as the relay builds them for a sink: the user's HOCON over its defaults. */
public final class SinkContexts {

  /** The pipeline every context belongs to. */
  public static final String PIPELINE = "p";

  private SinkContexts() {}

  /** The full key path of {@code sink.<type>} in these contexts. */
  public static String path(String type) {
    return "outbox-relay.pipelines." + PIPELINE + ".sink." + type;
  }

  /**
   * The context of sink {@code type}: {@code hocon} over {@code outbox-relay.pipeline-defaults.
   * sink.<type>} of the {@code reference.conf} files on the class path; 4 lanes, batches of 500.
   */
  public static PluginContext context(String type, String hocon) {
    return new PluginContext(
        PIPELINE,
        ConfigFactory.parseString(hocon)
            .withFallback(
                ConfigFactory.defaultReference()
                    .getConfig("outbox-relay.pipeline-defaults.sink." + type)),
        path(type),
        4,
        500,
        Clock.systemUTC(),
        role -> {});
  }
}
