package io.outbox.relay.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks destination templates such as {@code "outbox.${aggregate_type}"}: only the variables the
 * pipeline fills in may be used.
 */
final class DestinationTemplate {

  /** The variables a template may use. */
  static final Set<String> VARIABLES = Set.of("aggregate_type", "event_type", "aggregate_id");

  private static final Pattern VARIABLE = Pattern.compile("\\$\\{([^}]*)}");

  private DestinationTemplate() {}

  /** What is wrong with {@code template}, one message per mistake; empty when it is fine. */
  static List<String> mistakes(String template) {
    List<String> mistakes = new ArrayList<>();
    Matcher m = VARIABLE.matcher(template);
    while (m.find()) {
      if (!VARIABLES.contains(m.group(1))) {
        mistakes.add(
            "unknown variable ${"
                + m.group(1)
                + "} in \""
                + template
                + "\"; known: ${aggregate_type}, ${event_type}, ${aggregate_id}");
      }
    }
    String withoutVariables = VARIABLE.matcher(template).replaceAll("");
    if (withoutVariables.contains("${")) {
      mistakes.add("unclosed ${ in \"" + template + "\"");
    }
    return mistakes;
  }
}
