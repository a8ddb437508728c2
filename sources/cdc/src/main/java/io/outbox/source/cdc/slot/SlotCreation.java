package io.outbox.source.cdc.slot;

import io.outbox.admin.SlotCreationWait;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.support.PipelineThreads;
import io.outbox.source.cdc.CdcConnections;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the pipeline's logical replication slot (plugin pgoutput, which the engine streams with)
 * on a session of its own before the engine starts, so that the engine only ever starts on a slot
 * that exists and a start never leaves an engine waiting for one. PostgreSQL makes a logical slot
 * only once the transactions open when the creation began have ended; meanwhile the blocking
 * backends (pid, transaction age) are logged every {@link #REPORT_INTERVAL} and counted by {@link
 * #blocked()} (the gauge {@code outbox_relay_cdc_slot_creation_blocking_transactions}; {@code
 * status} reads the same with {@link SlotCreationWait}). A creation given up (source closed, lease
 * lost, interrupted) cancels its statement; a relay killed meanwhile leaves nothing behind either,
 * since its session checks every 2 s that the relay is still connected ({@code
 * client_connection_check_interval}).
 */
public final class SlotCreation {

  /** How often the wait is reported, and the session checks that its client is still there. */
  static final Duration REPORT_INTERVAL = Duration.ofSeconds(2);

  private static final Logger log = LoggerFactory.getLogger(SlotCreation.class);

  private final CdcConnections connections;
  private final Ticker ticker;
  private final String slot;
  private final String pipeline;
  private volatile int blocked;
  private volatile Statement running; // the creation's statement while it runs

  SlotCreation(CdcConnections connections, String slot, String pipeline, Ticker ticker) {
    this.connections = connections;
    this.ticker = ticker;
    this.slot = slot;
    this.pipeline = pipeline;
  }

  /** How many transactions the creation waited for at its last look; 0 when none runs. */
  int blocked() {
    return blocked;
  }

  /**
   * Creates the slot; returns once it exists.
   *
   * @param keepGoing asked every {@link #REPORT_INTERVAL}: {@code false} gives the creation up
   * @return the slot's consistent point (an LSN, {@code 0/1D8B7B8})
   * @throws InterruptedException when interrupted; the creation is then cancelled
   * @throws SourceException when PostgreSQL refuses to create it, or when given up (cancelled)
   */
  String create(BooleanSupplier keepGoing) throws InterruptedException {
    Connection session;
    Statement statement;
    try {
      session = connections.dedicatedNamed(SlotCreationWait.sessionName(pipeline));
      session.setNetworkTimeout(Runnable::run, 0); // it waits as long as the transactions run
      prepare(session);
      statement = session.createStatement();
    } catch (SQLException e) {
      throw failure("cannot open a session to create it", e);
    }
    running = statement;
    CompletableFuture<String> made = new CompletableFuture<>();
    Thread creating =
        PipelineThreads.daemon(
            pipeline,
            "outbox-relay-" + pipeline + "-cdc-slot-creation",
            () -> run(statement, made));
    creating.start();
    long started = ticker.nanoTime();
    boolean ended = false;
    try {
      while (true) {
        try {
          String lsn = made.get(REPORT_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
          ended = true;
          log.info(
              "pipeline {}: created replication slot {} (pgoutput), consistent at {}, in {} ms",
              pipeline,
              slot,
              lsn,
              TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - started));
          return lsn;
        } catch (ExecutionException e) {
          ended = true;
          Throwable cause = e.getCause();
          throw failure(cause.getMessage(), cause);
        } catch (TimeoutException e) {
          if (!keepGoing.getAsBoolean()) {
            throw failure("given up (the source is closing, or lost its lease)", null);
          }
          report(started);
        }
      }
    } finally {
      blocked = 0;
      running = null;
      if (!ended) {
        cancel(statement);
      }
      try {
        session.close();
      } catch (SQLException e) {
        log.debug("pipeline {}: closing the slot creation session: {}", pipeline, e.getMessage());
      }
    }
  }

  /**
   * Lets the creation wait as long as it must (no statement or lock timeout of the role), and makes
   * the server end it when the relay is gone (PostgreSQL 14 and later).
   */
  private static void prepare(Connection session) throws SQLException {
    try (Statement st = session.createStatement()) {
      st.execute("SET statement_timeout = 0");
      st.execute("SET lock_timeout = 0");
      st.execute(
          "SELECT set_config('client_connection_check_interval', '"
              + REPORT_INTERVAL.toMillis()
              + "', false) WHERE current_setting('server_version_num')::int >= 140000");
    }
  }

  private void run(Statement statement, CompletableFuture<String> made) {
    try (ResultSet rs =
        statement.executeQuery(
            "SELECT lsn::text FROM pg_create_logical_replication_slot('"
                + slot // a checked name: [a-z0-9_]{1,63}
                + "', 'pgoutput')")) {
      rs.next();
      made.complete(rs.getString(1));
    } catch (SQLException | RuntimeException e) {
      made.completeExceptionally(e);
    }
  }

  /** Logs what the creation waits for, and keeps the count for the gauge. */
  private void report(long started) {
    try (Connection c = connections.dedicated("slot creation watch")) {
      SlotCreationWait wait = SlotCreationWait.read(c, pipeline).orElse(null);
      List<SlotCreationWait.Blocker> blockers = wait == null ? List.of() : wait.blockers();
      blocked = blockers.size();
      long waited = TimeUnit.NANOSECONDS.toSeconds(ticker.nanoTime() - started);
      if (blockers.isEmpty()) {
        log.warn(
            "pipeline {}: creating replication slot {} has waited {} s; no transaction it waits"
                + " for is visible now (PostgreSQL may wait for its next record of the running"
                + " transactions; a role without pg_read_all_stats sees only its own sessions)",
            pipeline,
            slot,
            waited);
        return;
      }
      log.warn(
          "pipeline {}: creating replication slot {} has waited {} s for {} transaction(s) open"
              + " since before it began: {}. PostgreSQL makes a logical slot only once they end"
              + " (commit or roll them back, or end their sessions); streaming starts by itself"
              + " then",
          pipeline,
          slot,
          waited,
          blockers.size(),
          wait.describeBlockers());
    } catch (SQLException e) {
      log.warn(
          "pipeline {}: creating replication slot {} still waits; cannot read what for: {}",
          pipeline,
          slot,
          e.getMessage());
    }
  }

  /** Cancels a creation under way (the source closes); {@link #create} then fails at once. */
  public void cancel() {
    Statement s = running;
    if (s != null) {
      cancel(s);
    }
  }

  /** Cancels the creation's statement (a cancel request, as pg_cancel_backend). */
  private void cancel(Statement statement) {
    try {
      statement.cancel();
      log.info("pipeline {}: cancelled the creation of replication slot {}", pipeline, slot);
    } catch (SQLException e) {
      log.warn(
          "pipeline {}: cannot cancel the creation of replication slot {} (closing its session"
              + " instead): {}",
          pipeline,
          slot,
          e.getMessage());
    }
  }

  private SourceException failure(String why, Throwable cause) {
    return new SourceException(
        "pipeline "
            + pipeline
            + ": cannot create replication slot "
            + slot
            + " on "
            + connections.where()
            + ": "
            + why,
        cause);
  }
}
