package io.outbox.bench;

import io.outbox.relay.cli.Main;
import java.io.PrintWriter;

/**
 * The benchmark harness's entry point ({@code ./outbox-relay bench ...} runs it): {@link
 * BenchCommand} with the relay's command-line conventions (exit codes, error reports).
 */
public final class BenchMain {

  private BenchMain() {}

  public static void main(String[] args) {
    System.exit(
        execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
  }

  /** Runs the harness writing to {@code out} and {@code err}; returns the exit code. */
  public static int execute(PrintWriter out, PrintWriter err, String... args) {
    return Main.execute(new BenchCommand(), out, err, args);
  }
}
