package io.outbox.relay.config;

import com.typesafe.config.ConfigOrigin;
import java.util.Objects;

/**
 * One thing wrong with the configuration.
 *
 * @param path the full key path, e.g. {@code outbox-relay.pipelines.orders.retry.initial-backoff}
 * @param message what is wrong, naming the bad value (never a secret's value)
 * @param origin where the value was written, as {@code file:line}, or {@code null} when unknown
 */
public record ConfigProblem(String path, String message, String origin) {

  public ConfigProblem {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(message, "message");
  }

  /** A problem whose origin is taken from a config value's origin (may be {@code null}). */
  static ConfigProblem of(String path, String message, ConfigOrigin origin) {
    return new ConfigProblem(path, message, describe(origin));
  }

  /** {@code file:line} (or {@code resource:line}) of an origin, or {@code null}. */
  static String describe(ConfigOrigin origin) {
    if (origin == null) {
      return null;
    }
    String where =
        origin.filename() != null
            ? origin.filename()
            : origin.resource() != null ? origin.resource() : origin.description();
    return origin.lineNumber() > 0 ? where + ":" + origin.lineNumber() : where;
  }

  /** {@code path: message (file:line)}. */
  @Override
  public String toString() {
    return path + ": " + message + (origin == null ? "" : " (" + origin + ")");
  }
}
