package io.outbox.source.polling;

/**
 * The outbox's wake locks in {@code pg_locks}: two-int advisory locks {@code (wake key, n)}, shown
 * as {@code classid} = the key, {@code objid} = {@code n}, {@code objsubid} = 2.
 */
final class WakeLocks {

  private WakeLocks() {}

  /**
   * A condition on {@code pg_locks l}: {@code (key, n)} granted in exclusive mode in this database.
   * Its one parameter is {@link #classid}.
   */
  static String heldExclusively(int n) {
    return "l.locktype = 'advisory' AND l.granted AND l.objsubid = 2"
        + " AND l.mode = 'ExclusiveLock'"
        + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        + " AND l.classid = ?::bigint::oid AND l.objid = "
        + n;
  }

  /** The key as {@code pg_locks.classid} shows it (an unsigned 32-bit oid). */
  static long classid(int key) {
    return key & 0xffff_ffffL;
  }
}
