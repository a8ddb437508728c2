package io.outbox.relay;

import com.typesafe.config.Config;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.config.Plugins;
import io.outbox.relay.config.RelaySettings;
import io.outbox.relay.pipeline.EventTracing;
import io.outbox.relay.pipeline.Pipeline;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running daemon: one {@link Pipeline} per configured pipeline, with the source and sink
 * plug-ins found through {@link Plugins} by their {@code type}, their meters in one Prometheus
 * registry, and a thread that refreshes the pipelines' backlog figures.
 */
public final class Relay implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Relay.class);

  private static final Duration REPORT_INTERVAL = Duration.ofMinutes(1);

  /** How long a stop waits at most for the last spans to be exported. */
  private static final Duration TRACING_FLUSH = Duration.ofSeconds(5);

  private final RelaySettings settings;
  private final List<Pipeline> pipelines;
  private final PrometheusMeterRegistry registry;
  private final JvmGcMetrics gcMetrics;
  private final TracingSdk tracing;
  private final Thread reporter;
  private final Thread backlogReader;

  private Relay(
      RelaySettings settings,
      List<Pipeline> pipelines,
      PrometheusMeterRegistry registry,
      JvmGcMetrics gcMetrics,
      TracingSdk tracing) {
    this.settings = settings;
    this.pipelines = Collections.unmodifiableList(pipelines);
    this.registry = registry;
    this.gcMetrics = gcMetrics;
    this.tracing = tracing;
    this.reporter = new Thread(this::report, "outbox-relay-report");
    reporter.setDaemon(true);
    this.backlogReader = new Thread(this::readBacklogs, "outbox-relay-backlog");
    backlogReader.setDaemon(true);
  }

  /** Refreshes every pipeline's backlog figures every {@code http.backlog-interval}. */
  private void readBacklogs() {
    try {
      while (true) {
        for (Pipeline p : pipelines) {
          p.refreshBacklog();
        }
        Thread.sleep(settings.http().backlogInterval().toMillis());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      log.error("backlog reader stopped: the backlog gauges are no longer refreshed", e);
    }
  }

  /** Logs, once a minute, what each active pipeline did since the last report. */
  private void report() {
    long[][] last = new long[pipelines.size()][];
    try {
      while (true) {
        Thread.sleep(REPORT_INTERVAL.toMillis());
        for (int i = 0; i < pipelines.size(); i++) {
          Pipeline p = pipelines.get(i);
          var s = p.stats();
          long[] now = {s.published(), s.retried(), s.deadLettered()};
          long[] before = last[i] == null ? new long[3] : last[i];
          last[i] = now;
          if (p.role() == io.outbox.relay.spi.PluginContext.Role.ACTIVE) {
            log.info(
                "pipeline {}: last {}s published {}, retried {}, dead-lettered {}; sink {}",
                p.name(),
                REPORT_INTERVAL.toSeconds(),
                now[0] - before[0],
                now[1] - before[1],
                now[2] - before[2],
                p.sinkAvailable() ? "available" : "unavailable");
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Creates every pipeline's source and sink and starts the pipelines. */
  public static Relay start(RelaySettings settings) {
    return start(settings, (pipeline, error) -> {});
  }

  /**
   * Creates every pipeline's source and sink and starts the pipelines; {@code fatal} is told when a
   * pipeline dies of an {@link Error} (the daemon exits non-zero on it).
   */
  public static Relay start(RelaySettings settings, Pipeline.FatalListener fatal) {
    // The daemon's one clock and one ticker: every pipeline and plug-in reads time from these (no
    // class of the relay asks the system itself), so that a test can hand in time it drives.
    Clock clock = Clock.systemUTC();
    Ticker ticker = Ticker.SYSTEM;
    Plugins plugins = Plugins.load(Thread.currentThread().getContextClassLoader());
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    TracingSdk tracing = TracingSdk.start(settings.tracing());
    List<Pipeline> pipelines = new ArrayList<>();
    try {
      for (PipelineSettings p : settings.pipelines().values()) {
        pipelines.add(
            create(
                p, plugins, registry, clock, ticker, tracing.forPipeline(p.name(), p.sinkType())));
      }
    } catch (RuntimeException e) {
      for (Pipeline p : pipelines) {
        p.stop(Duration.ofSeconds(5));
      }
      registry.close();
      tracing.close(Duration.ofSeconds(1));
      throw e;
    }
    JvmGcMetrics gc = bindProcessMetrics(registry);
    pipelines.forEach(p -> p.onFatal(fatal));
    pipelines.forEach(Pipeline::start);
    Relay relay = new Relay(settings, pipelines, registry, gc, tracing);
    relay.reporter.start();
    relay.backlogReader.start();
    return relay;
  }

  private static JvmGcMetrics bindProcessMetrics(PrometheusMeterRegistry registry) {
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    BuildInfo.register(registry);
    JvmGcMetrics gc = new JvmGcMetrics();
    gc.bindTo(registry);
    return gc;
  }

  private static Pipeline create(
      PipelineSettings p,
      Plugins plugins,
      PrometheusMeterRegistry registry,
      Clock clock,
      Ticker ticker,
      EventTracing tracing) {
    // The source reports its role before the pipeline exists: forward once it does.
    AtomicReference<Pipeline> created = new AtomicReference<>();
    PluginContext.RoleListener roles =
        role -> {
          log.debug("pipeline {}: source reports role {}", p.name(), role);
          Pipeline pipeline = created.get();
          if (pipeline != null) {
            pipeline.roleReported(role);
          }
        };
    // The config validation has already checked that both types are installed.
    Source source =
        plugins
            .source(p.sourceType())
            .orElseThrow(() -> unknown("source", p.sourceType()))
            .create(
                context(p, "source", p.sourceType(), p.sourceSettings(), roles, clock, ticker),
                p.database());
    Sink sink;
    try {
      sink =
          plugins
              .sink(p.sinkType())
              .orElseThrow(() -> unknown("sink", p.sinkType()))
              .create(context(p, "sink", p.sinkType(), p.sinkSettings(), roles, clock, ticker));
    } catch (RuntimeException e) {
      source.close(Duration.ofSeconds(5));
      throw e;
    }
    Pipeline pipeline;
    try {
      pipeline = new Pipeline(p, source, sink, registry, clock, ticker, tracing);
    } catch (IllegalArgumentException e) { // a source and sink that cannot work together
      sink.close(Duration.ofSeconds(5));
      source.close(Duration.ofSeconds(5));
      throw new StartupException(e.getMessage());
    }
    created.set(pipeline);
    try {
      checkStaticDestinations(pipeline, sink);
      checkSchema(pipeline, source);
    } catch (RuntimeException e) {
      pipeline.stop(Duration.ofSeconds(5)); // never started: closes the sink and the source
      throw e;
    }
    return pipeline;
  }

  private static PluginContext context(
      PipelineSettings p,
      String kind,
      String type,
      Config settings,
      PluginContext.RoleListener roles,
      Clock clock,
      Ticker ticker) {
    return new PluginContext(
        p.name(),
        settings,
        p.path() + "." + kind + "." + type,
        p.lanes(),
        p.batchSize(),
        clock,
        ticker,
        roles);
  }

  /** Fails fast when the broker says a destination every event of the pipeline uses is missing. */
  private static void checkStaticDestinations(Pipeline pipeline, Sink sink) {
    Set<String> destinations = pipeline.staticDestinations();
    if (destinations.isEmpty()) {
      return;
    }
    List<String> missing = sink.missingDestinations(destinations);
    if (!missing.isEmpty()) {
      throw new StartupException("pipeline " + pipeline.name() + ": " + String.join("; ", missing));
    }
  }

  /** Fails fast when the database says the pipeline's tables cannot be worked with. */
  private static void checkSchema(Pipeline pipeline, Source source) {
    List<String> problems = source.schemaProblems();
    if (!problems.isEmpty()) {
      throw new StartupException(
          "pipeline " + pipeline.name() + ": " + String.join("; ", problems));
    }
  }

  private static IllegalArgumentException unknown(String kind, String type) {
    return new IllegalArgumentException("no " + kind + " plug-in of type '" + type + "'");
  }

  public List<Pipeline> pipelines() {
    return pipelines;
  }

  /** Every meter of the relay: the pipelines' and the process's. */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** Stops every pipeline in parallel within the configured {@code shutdown-timeout}. */
  @Override
  public void close() {
    close(settings.shutdownTimeout());
  }

  /** Stops every pipeline in parallel within {@code timeout}. */
  public void close(Duration timeout) {
    reporter.interrupt();
    backlogReader.interrupt();
    List<Thread> stoppers = new ArrayList<>();
    for (Pipeline p : pipelines) {
      Thread t = new Thread(() -> p.stop(timeout), "outbox-relay-stop-" + p.name());
      stoppers.add(t);
      t.start();
    }
    try {
      for (Thread t : stoppers) {
        t.join(timeout.toMillis() + 1000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      gcMetrics.close();
      // After the pipelines: their last spans ended with their last batches.
      tracing.close(TRACING_FLUSH.compareTo(timeout) < 0 ? TRACING_FLUSH : timeout);
    }
  }
}
