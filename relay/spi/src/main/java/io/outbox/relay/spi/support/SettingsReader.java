package io.outbox.relay.spi.support;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Checks a plug-in's settings subtree key by key and collects every problem, each with its full key
 * path and the bad value as written, instead of stopping at the first: what {@link
 * SourceProvider#validate} and {@link SinkProvider#validate} return.
 */
public final class SettingsReader {

  private final PluginContext context;
  private final Config config;
  private final List<SettingsProblem> problems = new ArrayList<>();

  /** A reader of {@code context}'s settings. */
  public SettingsReader(PluginContext context) {
    this.context = context;
    this.config = context.settings();
  }

  /**
   * A duration of at least {@code min} (or exactly zero when {@code zeroAllowed}).
   *
   * @return whether the value is valid
   */
  public boolean duration(String key, Duration min, boolean zeroAllowed) {
    Duration d;
    try {
      d = config.getDuration(key);
    } catch (ConfigException.Missing e) {
      problem(key, "must be set to a duration such as 1s");
      return false;
    } catch (ConfigException e) {
      problem(key, "must be a duration such as 1s or 500ms, got " + raw(key));
      return false;
    }
    if (zeroAllowed && d.isZero()) {
      return true;
    }
    if (d.compareTo(min) < 0) {
      problem(
          key,
          "must be at least "
              + min.toMillis()
              + "ms"
              + (zeroAllowed ? " (or 0 for none)" : "")
              + ", got "
              + raw(key));
      return false;
    }
    return true;
  }

  /** {@code true} or {@code false}. */
  public void bool(String key) {
    try {
      config.getBoolean(key);
    } catch (ConfigException.Missing e) {
      problem(key, "must be set to true or false");
    } catch (ConfigException e) {
      problem(key, "must be true or false, got " + raw(key));
    }
  }

  /** A whole number of at least 1. */
  public void positive(String key) {
    try {
      if (config.getInt(key) < 1) {
        problem(key, "must be at least 1, got " + raw(key));
      }
    } catch (ConfigException.Missing e) {
      problem(key, "must be set to a number");
    } catch (ConfigException e) {
      problem(key, "must be a whole number, got " + raw(key));
    }
  }

  /**
   * A whole number in {@code [min, max]}.
   *
   * @return whether the value is valid
   */
  public boolean intBetween(String key, int min, int max) {
    try {
      int v = config.getInt(key);
      if (v < min || v > max) {
        problem(key, "must be between " + min + " and " + max + ", got " + raw(key));
        return false;
      }
      return true;
    } catch (ConfigException.Missing e) {
      problem(key, "must be set to a number");
    } catch (ConfigException e) {
      problem(key, "must be a whole number, got " + raw(key));
    }
    return false;
  }

  /**
   * A string.
   *
   * @return the value, or {@code null} when it is missing or not a string (a problem was added)
   */
  public String string(String key) {
    try {
      return config.getString(key);
    } catch (ConfigException.Missing e) {
      problem(key, "must be set");
    } catch (ConfigException e) {
      problem(key, "must be a string, got " + raw(key));
    }
    return null;
  }

  /**
   * A string when the key is set at all (an optional secret such as a password or token).
   *
   * @return the value, or {@code null} when it is unset or not a string (a problem was added)
   */
  public String optionalString(String key) {
    return config.hasPath(key) ? string(key) : null;
  }

  /**
   * A non-empty list of strings, none of them blank or holding whitespace (names such as subjects
   * or topics).
   *
   * @param example a list to show in the messages, e.g. {@code ["outbox.>"]}
   * @param what what one entry is, e.g. {@code subject}
   * @return the list, or {@code null} when it is missing or not a list of strings (a problem was
   *     added); a list with problems is returned too
   */
  public List<String> names(String key, String what, String example) {
    List<String> names;
    try {
      names = config.getStringList(key);
    } catch (ConfigException e) {
      problem(key, "must be a list of " + what + "s such as " + example + ", got " + raw(key));
      return null;
    }
    if (names.isEmpty()) {
      problem(key, "must list at least one " + what + ", such as " + example);
    }
    for (String name : names) {
      if (name.isBlank() || name.chars().anyMatch(Character::isWhitespace)) {
        problem(key, "a " + what + " must not be empty or hold spaces: \"" + name + "\"");
      }
    }
    return names;
  }

  /**
   * A comma-separated list of URLs ({@link BrokerUrls#split}), at least one, each of which {@code
   * reason} accepts: {@code reason} gives why a URL is refused (never showing a secret), or {@code
   * null} when it is fine; each refused URL is a problem of its own.
   *
   * @return the URLs, or {@code null} when the value is missing or not a string (a problem was
   *     added)
   */
  public List<String> urls(String key, Function<String, String> reason) {
    String value = string(key);
    if (value == null) {
      return null;
    }
    List<String> urls = BrokerUrls.split(value);
    if (urls.isEmpty()) {
      problem(key, "must name at least one URL, got " + raw(key));
    }
    for (String url : urls) {
      String refused = reason.apply(url);
      if (refused != null) {
        problem(key, refused);
      }
    }
    return urls;
  }

  /**
   * A string that {@code reason} accepts: {@code reason} gives why a value is refused (never
   * showing a secret), or {@code null} when it is fine.
   */
  public void checked(String key, Function<String, String> reason) {
    String value = string(key);
    String refused = value == null ? null : reason.apply(value);
    if (refused != null) {
      problem(key, refused);
    }
  }

  /** One of {@code allowed}, as written. */
  public void oneOf(String key, String... allowed) {
    String value = string(key);
    if (value != null && !List.of(allowed).contains(value)) {
      problem(key, "must be one of " + String.join(" | ", allowed) + ", got " + raw(key));
    }
  }

  /** The pipeline runs at least one lane. */
  public void lanes() {
    if (context.lanes() < 1) {
      problems.add(
          new SettingsProblem(
              context.path() + ".lanes", "must be at least 1, got " + context.lanes()));
    }
  }

  /**
   * The leader lease of a source: {@code leadership-check-interval} (at least {@code minInterval})
   * renews a lease of {@code lease-timeout} (at least 1s), at least three times per lease.
   */
  public void leaderLease(Duration minInterval) {
    boolean renewOk = duration("leadership-check-interval", minInterval, false);
    boolean leaseOk = duration("lease-timeout", Duration.ofSeconds(1), false);
    if (renewOk && leaseOk) {
      Duration renew = config.getDuration("leadership-check-interval");
      Duration lease = config.getDuration("lease-timeout");
      if (renew.multipliedBy(3).compareTo(lease) > 0) {
        problem(
            "leadership-check-interval",
            "must be at most a third of lease-timeout ("
                + lease.toMillis()
                + " ms) so that the lease is renewed in time, got "
                + renew.toMillis()
                + " ms");
      }
    }
  }

  /**
   * A problem of {@code key} unless it is shorter than {@code longer}; both must have been read as
   * valid durations ({@link #duration}), else nothing more is said.
   *
   * @param why ends the message, e.g. {@code "a batch's WAIT would outlast the batch"}
   */
  public void shorterThan(String key, String longer, String why) {
    Duration d;
    Duration limit;
    try {
      d = config.getDuration(key);
      limit = config.getDuration(longer);
    } catch (ConfigException e) {
      return; // reported by duration()
    }
    if (d.compareTo(limit) >= 0) {
      problem(
          key,
          "must be shorter than "
              + longer
              + " ("
              + limit.toMillis()
              + " ms): "
              + why
              + ", got "
              + raw(key));
    }
  }

  /** The value of {@code key} as written in HOCON, or {@code null}. */
  public String raw(String key) {
    try {
      return config.getValue(key).render();
    } catch (ConfigException e) {
      return "null";
    }
  }

  /** Adds a problem of {@code key} (below the plug-in's subtree). */
  public void problem(String key, String message) {
    problems.add(new SettingsProblem(context.pathOf(key), message));
  }

  /**
   * The plug-in's settings subtree, once its {@code validate} found no problem.
   *
   * @param problems what the plug-in's {@code validate} found
   * @param what the plug-in, for the message, e.g. {@code Kafka sink}
   * @throws IllegalArgumentException listing every problem
   */
  public static Config valid(PluginContext context, List<SettingsProblem> problems, String what) {
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException("invalid " + what + " settings: " + problems);
    }
    return context.settings();
  }

  /** The string at {@code key} of valid settings, or {@code null} when it is unset. */
  public static String stringOrNull(Config settings, String key) {
    return settings.hasPath(key) ? settings.getString(key) : null;
  }

  /** Every problem found so far. */
  public List<SettingsProblem> problems() {
    return List.copyOf(problems);
  }
}
