package io.outbox.source.polling;

import com.typesafe.config.Config;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.source.postgres.LeaseKeeper;
import java.time.Duration;
import java.util.List;

/**
 * The polling source's settings, {@code source.polling.*}; every default and its meaning is in this
 * module's {@code reference.conf}.
 *
 * @param pollInterval {@code poll-interval}: how often an idle lane looks for rows when no
 *     notification arrives (delayed events, retries that became due, missed notifications)
 * @param listen {@code listen}: whether to {@code LISTEN} for the insert trigger's notifications
 * @param standbyCheckInterval {@code standby-check-interval}: how often a standby instance tries to
 *     become the active one
 * @param leadershipCheckInterval {@code leadership-check-interval}: how often the active instance
 *     renews its lease (and so checks that it still holds its leader lock)
 * @param leaseTimeout {@code lease-timeout}: how long a renewal of the active instance's lease is
 *     valid; a standby takes over from an active instance that has not renewed it for this long
 * @param statementTimeout {@code statement-timeout}: the {@code statement_timeout} of every query
 *     of the source; {@link Duration#ZERO} for none
 * @param connectionTimeout {@code connection-timeout}: the longest wait for a new connection or a
 *     free one from the pool
 * @param claimIdleTimeout {@code claim-idle-timeout}: the longest a claim may stay open while its
 *     batch is published ({@code idle_in_transaction_session_timeout}); {@link Duration#ZERO} for
 *     none
 * @param serverKeepalive {@code server-keepalive}: TCP keepalive idle time the server uses for the
 *     source's sessions, so that a vanished relay's locks are freed; {@link Duration#ZERO} keeps
 *     the server's setting
 * @param socketTimeout {@code socket-timeout}: the longest the driver waits for the server's answer
 *     on any session of the source (pgjdbc's {@code socketTimeout}) before it gives the connection
 *     up; longer than {@code statementTimeout}, so a slow statement is cancelled by the server
 *     first
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
   * Reads valid settings (see {@link #validate}).
   *
   * @throws IllegalArgumentException listing every problem
   */
  public static PollingSettings from(PluginContext context) {
    Config c = SettingsReader.valid(context, validate(context), "polling source");
    return new PollingSettings(
        c.getDuration("poll-interval"),
        c.getBoolean("listen"),
        c.getDuration("standby-check-interval"),
        c.getDuration("leadership-check-interval"),
        c.getDuration("lease-timeout"),
        c.getDuration("statement-timeout"),
        c.getDuration("connection-timeout"),
        c.getDuration("claim-idle-timeout"),
        c.getDuration("server-keepalive"),
        c.getDuration("socket-timeout"));
  }

  /** Every problem of {@code source.polling}, each with its full key path and the bad value. */
  public static List<SettingsProblem> validate(PluginContext context) {
    SettingsReader r = new SettingsReader(context);
    r.duration("poll-interval", MIN_INTERVAL, false);
    r.bool("listen");
    r.duration("standby-check-interval", MIN_INTERVAL, false);
    r.leaderLease(MIN_INTERVAL);
    boolean statementTimeout = r.duration("statement-timeout", Duration.ofMillis(1), true);
    r.duration("connection-timeout", MIN_CONNECTION_TIMEOUT, false);
    r.duration("claim-idle-timeout", Duration.ofMillis(1), true);
    r.duration("server-keepalive", Duration.ofSeconds(1), true);
    if (r.duration("socket-timeout", Duration.ofSeconds(1), false) && statementTimeout) {
      checkSocketTimeout(r, context.settings());
    }
    r.lanes();
    return r.problems();
  }

  /**
   * The driver must not give a connection up while the server may still cancel the statement and
   * answer with an error (which leaves the connection usable).
   */
  private static void checkSocketTimeout(SettingsReader r, Config c) {
    Duration statement = c.getDuration("statement-timeout");
    Duration socket = c.getDuration("socket-timeout");
    if (!statement.isZero() && socket.compareTo(statement.plus(SOCKET_TIMEOUT_MARGIN)) < 0) {
      r.problem(
          "socket-timeout",
          "must exceed statement-timeout (set to "
              + r.raw("statement-timeout")
              + ") by at least "
              + SOCKET_TIMEOUT_MARGIN.toSeconds()
              + "s, so that the server cancels a slow statement before the driver gives the"
              + " connection up; got "
              + r.raw("socket-timeout"));
    }
  }
}
