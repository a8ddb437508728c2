package io.outbox.relay.cli;

import io.outbox.relay.Relay;
import io.outbox.relay.StartupException;
import io.outbox.relay.config.RelaySettings;
import io.outbox.relay.http.HttpEndpoints;
import io.outbox.relay.pipeline.Pipeline;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code run}: runs every pipeline until SIGTERM or SIGINT, then stops cleanly within {@code
 * shutdown-timeout} and exits 0.
 */
@Command(
    name = "run",
    description = {
      "Runs every pipeline until SIGTERM/SIGINT; exits 0 after a clean stop.",
      "In-flight batches finish (or are released) within outbox-relay.shutdown-timeout."
    })
final class RunCommand implements Callable<Integer> {
  private static final Logger log = LoggerFactory.getLogger(RunCommand.class);

  /** The exit status after a pipeline died of an {@link Error} (EX_SOFTWARE). */
  static final int FATAL_EXIT = 70;

  @Mixin ConfigFileOption config;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws InterruptedException {
    RelaySettings settings = config.load().settings();
    GracefulStop stop = new GracefulStop(settings.shutdownTimeout(), Runtime.getRuntime()::halt);
    // Before anything starts: a signal during start-up waits for it, then stops cleanly.
    Thread hook = new Thread(stop, "outbox-relay-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    Relay relay;
    HttpEndpoints http;
    try {
      try {
        relay =
            Relay.start(
                settings,
                (pipeline, error) -> {
                  log.error(
                      "pipeline {} died of {}; outbox-relay exits with status {}",
                      pipeline,
                      error.getClass().getName(),
                      FATAL_EXIT);
                  stop.fatal(FATAL_EXIT);
                });
      } catch (StartupException e) {
        throw new CommandFailedException(e.getMessage());
      }
      try {
        http = HttpEndpoints.start(settings.http(), relay);
      } catch (RuntimeException e) {
        relay.close();
        throw new CommandFailedException(e.getMessage());
      }
    } catch (RuntimeException e) {
      stop.startFailed();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // A signal came in meanwhile; the hook finds nothing to stop.
      }
      throw e;
    }
    stop.started(
        () -> {
          relay.close();
          http.close();
        });
    log.info(
        "HTTP endpoints on {}:{} (/metrics, /health/live, /health/ready)",
        settings.http().host(),
        http.port());
    log.info(
        "outbox-relay running {} pipeline(s): {}",
        relay.pipelines().size(),
        String.join(", ", relay.pipelines().stream().map(Pipeline::name).toList()));
    stop.awaitStopped();
    return 0;
  }
}
