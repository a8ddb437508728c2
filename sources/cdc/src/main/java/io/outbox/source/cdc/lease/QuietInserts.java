package io.outbox.source.cdc.lease;

import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the outbox's insert trigger from notifying while this instance streams: the trigger of
 * migration V6 skips its {@code NOTIFY} while the advisory lock {@code (wake key, 1)} is held
 * exclusively (the polling source's wake gate holds it while its lanes are busy), and the CDC
 * source reads the change stream, never a notification. Since V7 the trigger notifies only while a
 * relay listens, so this matters while a polling relay of another pipeline listens on the same
 * outbox, and on a table migrated only to V6; there, without it, every insert of the application
 * would notify, and PostgreSQL commits notifying transactions one at a time. Held on the leader
 * session, so it ends with the leadership (the session closes); taken when the lease is taken and,
 * while another session still holds it (a frozen instance before this one, or another pipeline's
 * polling gate on the same outbox, which then holds it while busy), tried again at every renewal.
 */
final class QuietInserts {

  private static final Logger log = LoggerFactory.getLogger(QuietInserts.class);

  private final int key;
  private final String pipeline;
  private final String table;

  // Both guarded by the lease keeper's lock, which calls take. A lease taken again comes with a
  // new session, which does not hold the gate whatever happened to the old one.
  private Connection holder;
  private boolean logged;

  QuietInserts(OutboxTables tables, String pipeline) {
    this.key = tables.wakeLockKey();
    this.pipeline = pipeline;
    this.table = tables.displayTable();
  }

  /** Takes the gate on the leader {@code session} unless it holds it already; never waits. */
  void take(Connection session) throws SQLException {
    if (holder == session) {
      return;
    }
    boolean held;
    try (PreparedStatement ps = session.prepareStatement("SELECT pg_try_advisory_lock(?, 1)")) {
      ps.setInt(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        held = rs.getBoolean(1);
      }
    }
    holder = held ? session : null;
    if (!held && !logged) {
      logged = true;
      log.info(
          "pipeline {}: another session holds the wake gate of {} (an instance before this one,"
              + " or a polling pipeline on the same table): inserts may notify until it lets go",
          pipeline,
          table);
    } else if (held) {
      logged = false;
    }
  }
}
