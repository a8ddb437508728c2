package io.outbox.source.postgres;

import io.outbox.admin.OutboxStatus;
import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The statements that make a batch of delivery verdicts durable on an outbox, shared by every
 * source so that operators see one model: published rows are marked ({@code published_at}) or
 * deleted, retries recorded ({@code attempts}, {@code last_error}, {@code next_attempt_at}), dead
 * letters moved to the dead-letter table in the same transaction. Set-based: at most one statement
 * per kind of verdict, never one per event. Values are always bind parameters.
 *
 * <p>The dead-letter move runs under a savepoint: when the dead-letter table refuses it (a missing
 * grant, a constraint of a table made by hand, statement-timeout), only the move is undone, its
 * events stay in the outbox as retries due after {@link #KEPT_RETRY_DELAY} with a {@code
 * last_error} that says so ({@link Written#kept()}), and the rest of the batch is still recorded:
 * one bad dead-letter table never makes a published batch be published again.
 */
public final class OutboxVerdicts {

  /** Longest {@code last_error} stored, in characters. */
  public static final int MAX_ERROR_CHARS = 2000;

  /** When a dead letter the move could not take is tried again. */
  public static final Duration KEPT_RETRY_DELAY = Duration.ofMinutes(1);

  private final String table;
  private final String markPublished;
  private final String deletePublished;
  private final String retry;
  private final String deadLetter;

  /** The statements for these tables. */
  public OutboxVerdicts(OutboxTables tables) {
    Objects.requireNonNull(tables, "tables");
    this.table = tables.displayTable();
    String outbox = tables.qualifiedTable();
    OutboxColumns c = tables.columns();
    // clock_timestamp(), not now(): the caller's transaction may have started long before.
    this.markPublished =
        "UPDATE "
            + outbox
            + " o SET published_at = clock_timestamp() WHERE "
            + c.id("o")
            + " = ANY(?)";
    this.deletePublished = "DELETE FROM " + outbox + " o WHERE " + c.id("o") + " = ANY(?)";
    this.retry =
        "UPDATE "
            + outbox
            + " o SET attempts = u.attempts, last_error = u.err,"
            + " next_attempt_at = clock_timestamp() + u.delay_ms * interval '1 millisecond'"
            + " FROM unnest(?::bigint[], ?::int[], ?::text[], ?::bigint[])"
            + " AS u(id, attempts, err, delay_ms)"
            + " WHERE "
            + c.id("o")
            + " = u.id";
    this.deadLetter =
        "WITH moved AS (DELETE FROM "
            + outbox
            + " o USING unnest(?::bigint[], ?::text[], ?::int[], ?::text[])"
            + " AS u(id, reason, attempts, err) WHERE "
            + c.id("o")
            + " = u.id"
            // Under the dead-letter table's names, whatever the outbox calls them.
            + " RETURNING "
            + c.id("o")
            + " AS id, "
            + c.eventId("o")
            + " AS event_id, "
            + c.aggregateType("o")
            + " AS aggregate_type, "
            + c.aggregateId("o")
            + " AS aggregate_id, "
            + c.eventType("o")
            + " AS event_type, o.destination, "
            + c.payload("o")
            + " AS payload, o.headers, o.created_at, o.available_at,"
            + " o.next_attempt_at, u.reason, u.attempts, u.err)\n"
            + "INSERT INTO "
            + tables.qualifiedDeadLetterTable()
            + " (id, event_id, aggregate_type, aggregate_id, event_type, destination, payload,"
            + " headers, created_at, available_at, published_at, attempts, next_attempt_at,"
            + " last_error, dead_lettered_at, reason, pipeline)\n"
            + "SELECT id, event_id, aggregate_type, aggregate_id, event_type, destination, payload,"
            + " headers, created_at, available_at, NULL, attempts, next_attempt_at, err,"
            + " clock_timestamp(), reason, ? FROM moved";
  }

  /** A new, empty batch of verdicts. */
  public Batch batch() {
    return new Batch();
  }

  /**
   * The first line of the database's message: the driver adds {@code Detail:} lines, and a {@code
   * Failing row contains (...)} detail would show the payload.
   */
  static String firstLine(String message) {
    if (message == null || message.isBlank()) {
      return "(no message)";
    }
    String line = message.strip();
    int end = line.indexOf('\n');
    return (end < 0 ? line : line.substring(0, end)).strip();
  }

  /** {@code last_error} is text: no NUL characters, bounded length. */
  public static String clean(String error) {
    String s = error.replace('\0', ' ');
    return s.length() <= MAX_ERROR_CHARS ? s : s.substring(0, MAX_ERROR_CHARS - 3) + "...";
  }

  /**
   * What one {@link Batch#write} changed, per kind, to compare with what was asked.
   *
   * @param kept the dead letters the move could not take, kept in the outbox as retries (empty when
   *     the move succeeded)
   */
  public record Written(
      int published,
      int publishedExpected,
      int retries,
      int retriesExpected,
      int deadLetters,
      int deadLettersExpected,
      List<Kept> kept) {

    public Written {
      kept = List.copyOf(kept);
    }

    /** By row id, the {@code last_error} written for each dead letter kept. */
    public Map<Long, String> keptErrors() {
      Map<Long, String> errors = new HashMap<>();
      kept.forEach(k -> errors.put(k.id(), k.error()));
      return errors;
    }

    /** Whether every row asked for was found (a kept dead letter counts as found). */
    public boolean complete() {
      return published == publishedExpected
          && retries == retriesExpected
          && deadLetters + kept.size() == deadLettersExpected;
    }
  }

  /**
   * A dead letter the move could not take: it stays in the outbox with {@code attempts} as given,
   * {@code next_attempt_at} = now + {@link #KEPT_RETRY_DELAY} and {@code last_error} = {@code
   * error}.
   *
   * @param id the row's id
   * @param attempts the attempts recorded
   * @param error the {@code last_error} recorded, beginning with {@link OutboxStatus#MOVE_FAILED}
   */
  public record Kept(long id, int attempts, String error) {}

  /** Verdicts collected for one write; not thread-safe. */
  public final class Batch {
    private final List<Long> published = new ArrayList<>();
    private final List<Long> retryIds = new ArrayList<>();
    private final List<Integer> retryAttempts = new ArrayList<>();
    private final List<String> retryErrors = new ArrayList<>();
    private final List<Long> retryDelays = new ArrayList<>();
    private final List<Long> deadIds = new ArrayList<>();
    private final List<String> deadReasons = new ArrayList<>();
    private final List<Integer> deadAttempts = new ArrayList<>();
    private final List<String> deadErrors = new ArrayList<>();

    private Batch() {}

    /** The row's event was published. */
    public Batch published(long id) {
      published.add(id);
      return this;
    }

    /** The row's event failed and is retried after {@code delayMillis}. */
    public Batch retry(long id, int attempts, long delayMillis, String error) {
      retryIds.add(id);
      retryAttempts.add(attempts);
      retryErrors.add(clean(error));
      retryDelays.add(Math.max(0, delayMillis));
      return this;
    }

    /** The row moves to the dead-letter table with {@code reason} (its column value). */
    public Batch deadLetter(long id, String reason, int attempts, String error) {
      deadIds.add(id);
      deadReasons.add(reason);
      deadAttempts.add(attempts);
      deadErrors.add(clean(error));
      return this;
    }

    /** Whether there are published rows and no other verdicts (no retry, no dead letter). */
    public boolean onlyPublished() {
      return !published.isEmpty() && retryIds.isEmpty() && deadIds.isEmpty();
    }

    /** The ids of the published rows, in the order they were added. */
    public List<Long> publishedIds() {
      return List.copyOf(published);
    }

    /** Whether nothing was added. */
    public boolean isEmpty() {
      return published.isEmpty() && retryIds.isEmpty() && deadIds.isEmpty();
    }

    /**
     * Runs the statements on {@code connection}, inside the caller's transaction (the caller
     * commits).
     *
     * @param onPublishDelete {@code true} to delete published rows, {@code false} to mark them
     * @param pipeline written to the dead-letter table's {@code pipeline} column
     */
    public Written write(Connection connection, boolean onPublishDelete, String pipeline)
        throws SQLException {
      int p = 0;
      int r = 0;
      int d = 0;
      if (!published.isEmpty()) {
        try (PreparedStatement ps =
            connection.prepareStatement(onPublishDelete ? deletePublished : markPublished)) {
          ps.setArray(1, array(connection, "bigint", published));
          p = ps.executeUpdate();
        }
      }
      if (!retryIds.isEmpty()) {
        try (PreparedStatement ps = connection.prepareStatement(retry)) {
          ps.setArray(1, array(connection, "bigint", retryIds));
          ps.setArray(2, array(connection, "int", retryAttempts));
          ps.setArray(3, array(connection, "text", retryErrors));
          ps.setArray(4, array(connection, "bigint", retryDelays));
          r = ps.executeUpdate();
        }
      }
      List<Kept> kept = List.of();
      if (!deadIds.isEmpty()) {
        Savepoint beforeMove = connection.setSavepoint();
        try {
          d = moveDeadLetters(connection, pipeline);
          connection.releaseSavepoint(beforeMove);
        } catch (SQLException moveFailed) {
          // A connection that is gone fails here too, and the whole batch with it.
          try {
            connection.rollback(beforeMove);
          } catch (SQLException gone) {
            gone.addSuppressed(moveFailed);
            throw gone;
          }
          kept = keep(connection, moveFailed);
        }
      }
      return new Written(p, published.size(), r, retryIds.size(), d, deadIds.size(), kept);
    }

    private int moveDeadLetters(Connection connection, String pipeline) throws SQLException {
      try (PreparedStatement ps = connection.prepareStatement(deadLetter)) {
        ps.setArray(1, array(connection, "bigint", deadIds));
        ps.setArray(2, array(connection, "text", deadReasons));
        ps.setArray(3, array(connection, "int", deadAttempts));
        ps.setArray(4, array(connection, "text", deadErrors));
        ps.setString(5, pipeline);
        return ps.executeUpdate();
      }
    }

    /** Records the dead letters the move could not take as retries; returns those it found. */
    private List<Kept> keep(Connection connection, SQLException moveFailed) throws SQLException {
      String cause = firstLine(moveFailed.getMessage());
      List<String> errors = new ArrayList<>(deadIds.size());
      for (int i = 0; i < deadIds.size(); i++) {
        errors.add(
            clean(
                OutboxStatus.MOVE_FAILED
                    + cause
                    + " (was to be dead-lettered as "
                    + deadReasons.get(i)
                    + ": "
                    + deadErrors.get(i)
                    + ")"));
      }
      Set<Long> found = new HashSet<>();
      try (PreparedStatement ps = connection.prepareStatement(retry + " RETURNING o.id")) {
        ps.setArray(1, array(connection, "bigint", deadIds));
        ps.setArray(2, array(connection, "int", deadAttempts));
        ps.setArray(3, array(connection, "text", errors));
        Long[] delays = new Long[deadIds.size()];
        Arrays.fill(delays, KEPT_RETRY_DELAY.toMillis());
        ps.setArray(4, connection.createArrayOf("bigint", delays));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            found.add(rs.getLong(1));
          }
        }
      }
      List<Kept> kept = new ArrayList<>(found.size());
      for (int i = 0; i < deadIds.size(); i++) {
        if (found.contains(deadIds.get(i))) {
          kept.add(new Kept(deadIds.get(i), deadAttempts.get(i), errors.get(i)));
        }
      }
      return kept;
    }

    private Array array(Connection connection, String type, List<?> values) throws SQLException {
      return connection.createArrayOf(type, values.toArray());
    }
  }

  /** The outbox table, for messages. */
  public String table() {
    return table;
  }

  /** The statement that marks published rows, for {@code EXPLAIN} in tests and diagnostics. */
  public String markPublishedStatement() {
    return markPublished;
  }

  /** The statement that records retries, for {@code EXPLAIN} in tests and diagnostics. */
  public String retryStatement() {
    return retry;
  }

  /** The statement that moves dead letters, for {@code EXPLAIN} in tests and diagnostics. */
  public String deadLetterStatement() {
    return deadLetter;
  }
}
