package io.outbox.source.polling;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.SourceException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A claim of the polling source: an open transaction holding the lane's advisory lock and the
 * claimed rows' locks until {@link #settle} commits the verdicts (one statement per kind) or {@link
 * #release} rolls back.
 */
final class PollingClaim implements Claim {

  private static final Logger log = LoggerFactory.getLogger(PollingClaim.class);
  private static final int MAX_ERROR_CHARS = 2000;

  /** What the claim needs from its source. */
  interface Owner {
    OutboxSql sql();

    OnPublish onPublish();

    String pipeline();

    /** Closes a connection that failed (not yet closed), and drops it from the pool. */
    void discard(Connection connection);

    /** Returns a healthy connection to the pool. */
    void closeQuietly(Connection connection);

    /** Called exactly once, when the claim of {@code lane} ended. */
    void ended(int lane);
  }

  private final Owner owner;
  private final int lane;
  private final Connection connection;
  private final List<OutboxEvent> events;
  private final AtomicBoolean ended = new AtomicBoolean();

  PollingClaim(Owner owner, int lane, Connection connection, List<OutboxEvent> events) {
    this.owner = owner;
    this.lane = lane;
    this.connection = connection;
    this.events = List.copyOf(events);
  }

  @Override
  public List<OutboxEvent> events() {
    return events;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Events without a settlement are released. A settlement for an event that is not in this
   * claim, or two for one event, releases the whole claim and throws {@link
   * IllegalArgumentException}.
   */
  @Override
  public void settle(List<Settlement> settlements) {
    end();
    Batches batches;
    try {
      batches = sort(settlements);
    } catch (RuntimeException e) {
      rollback();
      throw e;
    }
    boolean done = false;
    try {
      OutboxSql sql = owner.sql();
      if (!batches.published.isEmpty()) {
        boolean mark = owner.onPublish() == OnPublish.MARK;
        try (PreparedStatement ps =
            connection.prepareStatement(mark ? sql.markPublished : sql.deletePublished)) {
          ps.setArray(1, connection.createArrayOf("bigint", batches.published.toArray()));
          expect(ps.executeUpdate(), batches.published.size(), mark ? "marked" : "deleted");
        }
      }
      if (!batches.retries.isEmpty()) {
        List<Settlement.Retry> r = batches.retries;
        try (PreparedStatement ps = connection.prepareStatement(sql.retry)) {
          ps.setArray(1, array("bigint", r.stream().map(s -> s.event().id())));
          ps.setArray(2, array("int", r.stream().map(Settlement.Retry::attempts)));
          ps.setArray(3, array("text", r.stream().map(s -> clean(s.error()))));
          ps.setArray(4, array("bigint", r.stream().map(s -> Math.max(0, s.delay().toMillis()))));
          expect(ps.executeUpdate(), r.size(), "retry recorded");
        }
      }
      if (!batches.deadLetters.isEmpty()) {
        List<Settlement.DeadLetter> d = batches.deadLetters;
        try (PreparedStatement ps = connection.prepareStatement(sql.deadLetter)) {
          ps.setArray(1, array("bigint", d.stream().map(s -> s.event().id())));
          ps.setArray(2, array("text", d.stream().map(s -> s.reason().columnValue())));
          ps.setArray(3, array("int", d.stream().map(Settlement.DeadLetter::attempts)));
          ps.setArray(4, array("text", d.stream().map(s -> clean(s.error()))));
          ps.setString(5, owner.pipeline());
          expect(ps.executeUpdate(), d.size(), "dead-lettered");
        }
      }
      connection.commit();
      done = true;
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline "
              + owner.pipeline()
              + " lane "
              + lane
              + ": recording the outcome of "
              + events.size()
              + " event(s) failed, they will be claimed again: "
              + e.getMessage(),
          e);
    } finally {
      if (done) {
        owner.closeQuietly(connection);
      } else {
        owner.discard(connection);
      }
      owner.ended(lane);
    }
  }

  @Override
  public void release() {
    end();
    rollback();
  }

  private void rollback() {
    try {
      connection.rollback();
      owner.closeQuietly(connection);
    } catch (SQLException e) {
      // The server rolls the transaction back when the session ends; nothing is lost.
      log.debug("pipeline {} lane {}: release failed: {}", owner.pipeline(), lane, e.getMessage());
      owner.discard(connection);
    } finally {
      owner.ended(lane);
    }
  }

  private void end() {
    if (!ended.compareAndSet(false, true)) {
      throw new IllegalStateException(
          "pipeline " + owner.pipeline() + " lane " + lane + ": this claim was already ended");
    }
  }

  private Batches sort(List<Settlement> settlements) {
    Set<Long> ids = new HashSet<>();
    for (OutboxEvent e : events) {
      ids.add(e.id());
    }
    Set<Long> seen = new HashSet<>();
    Batches b = new Batches();
    for (Settlement s : settlements) {
      long id = s.event().id();
      if (!ids.contains(id)) {
        throw new IllegalArgumentException(
            "settlement for " + s.event() + " which is not part of this claim; claim released");
      }
      if (!seen.add(id)) {
        throw new IllegalArgumentException("two settlements for " + s.event() + "; claim released");
      }
      if (s instanceof Settlement.Published) {
        b.published.add(id);
      } else if (s instanceof Settlement.Retry r) {
        b.retries.add(r);
      } else if (s instanceof Settlement.DeadLetter d) {
        b.deadLetters.add(d);
      }
      // Release: nothing to record.
    }
    return b;
  }

  private Array array(String type, Stream<?> values) throws SQLException {
    return connection.createArrayOf(type, values.toArray());
  }

  private void expect(int actual, int expected, String what) {
    if (actual != expected) {
      // Rows are locked by this claim, so only a manual intervention can cause this.
      log.warn(
          "pipeline {} lane {}: {} {} row(s) of {} expected in {}",
          owner.pipeline(),
          lane,
          what,
          actual,
          expected,
          owner.sql().table);
    }
  }

  /** {@code last_error} is text: no NUL characters, bounded length. */
  static String clean(String error) {
    String s = error.replace('\0', ' ');
    return s.length() <= MAX_ERROR_CHARS ? s : s.substring(0, MAX_ERROR_CHARS - 3) + "...";
  }

  private static final class Batches {
    final List<Long> published = new ArrayList<>();
    final List<Settlement.Retry> retries = new ArrayList<>();
    final List<Settlement.DeadLetter> deadLetters = new ArrayList<>();
  }
}
