package io.outbox.relay.config;

import java.util.List;

/** The test plug-ins, as the loader finds them. */
final class FakePlugins {
  private FakePlugins() {}

  static Plugins plugins() {
    return Plugins.of(List.of(new FakeSourceProvider()), List.of(new FakeSinkProvider()));
  }

  static SecretMasker secrets() {
    return plugins().secrets();
  }
}
