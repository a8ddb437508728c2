package io.outbox.relay.it;

import java.time.Duration;

/**
 * Leadership settings for the take-over tests, and the take-over bound they imply. The relay
 * promises a take-over within {@code lease-timeout + standby-check-interval + lease-timeout / 5}
 * (the sources' reference.conf): 13 s with the defaults, promised as 20 s, which leaves 7 s for a
 * busy machine (a loaded CI runner, GC, the first queries of a new leader). A test scales the lease
 * down, so that a take-over costs seconds instead of tens of them, and checks the bound its own
 * settings imply with the same 7 s: a relay that ignored the settings and waited for the default
 * lease would miss it.
 */
record Leadership(Duration leaseTimeout, Duration checkInterval) {
  /** What a busy machine may add to a take-over: the default promise's 20 s less its 13 s. */
  static final Duration BUSY_MACHINE = Duration.ofSeconds(7);

  /** Scaled down for tests: a take-over within 5.05 s, checked against 12.05 s. */
  static final Leadership FAST = new Leadership(Duration.ofSeconds(4), Duration.ofMillis(250));

  /**
   * The settings as HOCON for the inside of {@code source.polling { }} or {@code source.cdc { }}.
   */
  String settings() {
    return "lease-timeout = %dms, standby-check-interval = %dms, leadership-check-interval = %dms"
        .formatted(leaseTimeout.toMillis(), checkInterval.toMillis(), checkInterval.toMillis());
  }

  /** The same, as a pipeline key for the polling source (to merge into a pipeline's settings). */
  String polling() {
    return "source.polling { " + settings() + " }\n";
  }

  /** The take-over these settings promise on an idle machine. */
  Duration takeOver() {
    return leaseTimeout.plus(checkInterval).plus(leaseTimeout.dividedBy(5));
  }

  /** What a test checks a take-over against: {@link #takeOver()} plus {@link #BUSY_MACHINE}. */
  Duration takeOverBound() {
    return takeOver().plus(BUSY_MACHINE);
  }
}
