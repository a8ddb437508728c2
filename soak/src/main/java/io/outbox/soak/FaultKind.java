package io.outbox.soak;

/** The faults the soak draws from, one at a time. */
enum FaultKind {
  /** SIGKILL of a relay process, restarted at once. */
  SIGKILL(true),
  /** SIGTERM of a relay process (graceful stop), restarted once it exited. */
  SIGTERM(true),
  /** SIGSTOP of a relay process for 5-30 s, then SIGCONT. */
  SIGSTOP(true),
  /** {@code pg_terminate_backend} of every session of both relays. */
  TERMINATE_SESSIONS(false),
  /** The broker stopped for a few seconds, then started again with its data. */
  BROKER_RESTART(false),
  /** One relay's database connections black-holed (packets dropped) for 5-30 s. */
  DATABASE_BLACKHOLE(true),
  /**
   * The broker killed (SIGKILL), whatever it was doing (with the writers busy, often inside a
   * lane's commit), and started again with its data at once. Drawn only by the exactly-once soak.
   */
  BROKER_KILL(false);

  /** The faults an at-least-once soak draws from (its seeds draw as before). */
  static final java.util.List<FaultKind> AT_LEAST_ONCE =
      java.util.List.of(
          SIGKILL, SIGTERM, SIGSTOP, TERMINATE_SESSIONS, BROKER_RESTART, DATABASE_BLACKHOLE);

  /** The faults an exactly-once soak draws from. */
  static final java.util.List<FaultKind> EXACTLY_ONCE = java.util.List.of(values());

  private final boolean targetsOneRelay;

  FaultKind(boolean targetsOneRelay) {
    this.targetsOneRelay = targetsOneRelay;
  }

  /** Whether the fault hits one relay process (drawn: the active one three times in four). */
  boolean targetsOneRelay() {
    return targetsOneRelay;
  }

  /** The name in reports, e.g. {@code database-blackhole}. */
  String label() {
    return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }
}
