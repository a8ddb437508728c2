package io.outbox.relay.cli;

import io.outbox.relay.Relay;
import io.outbox.relay.config.RelaySettings;
import io.outbox.relay.http.HttpEndpoints;
import io.outbox.relay.pipeline.Pipeline;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
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

  @Mixin ConfigFileOption config;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws InterruptedException {
    RelaySettings settings = config.load().settings();
    Relay relay = Relay.start(settings);
    HttpEndpoints http;
    try {
      http = HttpEndpoints.start(settings.http(), relay);
    } catch (RuntimeException e) {
      relay.close();
      throw new CommandFailedException(e.getMessage());
    }
    log.info(
        "HTTP endpoints on {}:{} (/metrics, /health/live, /health/ready)",
        settings.http().host(),
        http.port());
    log.info(
        "outbox-relay running {} pipeline(s): {}",
        relay.pipelines().size(),
        String.join(", ", relay.pipelines().stream().map(Pipeline::name).toList()));
    CountDownLatch stopped = new CountDownLatch(1);
    AtomicBoolean returning = new AtomicBoolean();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  log.info(
                      "outbox-relay stopping (shutdown-timeout {})", settings.shutdownTimeout());
                  relay.close();
                  http.close();
                  log.info("outbox-relay stopped");
                  stopped.countDown();
                  if (!returning.get()) {
                    // Stopped by a signal: a clean stop exits 0, not the JVM's 128+signal.
                    System.out.flush();
                    System.err.flush();
                    Runtime.getRuntime().halt(0);
                  }
                },
                "outbox-relay-shutdown"));
    stopped.await();
    returning.set(true);
    return 0;
  }
}
