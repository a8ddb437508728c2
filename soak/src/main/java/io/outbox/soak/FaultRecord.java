package io.outbox.soak;

import java.time.Duration;
import java.time.Instant;

/**
 * A fault the soak injected.
 *
 * @param number 1, 2, ... in injection order
 * @param kind what was done
 * @param target {@code a (active)}, {@code b (standby)}, {@code both relays} or {@code broker}
 * @param start when the fault began
 * @param end when it was healed (the process restarted or thawed, the network or broker back)
 * @param detail how long, which signal, what the relay did (exit code), in a few words
 * @param activeAgain from {@code start} to the first "active" log line of either relay before the
 *     next fault, or {@code null} when no relay became active again (nothing was handed over)
 */
record FaultRecord(
    int number,
    FaultKind kind,
    String target,
    Instant start,
    Instant end,
    String detail,
    Duration activeAgain) {

  /** The same fault with its measured take-over time. */
  FaultRecord withActiveAgain(Duration measured) {
    return new FaultRecord(number, kind, target, start, end, detail, measured);
  }

  /** The same fault with another detail. */
  FaultRecord withDetail(String newDetail) {
    return new FaultRecord(number, kind, target, start, end, newDetail, activeAgain);
  }

  /** {@code #3 sigkill a (active)}. */
  String label() {
    return "#" + number + " " + kind.label() + " " + target;
  }
}
