package io.outbox.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The whole machine's CPU time at one moment, from the first line of {@code /proc/stat}: what was
 * busy and what was idle (idle and iowait), in ticks summed over every core.
 *
 * @param busyTicks user, nice, system, irq, softirq and steal time
 * @param idleTicks idle and iowait time
 */
record MachineCpu(long busyTicks, long idleTicks) {

  /** Below this share of idle CPU a run measured a saturated machine, not the relay. */
  static final double SATURATED_IDLE_SHARE = 0.15;

  /** Reads the sample; null when /proc/stat cannot be read (not Linux). */
  static MachineCpu now() {
    try {
      String first = Files.readAllLines(Path.of("/proc/stat")).get(0);
      String[] f = first.trim().split("\\s+");
      long busy = 0;
      long idle = 0;
      for (int i = 1; i < f.length && i <= 8; i++) {
        long v = Long.parseLong(f[i]);
        if (i == 4 || i == 5) {
          idle += v;
        } else {
          busy += v;
        }
      }
      return new MachineCpu(busy, idle);
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** The share of the machine's CPU time that was idle since {@code before}. */
  double idleShareSince(MachineCpu before) {
    long busy = busyTicks - before.busyTicks;
    long idle = idleTicks - before.idleTicks;
    return busy + idle == 0 ? 1 : (double) idle / (busy + idle);
  }
}
