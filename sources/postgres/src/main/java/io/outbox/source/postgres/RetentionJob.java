package io.outbox.source.postgres;

import io.outbox.admin.OutboxStatus;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.support.PipelineThreads;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The background thread that applies a {@link DatabaseSettings.Retention} to one pipeline's tables:
 * every {@code interval}, while the pipeline's instance is active, it deletes old published rows
 * and old dead letters in batches of {@code batchSize} ({@link Retention}), each batch its own
 * short transaction on its own connection, until a batch comes back short. It never holds a lock
 * the relay's claims wait for; a database failure is logged and tried again next round.
 *
 * <p>Sources start one after they became active ({@link #start}) and close it when they stop.
 */
public final class RetentionJob implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(RetentionJob.class);
  private static final Duration REPORT_EVERY = Duration.ofHours(1);

  /**
   * How long emptying a partition waits for the claims in flight to end (one batch's publish); when
   * they do not, the partition waits for the next round.
   */
  static final Duration PAUSE_WAIT = Duration.ofSeconds(5);

  /** Opens a connection for the job; it is used in auto-commit mode and closed by the job. */
  @FunctionalInterface
  public interface ConnectionSource {
    Connection open() throws SQLException;
  }

  /** Rows one round deleted, and the partitions it emptied. */
  public record Round(
      long published,
      long deadLetters,
      List<Retention.Emptied> emptied,
      Retention.EarlierRound earlierRound) {

    /** A round of a plain outbox. */
    public Round(long published, long deadLetters) {
      this(published, deadLetters, List.of(), null);
    }
  }

  private final Retention retention;
  private final String pipeline;
  private final DatabaseSettings.Retention policy;
  private final ConnectionSource connections;
  private final BooleanSupplier active;
  private final OutstandingClaims claims; // null: no claim transactions to pause (tests)
  private final DatabaseSettings.Partitions layout;
  private Retention.EarlierRound reported; // only the job's thread touches it
  private volatile long earlierRoundRows = -1; // -1: not counted (plain, or no round yet)
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition wake = lock.newCondition();
  private final Thread thread;
  private volatile boolean stopping;
  private Connection connection; // only the job's thread touches it
  private boolean failing; // only the job's thread touches it
  private long unreportedPublished; // only the job's thread touches it
  private long unreportedDead; // only the job's thread touches it
  private long lastReport; // ticker.nanoTime() of the last info line, 0 before it
  private final Ticker ticker;

  /**
   * A job that is not started: {@link #start} starts one; tests call {@link #round()}. Emptying a
   * partition pauses {@code claims}' transactions first ({@code null}: none to pause).
   */
  RetentionJob(
      OutboxTables tables,
      String pipeline,
      DatabaseSettings.Retention policy,
      DatabaseSettings.Partitions layout,
      ConnectionSource connections,
      BooleanSupplier active,
      OutstandingClaims claims,
      Ticker ticker) {
    this.claims = claims;
    this.layout = Objects.requireNonNull(layout, "layout");
    this.retention = Retention.of(tables);
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.pipeline = Objects.requireNonNull(pipeline, "pipeline");
    this.policy = Objects.requireNonNull(policy, "policy");
    this.connections = Objects.requireNonNull(connections, "connections");
    this.active = Objects.requireNonNull(active, "active");
    this.thread =
        PipelineThreads.daemon(pipeline, "outbox-relay-" + pipeline + "-retention", this::loop);
  }

  /**
   * Starts the job's thread; the first round runs at once.
   *
   * @param tables the pipeline's outbox and dead-letter tables
   * @param pipeline the pipeline name: only its dead letters are deleted
   * @param policy ages, batch size and interval; must be {@link
   *     DatabaseSettings.Retention#enabled()}
   * @param layout the layout the pipeline is configured with: with {@code partitions.size} known,
   *     each round also looks for rows of an earlier round of ids in the partition taking ids
   * @param connections where the job's connection comes from (opened again after a failure)
   * @param active whether this instance is the pipeline's active one; rounds are skipped while not
   * @param claims the source's claims, whose transactions emptying a partition pauses
   * @param ticker when the next round is due and the summary lines, on the relay's ticker
   */
  public static RetentionJob start(
      OutboxTables tables,
      String pipeline,
      DatabaseSettings.Retention policy,
      DatabaseSettings.Partitions layout,
      ConnectionSource connections,
      BooleanSupplier active,
      OutstandingClaims claims,
      Ticker ticker) {
    if (!policy.enabled()) {
      throw new IllegalArgumentException("retention is off for pipeline " + pipeline);
    }
    RetentionJob job =
        new RetentionJob(tables, pipeline, policy, layout, connections, active, claims, ticker);
    job.thread.start();
    return job;
  }

  private void loop() {
    log.info(
        "pipeline {}: retention deletes published rows of {} older than {} and dead letters of {}"
            + " older than {}, at most {} rows per statement, every {}",
        pipeline,
        retention.tables().displayTable(),
        age(policy.published()),
        retention.tables().displayDeadLetterTable(),
        age(policy.deadLetters()),
        policy.batchSize(),
        age(policy.interval()));
    while (!stopping) {
      if (active.getAsBoolean()) {
        runRound();
      }
      awaitNextRound();
    }
    closeConnection();
  }

  /** One round; failures are logged (once per streak) and the connection opened again later. */
  private void runRound() {
    try {
      Round round = round();
      if (failing) {
        log.info("pipeline {}: retention works again", pipeline);
        failing = false;
      }
      report(round);
    } catch (SQLException | RuntimeException e) {
      closeConnection();
      if (!failing) {
        log.warn(
            "pipeline {}: retention failed, trying again in {}: {}",
            pipeline,
            age(policy.interval()),
            e.getMessage());
        failing = true;
      }
    }
  }

  /**
   * Every round at debug level; at info level the first deletes and then one summary an hour at
   * most, so that a pipeline that deletes a few rows every minute logs 24 lines a day, not 1,440.
   */
  private void report(Round round) {
    log.debug(
        "pipeline {}: retention round deleted {} published row(s) and {} dead letter(s)",
        pipeline,
        round.published(),
        round.deadLetters());
    unreportedPublished += round.published();
    unreportedDead += round.deadLetters();
    long now = ticker.nanoTime();
    boolean first = lastReport == 0;
    if (unreportedPublished + unreportedDead > 0
        && (first || now - lastReport >= REPORT_EVERY.toNanos())) {
      log.info(
          "pipeline {}: retention deleted {} published row(s) and {} dead letter(s) {}",
          pipeline,
          unreportedPublished,
          unreportedDead,
          first ? "since it started" : "since its last report");
      unreportedPublished = 0;
      unreportedDead = 0;
      lastReport = now == 0 ? 1 : now;
    }
  }

  /**
   * Deletes until both kinds are done (a batch came back short), the job stops or the instance is
   * no longer active; returns what it deleted. Runs on the job's thread (tests may call it directly
   * on a job that was never started).
   */
  Round round() throws SQLException {
    Connection c = connection();
    long published = 0;
    long dead = 0;
    boolean morePublished = !policy.published().isZero();
    boolean moreDead = !policy.deadLetters().isZero();
    int batch = policy.batchSize();
    List<Retention.Emptied> emptied = List.of();
    Retention.EarlierRound earlier = null;
    if (OutboxLayout.partitioned(c, retention.tables())) {
      // Settling by position, read once for the round's partition checks.
      String xmin = OutboxStatus.settledXmin(c, retention.tables(), pipeline);
      emptied = retention.emptySettledPartitions(c, xmin, policy.published(), pause());
      for (Retention.Emptied e : emptied) {
        log.info(
            "pipeline {}: retention emptied partition {} ({} KiB): every row in it was published"
                + " {}; claims paused {} ms",
            pipeline,
            e.partition(),
            e.bytes() / 1024,
            policy.published().isZero()
                ? "and deleted"
                : "more than " + age(policy.published()) + " ago",
            TimeUnit.NANOSECONDS.toMillis(e.pausedNanos()));
      }
      morePublished = false; // a partitioned outbox loses no row by DELETE
      if (layout.partitioned()) {
        earlier = retention.earlierRound(c, xmin, layout.size());
        reportEarlierRound(earlier);
        earlierRoundRows = earlier == null ? 0 : earlier.rows();
      }
    }
    while ((morePublished || moreDead) && !stopping && active.getAsBoolean()) {
      if (morePublished) {
        int n = retention.deletePublished(c, policy.published(), batch);
        int byPosition = retention.deleteSettledByPosition(c, pipeline, policy.published(), batch);
        published += n + byPosition;
        morePublished = n == batch || byPosition == batch;
      }
      if (moreDead) {
        int n = retention.deleteDeadLetters(c, pipeline, policy.deadLetters(), batch);
        dead += n;
        moreDead = n == batch;
      }
    }
    return new Round(published, dead, emptied, earlier);
  }

  /**
   * The rows of an earlier round of ids in the partition taking ids, as the last round counted
   * them; empty for an outbox not configured as partitioned, or before the first round.
   */
  public OptionalLong earlierRoundRows() {
    long rows = earlierRoundRows;
    return rows < 0 ? OptionalLong.empty() : OptionalLong.of(rows);
  }

  /**
   * Warns once when the ids reach a partition that still holds rows of their earlier round, and
   * says when it no longer does.
   */
  private void reportEarlierRound(Retention.EarlierRound earlier) {
    if (earlier != null
        && (reported == null || !reported.partition().equals(earlier.partition()))) {
      log.warn(
          "pipeline {}: the ids came round to partition {} again (id {}) while it still holds {}"
              + " row(s) of an earlier round, {} of them unpublished, that retention cannot empty"
              + " yet (retention.published = {}): new rows go in beside them, and the partition"
              + " grows as a plain table would until every one is published and that old; give"
              + " the partitions more ids (partitions.size, partitions.count) or keep published"
              + " rows for less time (docs/maintenance.md#the-partitioned-layout)",
          pipeline,
          earlier.partition(),
          earlier.lastId(),
          earlier.rows(),
          earlier.unpublished(),
          age(policy.published()));
    } else if (earlier == null && reported != null) {
      log.info(
          "pipeline {}: partition {} holds no row of an earlier round of ids any more",
          pipeline,
          reported.partition());
    }
    reported = earlier;
  }

  /**
   * Pauses the source's claim transactions for an emptying, waiting at most {@link #PAUSE_WAIT}.
   */
  private Retention.Pause pause() {
    if (claims == null) {
      return Retention.Pause.NONE;
    }
    return new Retention.Pause() {
      private long since;

      @Override
      public boolean pause() {
        since = ticker.nanoTime();
        return claims.pauseTransactions(ticker.deadline(PAUSE_WAIT));
      }

      @Override
      public long resume() {
        claims.resumeTransactions();
        return ticker.nanoTime() - since;
      }
    };
  }

  private Connection connection() throws SQLException {
    if (connection == null || connection.isClosed()) {
      connection = connections.open();
      connection.setAutoCommit(true);
    }
    return connection;
  }

  private void closeConnection() {
    Connection c = connection;
    connection = null;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        log.debug("pipeline {}: closing the retention connection failed", pipeline, e);
      }
    }
  }

  private void awaitNextRound() {
    lock.lock();
    try {
      Deadline next = ticker.deadline(policy.interval());
      for (long left = next.nanosLeft(); !stopping && left > 0; left = next.nanosLeft()) {
        wake.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      stopping = true;
      Thread.currentThread().interrupt();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Stops the job: a round in progress ends after its current batch. Waits at most {@code timeout}
   * for the thread to end.
   */
  public void close(Duration timeout) {
    stopping = true;
    lock.lock();
    try {
      wake.signalAll();
    } finally {
      lock.unlock();
    }
    try {
      thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeout.toNanos())));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      log.warn(
          "pipeline {}: retention still running after {}; it stops after its batch",
          pipeline,
          timeout);
    }
  }

  @Override
  public void close() {
    close(Duration.ofSeconds(10));
  }

  /** Whether the job's thread is still running (tests). */
  boolean running() {
    return thread.isAlive();
  }

  /** {@code 7d}, {@code 12h}, {@code 90s}, {@code 1500ms}; {@code never} for zero. */
  static String age(Duration d) {
    if (d.isZero()) {
      return "never";
    }
    long ms = d.toMillis();
    long[] units = {86_400_000L, 3_600_000L, 60_000L, 1_000L};
    String[] names = {"d", "h", "m", "s"};
    for (int i = 0; i < units.length; i++) {
      if (ms % units[i] == 0) {
        return ms / units[i] + names[i];
      }
    }
    return ms + "ms";
  }
}
