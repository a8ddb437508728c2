package io.outbox.relay.spi;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Where a pipeline's outbox lives and what happens to a published row.
 *
 * @param url JDBC URL of the PostgreSQL database
 * @param user database user
 * @param password database password, or {@code null}; never printed
 * @param properties extra JDBC driver properties ({@code database.properties})
 * @param table the outbox table, possibly schema-qualified
 * @param deadLetterTable the dead-letter table, possibly schema-qualified
 * @param onPublish what happens to a row once its event is published
 * @param pipeline the pipeline name, written into the dead-letter table's {@code pipeline} column
 * @param retention how long published rows and dead letters are kept ({@code retention.*})
 * @param columns {@code columns.*}: the relay's event column (the settings key, e.g. {@code
 *     event-id}) to the outbox table's own column name; empty for the relay's own layout
 * @param partitions {@code layout} and {@code partitions.*}: the outbox's layout {@code migrate}
 *     makes; {@link Partitions#PLAIN} for one plain table
 */
public record DatabaseSettings(
    String url,
    String user,
    String password,
    Map<String, String> properties,
    String table,
    String deadLetterTable,
    OnPublish onPublish,
    String pipeline,
    Retention retention,
    Map<String, String> columns,
    Partitions partitions) {

  /**
   * The outbox's layout: one plain table ({@code count} 0), or {@code count} partitions taking
   * {@code size} ids each in turn ({@code layout = partitioned}).
   *
   * @param count partitions in the cycle, or 0 for the plain layout
   * @param size ids per partition
   */
  public record Partitions(int count, long size) {

    /** One plain table. */
    public static final Partitions PLAIN = new Partitions(0, 0);

    /** Whether the outbox is partitioned. */
    public boolean partitioned() {
      return count > 0;
    }
  }

  /** Settings of an outbox in the plain layout. */
  public DatabaseSettings(
      String url,
      String user,
      String password,
      Map<String, String> properties,
      String table,
      String deadLetterTable,
      OnPublish onPublish,
      String pipeline,
      Retention retention,
      Map<String, String> columns) {
    this(
        url,
        user,
        password,
        properties,
        table,
        deadLetterTable,
        onPublish,
        pipeline,
        retention,
        columns,
        Partitions.PLAIN);
  }

  /** What happens to an outbox row once its event is published. */
  public enum OnPublish {
    /** Set {@code published_at}; the row stays for auditing until retention removes it. */
    MARK,
    /** Delete the row. */
    DELETE,
    /**
     * Write nothing to the row: the lane's position, one row per lane moved once per batch, records
     * it as published (the polling source only, at least once). Rows that cannot be settled by the
     * position (a retry, a held-back key, a delayed event) are written as with {@link #MARK}.
     */
    POSITION
  }

  /**
   * Retention: published rows ({@code on-publish = mark}) and dead letters older than their age are
   * deleted by the active instance in the background, in small batches. A zero age keeps that kind
   * forever.
   *
   * @param published {@code retention.published}: age by {@code published_at}, or zero for off
   * @param deadLetters {@code retention.dead-letters}: age by {@code dead_lettered_at}, or zero
   * @param batchSize {@code retention.batch-size}: the most rows one delete statement removes
   * @param interval {@code retention.interval}: the pause between two rounds of deletes
   */
  public record Retention(
      Duration published, Duration deadLetters, int batchSize, Duration interval) {

    /** Keeps everything. */
    public static final Retention OFF =
        new Retention(Duration.ZERO, Duration.ZERO, 1000, Duration.ofMinutes(1));

    /**
     * Checks the values (the settings reader reports bad ones to the user first).
     *
     * @throws IllegalArgumentException naming the bad value
     */
    public Retention {
      Objects.requireNonNull(published, "published");
      Objects.requireNonNull(deadLetters, "deadLetters");
      Objects.requireNonNull(interval, "interval");
      if (published.isNegative() || deadLetters.isNegative()) {
        throw new IllegalArgumentException(
            "retention ages must be positive, or zero for off: published "
                + published
                + ", dead letters "
                + deadLetters);
      }
      if (batchSize < 1) {
        throw new IllegalArgumentException("batch size must be at least 1, got " + batchSize);
      }
      if (interval.isNegative() || interval.isZero()) {
        throw new IllegalArgumentException("interval must be positive, got " + interval);
      }
    }

    /** Whether anything is ever deleted. */
    public boolean enabled() {
      return !published.isZero() || !deadLetters.isZero();
    }
  }

  /** Settings of a table in the relay's own layout. */
  public DatabaseSettings(
      String url,
      String user,
      String password,
      Map<String, String> properties,
      String table,
      String deadLetterTable,
      OnPublish onPublish,
      String pipeline,
      Retention retention) {
    this(
        url,
        user,
        password,
        properties,
        table,
        deadLetterTable,
        onPublish,
        pipeline,
        retention,
        Map.of());
  }

  /** Settings without retention ({@link Retention#OFF}). */
  public DatabaseSettings(
      String url,
      String user,
      String password,
      Map<String, String> properties,
      String table,
      String deadLetterTable,
      OnPublish onPublish,
      String pipeline) {
    this(
        url,
        user,
        password,
        properties,
        table,
        deadLetterTable,
        onPublish,
        pipeline,
        Retention.OFF);
  }

  public DatabaseSettings {
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(deadLetterTable, "deadLetterTable");
    Objects.requireNonNull(onPublish, "onPublish");
    properties = properties == null ? Map.of() : Map.copyOf(properties);
    retention = retention == null ? Retention.OFF : retention;
    columns = columns == null ? Map.of() : Map.copyOf(columns);
    partitions = partitions == null ? Partitions.PLAIN : partitions;
  }

  /** Masks the password. */
  @Override
  public String toString() {
    return "DatabaseSettings[url="
        + url
        + ", user="
        + user
        + ", password="
        + (password == null ? "<none>" : "******")
        + ", table="
        + table
        + ", deadLetterTable="
        + deadLetterTable
        + ", onPublish="
        + onPublish
        + ", retention="
        + retention
        + ", columns="
        + new java.util.TreeMap<>(columns)
        + ", partitions="
        + partitions
        + "]";
  }
}
