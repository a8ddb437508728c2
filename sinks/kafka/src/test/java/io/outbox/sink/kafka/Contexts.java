package io.outbox.sink.kafka;

import io.outbox.relay.spi.PluginContext;
import io.outbox.testkit.SinkContexts;

/** Plug-in contexts as the relay builds them: the user's HOCON over this module's defaults. */
final class Contexts {

  static final String PATH = SinkContexts.path("kafka");

  private Contexts() {}

  static PluginContext context(String hocon) {
    return SinkContexts.context("kafka", hocon);
  }

  /** As {@link #context(String)}, for a pipeline of {@code lanes} lanes. */
  static PluginContext context(String hocon, int lanes) {
    return SinkContexts.context("kafka", hocon, lanes);
  }
}
