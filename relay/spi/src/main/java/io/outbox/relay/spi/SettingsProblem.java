package io.outbox.relay.spi;

import com.typesafe.config.ConfigOrigin;
import java.util.Objects;

/**
 * One thing wrong with the configuration: the relay's own settings and every plug-in's.
 *
 * @param path the full key path, e.g. {@code
 *     outbox-relay.pipelines.orders.sink.kafka.producer.acks}
 * @param message what is wrong, naming the bad value (never a secret's value)
 * @param origin where the value was written, as {@code file:line}, or {@code null} when unknown
 */
public record SettingsProblem(String path, String message, String origin) {

  public SettingsProblem {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(message, "message");
  }

  /** A problem whose origin is not known (yet). */
  public SettingsProblem(String path, String message) {
    this(path, message, null);
  }

  /** A problem whose origin is taken from a config value's origin (may be {@code null}). */
  public static SettingsProblem of(String path, String message, ConfigOrigin origin) {
    return new SettingsProblem(path, message, where(origin));
  }

  /** {@code file:line} (or {@code resource:line}) of an origin, or {@code null}. */
  public static String where(ConfigOrigin origin) {
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
