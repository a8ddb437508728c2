package io.outbox.source.cdc;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValue;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.source.cdc.lease.CdcLeaderLock;
import io.outbox.source.postgres.LeaseKeeper;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The CDC source's settings, {@code source.cdc.*}; every default and its meaning is in this
 * module's {@code reference.conf}.
 *
 * @param slotName {@code slot-name}: the replication slot (derived from the pipeline when empty)
 * @param publicationName {@code publication-name}: the publication (derived when empty)
 * @param createPublication {@code create-publication}: create the publication when missing
 * @param createSlot {@code create-slot}: let the engine create the slot when missing
 * @param onSlotLoss {@code on-slot-loss}: what to do when stored offsets outlived their slot
 * @param reconcileAfter {@code reconcile-after}: age after which unpublished rows are swept; zero
 *     disables the sweep
 * @param reconcileInterval {@code reconcile-interval}: how often the sweep runs
 * @param heartbeatInterval {@code heartbeat-interval}: how often a heartbeat goes through the slot
 * @param pollInterval {@code poll-interval}: the engine's poll interval
 * @param maxBatchSize {@code max-batch-size}: the engine's largest batch
 * @param maxQueueSize {@code max-queue-size}: the engine's queue
 * @param laneBuffer {@code lane-buffer}: events buffered per lane before the stream waits
 * @param offsetCommitInterval {@code offset-commit-interval}: how often final positions are stored
 * @param standbyCheckInterval {@code standby-check-interval}: how often a standby tries to take
 *     over
 * @param leadershipCheckInterval {@code leadership-check-interval}: how often the active instance
 *     renews its lease
 * @param leaseTimeout {@code lease-timeout}: how long a renewal of the active instance's lease is
 *     valid; a standby takes over from an active instance that has not renewed it for this long
 * @param walKeepWarning {@code wal-keep-warning}: the share of {@code max_slot_wal_keep_size} the
 *     slot's retained WAL may reach before the source warns
 * @param startTimeout {@code start-timeout}: how long activation waits for the engine to stream
 * @param connectionTimeout {@code connection-timeout}: the longest wait for a new connection
 * @param socketTimeout {@code socket-timeout}: the longest the driver waits for the server's answer
 *     on any session of the source, the engine's included (pgjdbc's {@code socketTimeout})
 * @param debezium {@code debezium}: raw engine and connector properties, passed through
 */
