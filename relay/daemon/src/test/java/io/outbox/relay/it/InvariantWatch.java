package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.pipeline.Pipeline;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Samples, every 100 ms while a test runs, what must never happen during a sink outage: a row with
 * a counted attempt, or a dead letter. Also notes whether the pipeline ever paused its sink.
 */
final class InvariantWatch implements AutoCloseable {
  private static final String SAMPLE =
      "SELECT (SELECT count(*) FROM outbox WHERE attempts > 0),"
          + " (SELECT count(*) FROM outbox_dead_letter)";
  private static final int MAX_VIOLATIONS = 10;

  private final RelayFixture fx;
  private final Pipeline pipeline;
  private final ScheduledExecutorService sampler =
      Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "invariant-watch"));
  private final List<String> violations = new CopyOnWriteArrayList<>();
  private volatile boolean sinkWentDown;
  private Connection connection; // sampler thread only

  InvariantWatch(RelayFixture fx, Pipeline pipeline) {
    this.fx = fx;
    this.pipeline = pipeline;
    sampler.scheduleWithFixedDelay(this::sample, 0, 100, TimeUnit.MILLISECONDS);
  }

  /** Whether {@link Pipeline#sinkAvailable()} was false at some sample. */
  boolean sinkWentDown() {
    return sinkWentDown;
  }

  /** Fails if any sample so far saw a counted attempt or a dead letter. */
  void assertClean() {
    assertThat(violations).as("rows with attempts > 0 or dead letters, while sampled").isEmpty();
  }

  private void sample() {
    if (!pipeline.sinkAvailable()) {
      sinkWentDown = true;
    }
    try {
      if (connection == null) {
        connection = fx.db.connect();
      }
      try (Statement st = connection.createStatement();
          ResultSet rs = st.executeQuery(SAMPLE)) {
        rs.next();
        long attempted = rs.getLong(1);
        long deadLetters = rs.getLong(2);
        if ((attempted > 0 || deadLetters > 0) && violations.size() < MAX_VIOLATIONS) {
          violations.add(
              attempted + " row(s) with attempts > 0, " + deadLetters + " dead letter(s)");
        }
      }
    } catch (SQLException e) {
      // A sampling hiccup proves nothing either way; the next sample tries again.
      closeConnection();
    }
  }

  private void closeConnection() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException e) {
        // already broken
      }
      connection = null;
    }
  }

  @Override
  public void close() {
    sampler.shutdownNow();
    try {
      sampler.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    closeConnection();
  }
}
