package io.outbox.sink.rabbitmq;

import com.typesafe.config.ConfigFactory;
import io.outbox.relay.spi.PluginContext;
import java.time.Clock;

/** Plug-in contexts as the relay builds them: the user's HOCON over this module's defaults. */
final class Contexts {

  static final String PATH = "outbox-relay.pipelines.p.sink.rabbitmq";

  private Contexts() {}

  static PluginContext context(String hocon) {
    return new PluginContext(
        "p",
        ConfigFactory.parseString(hocon)
            .withFallback(
                ConfigFactory.defaultReference()
                    .getConfig("outbox-relay.pipeline-defaults.sink.rabbitmq")),
        PATH,
        4,
        500,
        Clock.systemUTC(),
        role -> {});
  }
}
