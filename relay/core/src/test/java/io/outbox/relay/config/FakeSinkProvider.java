package io.outbox.relay.config;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkProvider;
import java.util.ArrayList;
import java.util.List;

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

  @Override
  public Sink create(PluginContext context) {
    throw new UnsupportedOperationException("validation-only test plug-in");
  }
}
