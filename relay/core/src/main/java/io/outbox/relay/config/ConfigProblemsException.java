package io.outbox.relay.config;

import io.outbox.relay.spi.SettingsProblem;
import java.util.List;

/**
 * The configuration is unusable; carries every problem found, not just the first. Its message lists
 * them one per line.
 */
public class ConfigProblemsException extends RuntimeException {

  private final transient List<SettingsProblem> problems;

  /**
   * @param source what was read, e.g. the config file's path, for the first line of the message
   * @param problems at least one problem
   */
  public ConfigProblemsException(String source, List<SettingsProblem> problems) {
    super(message(source, problems));
    if (problems.isEmpty()) {
      throw new IllegalArgumentException("no problems");
    }
    this.problems = List.copyOf(problems);
  }

  /** Every problem, in the order found. */
  public List<SettingsProblem> problems() {
    return problems;
  }

  private static String message(String source, List<SettingsProblem> problems) {
    StringBuilder sb = new StringBuilder();
    sb.append("invalid configuration");
    if (source != null) {
      sb.append(' ').append(source);
    }
    sb.append(" (")
        .append(problems.size())
        .append(problems.size() == 1 ? " problem" : " problems")
        .append("):");
    for (SettingsProblem p : problems) {
      sb.append(System.lineSeparator()).append("  ").append(p);
    }
    return sb.toString();
  }
}
