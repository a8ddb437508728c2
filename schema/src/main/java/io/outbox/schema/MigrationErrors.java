package io.outbox.schema;

import java.sql.SQLException;
import java.util.regex.Pattern;

/** Turns Flyway's and the driver's multi-line errors into one line without secrets. */
final class MigrationErrors {

  private static final Pattern PASSWORD_PARAMETER = Pattern.compile("(?i)(password=)[^&;\\s]*");
  private static final Pattern RULE = Pattern.compile("-+");

  private MigrationErrors() {}

  /**
   * Flyway's first line (which migration failed) plus the database's own error and SQL state, or
   * Flyway's whole message when no SQL error is involved (e.g. a validation failure).
   */
  static String describe(Throwable e) {
    SQLException sql = firstSqlException(e);
    String headline = e instanceof SQLException ? "" : firstLine(e.getMessage());
    if (sql == null) {
      return oneLine(e.getMessage() == null ? e.getClass().getName() : e.getMessage());
    }
    String detail = oneLine(sql.getMessage() == null ? sql.toString() : sql.getMessage());
    if (sql.getSQLState() != null) {
      detail += " [SQL state " + sql.getSQLState() + "]";
    }
    return headline.isEmpty() || detail.contains(headline) ? detail : headline + ": " + detail;
  }

  /** Masks {@code password=...} URL parameters. */
  static String redact(String text) {
    return PASSWORD_PARAMETER.matcher(text).replaceAll("$1******");
  }

  /** {@link #redact} plus any literal occurrence of the password. */
  static String hide(String text, String password) {
    String redacted = redact(text);
    return password == null || password.isEmpty() ? redacted : redacted.replace(password, "******");
  }

  static String oneLine(String text) {
    StringBuilder line = new StringBuilder();
    for (String part : text.split("\\R")) {
      String trimmed = part.strip();
      if (trimmed.isEmpty() || RULE.matcher(trimmed).matches()) {
        continue;
      }
      if (line.length() > 0) {
        line.append("; ");
      }
      line.append(trimmed);
    }
    return line.toString();
  }

  private static String firstLine(String text) {
    if (text == null) {
      return "";
    }
    String[] lines = text.strip().split("\\R", 2);
    return lines[0].strip();
  }

  private static SQLException firstSqlException(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql) {
        return sql;
      }
    }
    return null;
  }
}
