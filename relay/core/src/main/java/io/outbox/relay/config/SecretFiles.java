package io.outbox.relay.config;

import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigOrigin;
import com.typesafe.config.ConfigOriginFactory;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import com.typesafe.config.ConfigValueType;
import io.outbox.relay.spi.SettingsProblem;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Reads secrets from files: wherever a secret key {@code X} (a key {@link SecretMasker} masks, such
 * as {@code database.password}, {@code sink.rabbitmq.password} or {@code sink.kafka.producer."ssl.
 * key.password"}) may be written, {@code X-file = /run/secrets/x} may be written instead. The file
 * is read once when the configuration is loaded, as UTF-8, with trailing line breaks removed, and
 * its content becomes the value of {@code X}; {@code X-file} itself disappears. A missing or
 * unreadable file, an empty one, or both {@code X} and {@code X-file} set is a problem naming the
 * key and the path, never the content.
 */
final class SecretFiles {

  /** The suffix that turns a secret key into a file reference. */
  static final String SUFFIX = "-file";

  private SecretFiles() {}

  /**
   * {@code object} (found at {@code path}) with every secret file reference replaced by the file's
   * content; problems are added to {@code problems}.
   */
  static ConfigObject resolve(
      ConfigObject object, String path, Problems problems, SecretMasker secrets) {
    Map<String, ConfigValue> copy = new LinkedHashMap<>();
    boolean changed = false;
    for (Map.Entry<String, ConfigValue> e : object.entrySet()) {
      String key = e.getKey();
      ConfigValue value = e.getValue();
      String keyPath = path + "." + ConfigUtil.joinPath(key);
      if (value instanceof ConfigObject child) {
        ConfigObject resolved = resolve(child, keyPath, problems, secrets);
        changed |= resolved != child;
        copy.put(key, resolved);
      } else if (isReference(key, path, secrets)) {
        changed = true;
        String secretKey = key.substring(0, key.length() - SUFFIX.length());
        ConfigValue inline = object.get(secretKey);
        if (inline != null && isSet(inline)) {
          problems.add(
              keyPath,
              "set either "
                  + secretKey
                  + " or "
                  + key
                  + ", not both (the other one is at "
                  + SettingsProblem.where(inline.origin())
                  + ")",
              value.origin());
          continue;
        }
        if (value.valueType() == ConfigValueType.NULL) {
          continue; // an unset ${?VAR} or an explicit null: no file
        }
        String content = read(keyPath, value, problems);
        if (content != null) {
          // Not the file's own origin: a value read from a secret file is not plain text there.
          ConfigOrigin origin =
              ConfigOriginFactory.newSimple(
                  "secret file "
                      + value.unwrapped()
                      + " ("
                      + SettingsProblem.where(value.origin())
                      + ")");
          copy.put(secretKey, ConfigValueFactory.fromAnyRef(content).withOrigin(origin));
        }
      } else if (!copy.containsKey(key)) {
        copy.put(key, value);
      }
    }
    if (!changed) {
      return object;
    }
    return ConfigValueFactory.fromMap(copy).withOrigin(object.origin());
  }

  /** Whether {@code key} (in the object at {@code parent}) names a file holding a secret. */
  static boolean isReference(String key, String parent, SecretMasker secrets) {
    if (!key.endsWith(SUFFIX) || key.length() == SUFFIX.length()) {
      return false;
    }
    String secretKey = key.substring(0, key.length() - SUFFIX.length());
    return secrets.isSecret(parent + "." + ConfigUtil.joinPath(secretKey));
  }

  private static boolean isSet(ConfigValue value) {
    return switch (value.valueType()) {
      case NULL -> false;
      case STRING -> !((String) value.unwrapped()).isEmpty();
      default -> true;
    };
  }

  private static String read(String keyPath, ConfigValue value, Problems problems) {
    if (value.valueType() != ConfigValueType.STRING) {
      problems.add(
          keyPath,
          "must be the path of a file holding the secret, got a "
              + value.valueType().name().toLowerCase(Locale.ROOT),
          value.origin());
      return null;
    }
    String file = (String) value.unwrapped();
    String why;
    try {
      String content = stripTrailingLineBreaks(Files.readString(Path.of(file)));
      if (!content.isEmpty()) {
        return content;
      }
      why = "is empty";
    } catch (NoSuchFileException e) {
      why = "does not exist";
    } catch (CharacterCodingException e) {
      why = "is not UTF-8 text";
    } catch (InvalidPathException e) {
      why = "is not a valid path";
    } catch (IOException | SecurityException e) {
      why =
          Files.isDirectory(Path.of(file))
              ? "is a directory, not a file"
              : "cannot be read (" + e.getClass().getSimpleName() + ")";
    }
    problems.add(keyPath, "the secret file \"" + file + "\" " + why, value.origin());
    return null;
  }

  private static String stripTrailingLineBreaks(String s) {
    int end = s.length();
    while (end > 0 && (s.charAt(end - 1) == '\n' || s.charAt(end - 1) == '\r')) {
      end--;
    }
    return s.substring(0, end);
  }
}
