package io.outbox.source.polling;

import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.source.postgres.LeaseKeeper;
import java.time.Duration;

/**
 * The polling source's settings, {@code source.polling.*}, as {@link #read} reads them: each
 * component is the key of the same name in kebab case; what a key means and its default are written
 * once, in this module's {@code reference.conf}.
 */
public record PollingSettings(
    Duration pollInterval,
    boolean listen,
    Duration standbyCheckInterval,
    Duration leadershipCheckInterval,
    Duration leaseTimeout,
    Duration statementTimeout,
    Duration connectionTimeout,
    Duration claimIdleTimeout,
    Duration serverKeepalive,
    Duration socketTimeout)
    implements LeaseKeeper.Timing {

  private static final Duration MIN_INTERVAL = Duration.ofMillis(10);
  private static final Duration MIN_CONNECTION_TIMEOUT = Duration.ofMillis(250);
  private static final Duration SOCKET_TIMEOUT_MARGIN = Duration.ofSeconds(1);

  /**
   * Reads {@code source.polling}, each key once: the settings, or {@code null} with every problem
   * in {@code r} (full key path, the bad value), without connecting.
   */
  public static PollingSettings read(SettingsReader r) {
    Duration pollInterval = r.duration("poll-interval", MIN_INTERVAL);
    Boolean listen = r.bool("listen");
    Duration standbyCheckInterval = r.duration("standby-check-interval", MIN_INTERVAL);
    Duration renew = r.duration("leadership-check-interval", MIN_INTERVAL);
    Duration lease = r.duration("lease-timeout", Duration.ofSeconds(1));
    LeaseKeeper.Timing.checkRenewal(r, renew, lease);
    Duration statementTimeout = r.duration("statement-timeout", Duration.ZERO);
    Duration connectionTimeout = r.duration("connection-timeout", MIN_CONNECTION_TIMEOUT);
    Duration claimIdleTimeout = r.duration("claim-idle-timeout", Duration.ZERO);
    Duration serverKeepalive = r.durationOrOff("server-keepalive", Duration.ofSeconds(1));
    Duration socketTimeout = r.duration("socket-timeout", Duration.ofSeconds(1));
    if (statementTimeout != null
        && socketTimeout != null
        && !statementTimeout.isZero()
        && socketTimeout.compareTo(statementTimeout.plus(SOCKET_TIMEOUT_MARGIN)) < 0) {
      r.problem(
          "socket-timeout",
          "must exceed statement-timeout (set to "
              + r.describe("statement-timeout")
              + ") by at least "
              + SOCKET_TIMEOUT_MARGIN.toSeconds()
              + "s, so that the server cancels a slow statement before the driver gives the"
              + " connection up; not "
              + r.describe("socket-timeout"));
    }
    r.lanes();
    return r.ok()
        ? new PollingSettings(
            pollInterval,
            listen,
            standbyCheckInterval,
            renew,
            lease,
            statementTimeout,
            connectionTimeout,
            claimIdleTimeout,
            serverKeepalive,
            socketTimeout)
        : null;
  }
}
