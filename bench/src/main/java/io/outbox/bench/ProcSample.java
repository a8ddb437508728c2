package io.outbox.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * CPU time and memory of a process at one moment, read from {@code /proc/<pid>/stat} (user + system
 * time) and {@code /proc/<pid>/status} ({@code VmHWM}: the peak resident set size).
 *
 * @param cpuSeconds user + system CPU time so far, in seconds
 * @param peakRssBytes the highest resident set size so far, in bytes
 */
record ProcSample(double cpuSeconds, long peakRssBytes) {

  /** Linux's USER_HZ: /proc reports CPU times in these ticks; 100 on every usual kernel. */
  private static final double TICKS_PER_SECOND = 100.0;

  /** Reads the sample of a live process; null when /proc has no entry for it (not Linux, gone). */
  static ProcSample of(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      // The command name (field 2) may contain spaces; the fields after its ')' are fixed.
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
      long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
      long hwm = 0;
      List<String> status = Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"));
      for (String line : status) {
        if (line.startsWith("VmHWM:")) {
          hwm = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
      return new ProcSample(ticks / TICKS_PER_SECOND, hwm);
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
