package io.outbox.soak;

import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

/**
 * {@code scripts/soak.sh}: runs one soak and prints its report. Exit 0 when no invariant was
 * broken, 1 when one was, 2 for a usage error, 3 when the soak itself could not run.
 */
public final class SoakMain {
  private SoakMain() {}

  public static void main(String[] args) {
    SoakOptions options;
    try {
      Path runs = Path.of("soak", "target", "soak-runs");
      String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
      options = SoakOptions.parse(args, runs.resolve(stamp).toAbsolutePath());
    } catch (IllegalArgumentException e) {
      System.err.println("soak: " + e.getMessage());
      System.err.println(SoakOptions.USAGE);
      System.exit(2);
      return;
    }
    SoakReport report;
    try {
      report = new Soak(options).run();
    } catch (Exception e) {
      System.err.println("soak: could not run: " + e);
      e.printStackTrace(System.err);
      System.exit(3);
      return;
    }
    System.out.print(options.json() ? report.json() + "\n" : report.text());
    System.exit(report.passed() ? 0 : 1);
  }
}
