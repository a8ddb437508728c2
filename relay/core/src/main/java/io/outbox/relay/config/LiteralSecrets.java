package io.outbox.relay.config;

import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigOrigin;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.outbox.relay.spi.SettingsProblem;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds secrets written in plain text in a config file: a secret key ({@link
 * SecretMasker#isSecret}) with a non-empty value whose origin is a file, or a URI/URL with an
 * embedded password there. Values from the environment ({@code ${?VAR}}), from a secret file
 * ({@code X-file}) or from a {@code reference.conf} are fine. The relay warns about them; it does
 * not refuse them (a local demo may keep {@code guest:guest}).
 */
public final class LiteralSecrets {

  private LiteralSecrets() {}

  /**
   * One warning per plain-text secret (a value repeated into several pipelines from {@code
   * pipeline-defaults} once), naming the key and {@code file:line}, never the value.
   */
  public static List<String> warnings(LoadedConfig loaded) {
    Map<String, String> byOrigin = new LinkedHashMap<>();
    collect(loaded.effective().root(), "outbox-relay", loaded.secrets(), byOrigin);
    List<String> warnings = new ArrayList<>();
    byOrigin.forEach(
        (where, path) ->
            warnings.add(
                path
                    + " holds a secret written in plain text at "
                    + where
                    + "; take it from the environment (${?VAR}) or a file (a -file key such as"
                    + " password-file), see docs/security.md"));
    return warnings;
  }

  private static void collect(
      ConfigObject object, String path, SecretMasker secrets, Map<String, String> byOrigin) {
    for (Map.Entry<String, ConfigValue> e : object.entrySet()) {
      String keyPath = path + "." + ConfigUtil.joinPath(e.getKey());
      ConfigValue value = e.getValue();
      if (value instanceof ConfigObject child) {
        collect(child, keyPath, secrets, byOrigin);
      } else if (isPlainTextSecret(keyPath, value, secrets)) {
        byOrigin.putIfAbsent(SettingsProblem.where(value.origin()), keyPath);
      }
    }
  }

  private static boolean isPlainTextSecret(String path, ConfigValue value, SecretMasker secrets) {
    ConfigOrigin origin = value.origin();
    if (origin == null
        || origin.filename() == null
        || origin.resource() != null // a reference.conf
        || value.valueType() == ConfigValueType.NULL
        || value.valueType() == ConfigValueType.LIST) {
      return false;
    }
    String text = String.valueOf(value.unwrapped());
    if (text.isEmpty()) {
      return false;
    }
    return secrets.isSecret(path) || !SecretMasker.maskEmbedded(text).equals(text);
  }
}
