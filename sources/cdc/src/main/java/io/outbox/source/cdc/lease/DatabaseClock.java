package io.outbox.source.cdc.lease;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;

/**
 * The database's clock as this process sees it: the relay's clock plus the offset to PostgreSQL's
 * {@code clock_timestamp()}, measured on the leader session at each renewal. Due times of delayed
 * events ({@code available_at}) and retries are compared with it, so a relay host whose clock is
 * ahead or behind publishes them neither early nor late, as the polling source does in SQL.
 */
public final class DatabaseClock extends Clock {

  private final Clock local;
  private volatile Duration offset = Duration.ZERO;

  public DatabaseClock(Clock local) {
    this.local = local;
  }

  /**
   * Measures the offset on {@code c}: the database's time minus the local time at the end of the
   * round trip (see {@link #offsetOf}).
   */
  void measure(Connection c) throws SQLException {
    Instant before = local.instant();
    Instant database;
    try (PreparedStatement ps = c.prepareStatement("SELECT clock_timestamp()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      database = rs.getObject(1, OffsetDateTime.class).toInstant();
    }
    offset = offsetOf(before, database, local.instant());
  }

  /**
   * The offset from one reading: the database read {@code database} at some local moment between
   * {@code before} and {@code after}, so the true offset lies between {@code database - after} and
   * {@code database - before}. The lower bound is taken: the database's time is then never
   * overestimated, and a due time is never reached early, only up to one round trip late (the
   * middle of the round trip, taken before, published delayed events early by up to half a round
   * trip under load: the soak's finding F2).
   */
  static Duration offsetOf(Instant before, Instant database, Instant after) {
    return Duration.between(after, database);
  }

  /** The database's clock minus the local one, as last measured. */
  Duration offset() {
    return offset;
  }

  @Override
  public Instant instant() {
    return local.instant().plus(offset);
  }

  @Override
  public ZoneId getZone() {
    return local.getZone();
  }

  @Override
  public Clock withZone(ZoneId zone) {
    DatabaseClock c = new DatabaseClock(local.withZone(zone));
    c.offset = offset;
    return c;
  }
}