public record CdcSettings(
    String slotName,
    String publicationName,
    boolean createPublication,
    boolean createSlot,
    OnSlotLoss onSlotLoss,
    Duration reconcileAfter,
    Duration reconcileInterval,
    Duration heartbeatInterval,
    Duration pollInterval,
    int maxBatchSize,
    int maxQueueSize,
    int laneBuffer,
    Duration offsetCommitInterval,
    Duration standbyCheckInterval,
    Duration leadershipCheckInterval,
    Duration leaseTimeout,
    double walKeepWarning,
    Duration startTimeout,
    Duration connectionTimeout,
    Duration socketTimeout,
    Map<String, String> debezium)
    implements LeaseKeeper.Timing {

  /** What the source does when stored offsets exist but their slot is missing or re-created. */
  public enum OnSlotLoss {
    /** Refuse to start until an operator decides. */
    FAIL,
    /**
     * Log the loss as an error, forget the offsets, stream from a new slot; the sweep catches up.
     */
    RECREATE
  }

  /** Slot and publication names: what PostgreSQL accepts for a slot, unquoted. */
  private static final Pattern NAME = Pattern.compile("[a-z0-9_]{1,63}");

  public CdcSettings {
    debezium = Map.copyOf(debezium);
  }

  /**
   * Reads valid settings (see {@link #validate}), deriving empty names from the database and the
   * pipeline (slots are cluster-wide: two databases may run pipelines of the same name).
   *
   * @param databaseName the database the pipeline reads
   * @throws IllegalArgumentException listing every problem
   */
  public static CdcSettings from(PluginContext context, String databaseName) {
    Config c = SettingsReader.valid(context, validate(context), "cdc source");
    return new CdcSettings(
        nameOr(c.getString("slot-name"), databaseName, context.pipeline()),
        nameOr(c.getString("publication-name"), databaseName, context.pipeline()),
        c.getBoolean("create-publication"),
        c.getBoolean("create-slot"),
        OnSlotLoss.valueOf(c.getString("on-slot-loss").toUpperCase(Locale.ROOT)),
        c.getDuration("reconcile-after"),
        c.getDuration("reconcile-interval"),
        c.getDuration("heartbeat-interval"),
        c.getDuration("poll-interval"),
        c.getInt("max-batch-size"),
        c.getInt("max-queue-size"),
        c.getInt("lane-buffer"),
        c.getDuration("offset-commit-interval"),
        c.getDuration("standby-check-interval"),
        c.getDuration("leadership-check-interval"),
        c.getDuration("lease-timeout"),
        c.getDouble("wal-keep-warning"),
        c.getDuration("start-timeout"),
        c.getDuration("connection-timeout"),
        c.getDuration("socket-timeout"),
        passThrough(c.getConfig("debezium")));
  }

  /**
   * {@code outbox_relay_<database>_<pipeline>}, lower-case, other characters as {@code _}; longer
   * than 63 characters, it is cut and ends with a hash of the whole, so it stays unique.
   */
  static String derivedName(String databaseName, String pipeline) {
    String base =
        ("outbox_relay_" + databaseName + "_" + pipeline)
            .toLowerCase(Locale.ROOT)
            .replaceAll("[^a-z0-9_]", "_");
    if (base.length() <= 63) {
      return base;
    }
    String hash = Long.toHexString(CdcLeaderLock.key(base) & 0xffffffffL);
    return base.substring(0, 63 - hash.length() - 1) + "_" + hash;
  }

  private static String nameOr(String configured, String databaseName, String pipeline) {
    return configured.isEmpty() ? derivedName(databaseName, pipeline) : configured;
  }

  private static Map<String, String> passThrough(Config debezium) {
    Map<String, String> properties = new LinkedHashMap<>();
    for (Map.Entry<String, ConfigValue> e : debezium.entrySet()) {
      properties.put(e.getKey(), String.valueOf(e.getValue().unwrapped()));
    }
    return properties;
  }

  /** Every problem of {@code source.cdc}, each with its full key path and the bad value. */
  public static List<SettingsProblem> validate(PluginContext context) {
    SettingsReader r = new SettingsReader(context);
    name(r, "slot-name");
    name(r, "publication-name");
    r.bool("create-publication");
    r.bool("create-slot");
    r.oneOf("on-slot-loss", "fail", "recreate");
    r.duration("reconcile-after", Duration.ofSeconds(1), true);
    r.duration("reconcile-interval", Duration.ofMillis(100), false);
    r.duration("heartbeat-interval", Duration.ofMillis(100), false);
    r.duration("poll-interval", Duration.ofMillis(1), false);
    r.positive("max-batch-size");
    r.positive("max-queue-size");
    r.positive("lane-buffer");
    r.duration("offset-commit-interval", Duration.ofMillis(10), false);
    r.duration("standby-check-interval", Duration.ofMillis(10), false);
    r.leaderLease(Duration.ofMillis(10));
    share(context, r, "wal-keep-warning");
    r.duration("start-timeout", Duration.ofSeconds(1), false);
    r.duration("connection-timeout", Duration.ofMillis(250), false);
    r.duration("socket-timeout", Duration.ofSeconds(1), false);
    try {
      context.settings().getConfig("debezium");
    } catch (ConfigException e) {
      r.problem("debezium", "must be an object of Debezium properties, got " + r.raw("debezium"));
    }
    r.lanes();
    return r.problems();
  }

  private static void share(PluginContext context, SettingsReader r, String key) {
    double value;
    try {
      value = context.settings().getDouble(key);
    } catch (ConfigException e) {
      value = Double.NaN;
    }
    if (!(value > 0 && value <= 1)) {
      r.problem(key, "must be a share above 0 and at most 1 (0.8 = 80 %), got " + r.raw(key));
    }
  }

  private static void name(SettingsReader r, String key) {
    String value = r.string(key);
    if (value != null && !value.isEmpty() && !NAME.matcher(value).matches()) {
      r.problem(
          key,
          "must be 1 to 63 lower-case letters, digits or _ (or empty for the default), got "
              + r.raw(key));
    }
  }
}
