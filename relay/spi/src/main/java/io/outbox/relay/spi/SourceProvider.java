package io.outbox.relay.spi;

import java.util.List;

/**
 * Creates {@link Source}s of one {@link #type()}; registered in {@code
 * META-INF/services/io.outbox.relay.spi.SourceProvider}.
 */
public interface SourceProvider {

  /** The name users write as {@code source.type}, e.g. {@code polling}. */
  String type();

  /** Checks the settings under {@code source.<type>}; every problem, without connecting. */
  List<SettingsProblem> validate(PluginContext context);

  /** Creates a source from valid settings. Must not block for long. */
  Source create(PluginContext context, DatabaseSettings database);
}
