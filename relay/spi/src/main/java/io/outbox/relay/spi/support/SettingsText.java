package io.outbox.relay.spi.support;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.Map;

/** A settings record as text for logs and messages, its secrets replaced. */
public final class SettingsText {

  private SettingsText() {}

  /**
   * {@code settings} as a record prints itself, {@code Name[a=1, b=2]}, but each component named in
   * {@code shownInstead} printed as the value given there (e.g. {@code "****"}, or a URL with its
   * password hidden).
   *
   * @param settings a public record
   * @param shownInstead what to print for the components that hold secrets, by component name
   */
  public static String of(Record settings, Map<String, ?> shownInstead) {
    StringBuilder out = new StringBuilder(settings.getClass().getSimpleName()).append('[');
    RecordComponent[] components = settings.getClass().getRecordComponents();
    for (int i = 0; i < components.length; i++) {
      String name = components[i].getName();
      out.append(i == 0 ? "" : ", ").append(name).append('=');
      if (shownInstead.containsKey(name)) {
        out.append(shownInstead.get(name));
      } else {
        try {
          out.append(components[i].getAccessor().invoke(settings));
        } catch (IllegalAccessException | InvocationTargetException e) {
          throw new IllegalStateException("cannot read " + name + " of a settings record", e);
        }
      }
    }
    return out.append(']').toString();
  }

  /** {@code "****"} for a secret that is set, {@code unset} for one that is not. */
  public static String secret(Object value, String unset) {
    return value == null ? unset : "****";
  }
}
