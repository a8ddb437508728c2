package io.outbox.relay.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.util.ContextInitializer;
import ch.qos.logback.core.joran.spi.JoranException;
import java.util.Locale;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * How log lines look: {@code plain} text or {@code json} (one object per line with an ISO-8601
 * timestamp and the pipeline and lane as fields: {@code outbox-relay-log-json.xml}). Chosen by the
 * global option {@code --log-format} or the environment variable {@value #ENV}; {@code logback.xml}
 * picks the appender named after the value.
 */
enum LogFormat {
  PLAIN,
  JSON;

  /** The environment variable (also read as a system property) naming the format. */
  static final String ENV = "OUTBOX_LOG_FORMAT";

  /** The appender name in {@code logback.xml}. */
  String appender() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The format named by {@value #ENV}, or {@link #PLAIN} when it is unset.
   *
   * @throws IllegalArgumentException naming the variable and the bad value
   */
  static LogFormat fromEnvironment(String value) {
    if (value == null || value.isBlank()) {
      return PLAIN;
    }
    for (LogFormat f : values()) {
      if (f.appender().equalsIgnoreCase(value.strip())) {
        return f;
      }
    }
    throw new IllegalArgumentException(
        ENV + " must be 'plain' or 'json', got '" + value.strip() + "'");
  }

  /**
   * Reconfigures logging for this format when it is not the one logback started with (the
   * configuration file is read again; a {@code -Dlogback.configurationFile} of the user's is kept).
   */
  void apply() {
    String current = System.getProperty(ENV, System.getenv(ENV));
    if (appender().equals(current == null ? PLAIN.appender() : current)) {
      return;
    }
    System.setProperty(ENV, appender());
    ILoggerFactory factory = LoggerFactory.getILoggerFactory();
    if (factory instanceof LoggerContext context) {
      context.reset();
      try {
        new ContextInitializer(context).autoConfig();
      } catch (JoranException e) {
        System.err.println("cannot configure logging for --log-format " + appender() + ": " + e);
      }
    }
  }
}
