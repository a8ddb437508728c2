package io.outbox.source.postgres;

import io.outbox.relay.spi.DatabaseSettings;
import java.util.Properties;

/**
 * How PostgreSQL plans the statements of the sessions that claim, read and settle outbox rows, in
 * both sources: always through the outbox's indexes, whatever its statistics say.
 *
 * <p>An outbox is a queue: the share of pending rows swings between none and all, so the statistics
 * of its last ANALYZE are rarely those of now, and a partition of the partitioned layout is often
 * analyzed while empty, just before the ids reach it. The plans those statistics lead to read whole
 * tables: a plan made for an empty partition reads it in full on every claim and settlement once
 * the ids reach it, until autovacuum analyzes it (claim p50 21 ms instead of 0.8 ms, commit-to-ack
 * p99 300-480 ms at 1,000 events/s). Every statement these sessions run finds its rows by an index
 * (the pending index in id order, the retrying index, the primary key), so a sequential scan or a
 * sort is never the better plan there: both are turned off for the session. Turned off, not
 * forbidden: a statement that has no other plan still runs. The settings go in the startup packet,
 * after the user's own {@code options}, so no rollback undoes them.
 *
 * <p>A partitioned outbox is also planned afresh for each statement ({@code plan_cache_mode =
 * force_custom_plan}). In its steady state every partition but the one taking ids is empty, and a
 * cached plan made then sees no row in them: the pending index and the primary key cost the same
 * there, and PostgreSQL took the primary key, which reads every row of a partition in id order once
 * the ids reach it (16,000 rows per claim, until an ANALYZE of that partition replaced the plan). A
 * plan made for each statement sees each partition's present size, which makes the pending index
 * the cheaper. It costs about 0.5 ms of planning per claim (pgbench, 4 partitions).
 *
 * <p>JIT is off too: the claim's LIMIT over a large pending index has a high estimated cost, which
 * made PostgreSQL JIT-compile it on every call (about 100 ms of compilation for a 20 ms query).
 */
public final class ClaimSessionPlans {

  private static final String SERVER_OPTIONS =
      "-c jit=off -c enable_seqscan=off -c enable_sort=off";
  private static final String PARTITIONED_OPTIONS = "-c plan_cache_mode=force_custom_plan";

  private ClaimSessionPlans() {}

  /** The {@code -c} options of such a session for an outbox in {@code layout}. */
  public static String serverOptions(DatabaseSettings.Partitions layout) {
    return layout.partitioned() ? SERVER_OPTIONS + " " + PARTITIONED_OPTIONS : SERVER_OPTIONS;
  }

  /** Adds {@link #serverOptions} to the driver properties' {@code options}, after the user's. */
  public static void addTo(Properties driverProperties, DatabaseSettings.Partitions layout) {
    String options = driverProperties.getProperty("options", "");
    driverProperties.setProperty("options", (options + " " + serverOptions(layout)).strip());
  }
}
