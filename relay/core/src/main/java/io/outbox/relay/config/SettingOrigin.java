package io.outbox.relay.config;

import com.typesafe.config.ConfigOrigin;
import io.outbox.relay.spi.SettingsProblem;
import java.net.URL;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Says where an effective setting came from, as {@code check-config} shows it: {@code file:line}
 * for the user's file, {@code env NAME} for a {@code CONFIG_FORCE_...} variable or a {@code
 * ${?NAME}} substitution, {@code default: reference.conf:line of <module>} for a module's default,
 * {@code secret file PATH (file:line)} for a value read from a secret file.
 */
final class SettingOrigin {

  /** A jar of the class path: its name without version and extension is the module. */
  private static final Pattern JAR = Pattern.compile("^jar:.*/([^/!]+?)(?:-\\d[^/!]*)?\\.jar!/.*$");

  private SettingOrigin() {}

  /** Where a value with {@code origin} came from, on one line. */
  static String describe(ConfigOrigin origin) {
    if (origin == null) {
      return "unknown";
    }
    String description = origin.description();
    if (description != null && description.startsWith(EnvironmentOverrides.ORIGIN)) {
      return "env " + description.substring(EnvironmentOverrides.ORIGIN.length());
    }
    if (origin.resource() != null) {
      String line = origin.lineNumber() > 0 ? ":" + origin.lineNumber() : "";
      return "default: " + origin.resource() + line + " of " + module(origin.url());
    }
    String where = SettingsProblem.where(origin);
    return where != null ? where : description;
  }

  /**
   * The module a class path resource belongs to: its jar's name without the version ({@code
   * outbox-relay-core}), or the directory holding it (a build's {@code target/classes}).
   */
  static String module(URL url) {
    if (url == null) {
      return "the class path";
    }
    String text = url.toString();
    Matcher jar = JAR.matcher(text);
    if (jar.matches()) {
      return jar.group(1);
    }
    String path = url.getPath();
    int slash = path.lastIndexOf('/');
    return slash > 0 ? path.substring(0, slash) : path;
  }
}
