package io.outbox.source.cdc;

import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.source.cdc.lease.CdcLeaderLock;
import io.outbox.source.postgres.LeaseKeeper;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The CDC source's settings, {@code source.cdc.*}, as {@link #read} reads them: each component is
 * the key of the same name in kebab case; what a key means and its default are written once, in
 * this module's {@code reference.conf}.
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
   * Reads {@code source.cdc}, each key once: the settings, or {@code null} with every problem in
   * {@code r} (full key path, the bad value), without connecting; an empty {@code slot-name} or
   * {@code publication-name} stays empty (see {@link #read(SettingsReader, String)}).
   */
  public static CdcSettings read(SettingsReader r) {
    return read(r, null);
  }

  /**
   * As {@link #read(SettingsReader)}, with an empty {@code slot-name} or {@code publication-name}
   * derived from {@code databaseName} and the pipeline when {@code databaseName} is given.
   */
  public static CdcSettings read(SettingsReader r, String databaseName) {
    String slotName = derived(r.checked("slot-name", CdcSettings::nameProblem), r, databaseName);
    String publicationName =
        derived(r.checked("publication-name", CdcSettings::nameProblem), r, databaseName);
    Boolean createPublication = r.bool("create-publication");
    Boolean createSlot = r.bool("create-slot");
    String onSlotLoss = r.oneOf("on-slot-loss", "fail", "recreate");
    Duration reconcileAfter = r.durationOrOff("reconcile-after", Duration.ofSeconds(1));
    Duration reconcileInterval = r.duration("reconcile-interval", Duration.ofMillis(100));
    Duration heartbeatInterval = r.duration("heartbeat-interval", Duration.ofMillis(100));
    Duration pollInterval = r.positiveDuration("poll-interval");
    Integer maxBatchSize = r.positive("max-batch-size");
    Integer maxQueueSize = r.positive("max-queue-size");
    Integer laneBuffer = r.positive("lane-buffer");
    Duration offsetCommitInterval = r.duration("offset-commit-interval", Duration.ofMillis(10));
    Duration standbyCheckInterval = r.duration("standby-check-interval", Duration.ofMillis(10));
    Duration renew = r.duration("leadership-check-interval", Duration.ofMillis(10));
    Duration lease = r.duration("lease-timeout", Duration.ofSeconds(1));
    LeaseKeeper.Timing.checkRenewal(r, renew, lease);
    Double walKeepWarning = r.doubleIn("wal-keep-warning", 0, 1);
    if (walKeepWarning != null && walKeepWarning == 0) {
      r.problem("wal-keep-warning", "must be a share above 0 and at most 1 (0.8 = 80 %), not 0");
    }
    Duration startTimeout = r.duration("start-timeout", Duration.ofSeconds(1));
    Duration connectionTimeout = r.duration("connection-timeout", Duration.ofMillis(250));
    Duration socketTimeout = r.duration("socket-timeout", Duration.ofSeconds(1));
    Map<String, String> debezium = r.stringMap("debezium");
    r.lanes();
    return r.ok()
        ? new CdcSettings(
            slotName,
            publicationName,
            createPublication,
            createSlot,
            OnSlotLoss.valueOf(onSlotLoss.toUpperCase(Locale.ROOT)),
            reconcileAfter,
            reconcileInterval,
            heartbeatInterval,
            pollInterval,
            maxBatchSize,
            maxQueueSize,
            laneBuffer,
            offsetCommitInterval,
            standbyCheckInterval,
            renew,
            lease,
            walKeepWarning,
            startTimeout,
            connectionTimeout,
            socketTimeout,
            debezium)
        : null;
  }

  private static String derived(String name, SettingsReader r, String databaseName) {
    return name == null || !name.isEmpty() || databaseName == null
        ? name
        : derivedName(databaseName, r.pipeline());
  }

  private static String nameProblem(String value) {
    return value.isEmpty() || NAME.matcher(value).matches()
        ? null
        : "must be 1 to 63 lower-case letters, digits or _ (or empty for the default), not \""
            + value
            + "\"";
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

  /** Every problem of {@code source.cdc}, each with its full key path and the bad value. */
}
