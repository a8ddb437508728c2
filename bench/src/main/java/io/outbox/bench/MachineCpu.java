package io.outbox.bench;

import java.util.Locale;
import oshi.SystemInfo;
import oshi.hardware.CentralProcessor;
import oshi.hardware.CentralProcessor.TickType;

/**
 * The whole machine's CPU time at one moment, summed over every core (OSHI's system CPU ticks):
 * what was busy and what was idle (idle and iowait); and the machine's load average.
 *
 * @param busyMillis user, nice, system, irq, softirq and steal time
 * @param idleMillis idle and iowait time
 */
record MachineCpu(long busyMillis, long idleMillis) {

  /** Below this share of idle CPU a run measured a saturated machine, not the relay. */
  static final double SATURATED_IDLE_SHARE = 0.15;

  /** Reads the sample; null when the platform gives no CPU ticks. */
  static MachineCpu now() {
    try {
      long[] t = Processor.CPU.getSystemCpuLoadTicks();
      long idle = t[TickType.IDLE.getIndex()] + t[TickType.IOWAIT.getIndex()];
      long busy = -idle;
      for (long v : t) {
        busy += v;
      }
      return busy + idle == 0 ? null : new MachineCpu(busy, idle);
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }

  /** The share of the machine's CPU time that was idle since {@code before}. */
  double idleShareSince(MachineCpu before) {
    long busy = busyMillis - before.busyMillis;
    long idle = idleMillis - before.idleMillis;
    return busy + idle == 0 ? 1 : (double) idle / (busy + idle);
  }

  /** The load averages over 1, 5 and 15 minutes, e.g. {@code 0.93 2.02 1.39}; else "unknown". */
  static String loadAverage() {
    try {
      double[] load = Processor.CPU.getSystemLoadAverage(3);
      if (load[0] < 0) {
        return "unknown";
      }
      return String.format(Locale.ROOT, "%.2f %.2f %.2f", load[0], load[1], load[2]);
    } catch (RuntimeException | LinkageError e) {
      return "unknown";
    }
  }

  /** OSHI's processor, made once (it reads the CPU's description when made). */
  private static final class Processor {
    static final CentralProcessor CPU = new SystemInfo().getHardware().getProcessor();
  }
}
