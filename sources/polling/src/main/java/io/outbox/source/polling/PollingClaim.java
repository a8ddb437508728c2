package io.outbox.source.polling;

import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.Settlement;
import io.outbox.source.postgres.ClaimVerdicts;
import io.outbox.source.postgres.LedgerWatermarks;
import io.outbox.source.postgres.OutboxClaim;
import io.outbox.source.postgres.OutboxVerdicts;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A claim of the polling source: an open transaction holding the lane's advisory lock and the
 * claimed rows' locks until {@link #settle} commits the verdicts (one statement per kind) or {@link
 * #release} rolls back.
 */
final class PollingClaim extends OutboxClaim {

  private static final Logger log = LoggerFactory.getLogger(PollingClaim.class);

  /** What the claim needs from its source. */
  interface Owner {
    OutboxSql sql();

    OutboxVerdicts verdicts();

    OnPublish onPublish();

    String pipeline();

    /** Closes a connection that failed (not yet closed), and drops it from the pool. */
    void discard(Connection connection);

    /** Returns a healthy connection to the pool. */
    void closeQuietly(Connection connection);

    /** Called exactly once, when the claim of {@code lane} ended. */
    void ended(int lane);

    /** Whether this instance still holds the lease its claims were made under. */
    boolean leading();

    /** The epoch the claims are made under. */
    long epoch();

    /** The ledger watermark's statements. */
    LedgerWatermarks ledger();

    /** The claims by position ({@code on-publish = position}), or null. */
    PositionClaims positions();
  }

  private final Owner owner;
  private final Connection connection;
  private final PositionClaims.Read position; // null unless on-publish = position

  PollingClaim(
      Owner owner,
      int lane,
      Connection connection,
      List<OutboxEvent> events,
      PositionClaims.Read position,
      long queryNanos) {
    super(owner.pipeline(), lane, events, queryNanos);
    this.owner = owner;
    this.connection = connection;
    this.position = position;
  }

  /** What the claim read by position, or null when it settles each row. */
  PositionClaims.Read position() {
    return position;
  }

  /** The ids of its rows. */
  Long[] ids() {
    List<OutboxEvent> events = events();
    Long[] ids = new Long[events.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = events.get(i).id();
    }
    return ids;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The rows of events without a settlement are left as they were (unlocked at the commit).
   * Settlements that do not fit the claim ({@link ClaimVerdicts#of}) roll it back and throw. The
   * watermark is advanced before the settlement's commit, in its transaction.
   */
  @Override
  public Settled settle(List<Settlement> settlements, LedgerPosition ledgerPosition) {
    end();
    OutboxVerdicts.Batch verdicts = null;
    try {
      if (position == null) {
        verdicts = verdicts(owner.verdicts(), settlements);
      }
    } catch (RuntimeException e) {
      rollback();
      throw e;
    }
    boolean done = false;
    try {
      OutboxVerdicts.Written written;
      if (position == null) {
        written =
            verdicts.write(connection, owner.onPublish() == OnPublish.DELETE, owner.pipeline());
      } else {
        written = byPosition(settlements);
      }
      if (!written.complete()) {
        // Rows are locked by this claim, or passed by the lane's position under the lane's lock,
        // so only a manual intervention can cause this.
        log.warn(
            "pipeline {} lane {}: fewer rows than expected changed in {}: {}",
            owner.pipeline(),
            lane(),
            owner.sql().table,
            written);
      }
      if (ledgerPosition != null) {
        owner
            .ledger()
            .advance(
                connection, owner.pipeline(), ledgerPosition.partition(), ledgerPosition.offset());
      }
      connection.commit();
      done = true;
      return Settled.deadLettersKept(
          settlements, written.keptErrors(), OutboxVerdicts.KEPT_RETRY_DELAY);
    } catch (SQLException e) {
      throw recordingFailed(null, "claimed again", e);
    } finally {
      if (done) {
        owner.closeQuietly(connection);
      } else {
        owner.discard(connection);
      }
      owner.ended(lane());
    }
  }

  /** Settles by moving the lane's position; a moved position is a failed settlement. */
  private OutboxVerdicts.Written byPosition(List<Settlement> settlements) throws SQLException {
    try {
      return owner.positions().settle(connection, lane(), position, settlements);
    } catch (PositionSettlement.PositionMoved e) {
      throw new SQLException(e.getMessage(), e);
    }
  }

  @Override
  public String identity() {
    return "epoch " + owner.epoch();
  }

  @Override
  public boolean owned() {
    return owner.leading();
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
      log.debug(
          "pipeline {} lane {}: release failed: {}", owner.pipeline(), lane(), e.getMessage());
      owner.discard(connection);
    } finally {
      owner.ended(lane());
    }
  }
}
