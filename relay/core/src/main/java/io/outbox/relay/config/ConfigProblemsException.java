package io.outbox.relay.config;

import java.util.List;

/**
 * The configuration is unusable; carries every problem found, not just the first. Its message lists
 * them one per line.
 */
public class ConfigProblemsException extends RuntimeException {

  private final transient List<ConfigProblem> problems;

  /**
   * @param source what was read, e.g. the config file's path, for the first line of the message
   * @param problems at least one problem
   */
  public ConfigProblemsException(String source, List<ConfigProblem> problems) {
    super(message(source, problems));
    if (problems.isEmpty()) {
      throw new IllegalArgumentException("no problems");
    }
    this.problems = List.copyOf(problems);
  }

  /** Every problem, in the order found. */
  public List<ConfigProblem> problems() {
    return problems;
  }

  private static String message(String source, List<ConfigProblem> problems) {
    StringBuilder sb = new StringBuilder();
    sb.append("invalid configuration");
    if (source != null) {
      sb.append(' ').append(source);
    }
    sb.append(" (")
        .append(problems.size())
        .append(problems.size() == 1 ? " problem" : " problems")
        .append("):");
    for (ConfigProblem p : problems) {
      sb.append(System.lineSeparator()).append("  ").append(p);
    }
    return sb.toString();
  }
}
