package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkProvider;
import io.outbox.relay.spi.Ticker;
import java.time.Clock;
import java.util.ServiceLoader;

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
    return context(type, hocon, 4);
  }

  /** As {@link #context(String, String)}, for a pipeline of {@code lanes} lanes. */
  public static PluginContext context(String type, String hocon, int lanes) {
    return context(type, hocon, lanes, Clock.systemUTC(), Ticker.SYSTEM);
  }

  /**
   * As {@link #context(String, String, int)}, on the time a test drives ({@link FakeTime}, as both
   * {@code clock} and {@code ticker}).
   */
  public static PluginContext context(
      String type, String hocon, int lanes, Clock clock, Ticker ticker) {
    return new PluginContext(
        PIPELINE,
        ConfigFactory.parseString(hocon)
            .withFallback(
                ConfigFactory.defaultReference()
                    .getConfig("outbox-relay.pipeline-defaults.sink." + type)),
        path(type),
        lanes,
        500,
        clock,
        ticker,
        role -> {});
  }

  /** The provider of sink {@code type} as the relay finds it: through {@link ServiceLoader}. */
  public static SinkProvider provider(String type) {
    return ServiceLoader.load(SinkProvider.class).stream()
        .map(ServiceLoader.Provider::get)
        .filter(p -> p.type().equals(type))
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no SinkProvider of type " + type));
  }

  /**
   * A sink of {@code type} made as the relay makes it: its {@link #provider}, the {@link #context}
   * of {@code hocon}, which must validate without a problem, then {@code create}.
   */
  public static Sink sink(String type, String hocon) {
    SinkProvider provider = provider(type);
    PluginContext context = context(type, hocon);
    assertThat(provider.validate(context)).as("problems of " + path(type)).isEmpty();
    return provider.create(context);
  }
}
