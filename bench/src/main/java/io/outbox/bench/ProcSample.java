package io.outbox.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import oshi.SystemInfo;
import oshi.software.os.OSProcess;
import oshi.software.os.OperatingSystem;

// Peak RSS still read by hand (VmHWM): OSHI gives the current resident set size, not the peak.
/**
 * CPU time and memory of a process at one moment: its user + system time (OSHI) and its peak
 * resident set size ({@code VmHWM} of {@code /proc/<pid>/status}).
 *
 * @param cpuSeconds user + system CPU time so far, in seconds
 * @param peakRssBytes the highest resident set size so far, in bytes
 */
record ProcSample(double cpuSeconds, long peakRssBytes) {

  /** Reads the sample of a live process; null when there is none (gone, or not Linux). */
  static ProcSample of(long pid) {
    try {
      OSProcess process = Os.OS.getProcess((int) pid);
      if (process == null) {
        return null;
      }
      double cpu = (process.getUserTime() + process.getKernelTime()) / 1000.0;
      return new ProcSample(cpu, peakRss(pid));
    } catch (IOException | RuntimeException | LinkageError e) {
      return null;
    }
  }

  private static long peakRss(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    return 0;
  }

  /** OSHI's operating system, made once. */
  private static final class Os {
    static final OperatingSystem OS = new SystemInfo().getOperatingSystem();
  }
}
