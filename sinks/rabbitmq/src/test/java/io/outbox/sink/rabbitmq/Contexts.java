package io.outbox.sink.rabbitmq;

import io.outbox.relay.spi.PluginContext;
import io.outbox.testkit.SinkContexts;

/** Plug-in contexts as the relay builds them: the user's HOCON over this module's defaults. */
final class Contexts {

  static final String PATH = SinkContexts.path("rabbitmq");

  private Contexts() {}

  static PluginContext context(String hocon) {
    return SinkContexts.context("rabbitmq", hocon);
  }
}
