package io.outbox.relay.config;

import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigList;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SecretKeys.Answer;
import io.outbox.relay.spi.SourceProvider;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Decides which settings are secrets and hides them. A key is a secret when its owner says so: the
 * relay for {@code database.password}, the source plug-ins for JDBC driver properties under {@code
 * database.properties} (the driver's own secret properties), and each plug-in for its subtree
 * ({@code sink.<type>}, {@code source.<type>}; Kafka answers from the client's {@code ConfigDef}
 * type {@code PASSWORD}) through {@link SecretKeys}. Only a key no owner knows (a pass-through
 * property the client does not declare, a plug-in that does not answer) falls back to its name:
 * {@code password}, {@code secret}, {@code token}, ... or {@code sasl.jaas.config}. The password in
 * a URI's user info ({@code amqp://user:******@host}) and {@code password=}-like parameters of URLs
 * ({@code sslpassword=}, {@code token=}, ...) are hidden in every value.
 */
public final class SecretMasker {

  /** What a hidden value is shown as. */
  public static final String MASK = "******";

  private static final List<String> SECRET_WORDS =
      List.of("password", "passwd", "secret", "token", "credential", "apikey", "api-key");

  // scheme://user:password@host -> keeps scheme and user, hides the password
  private static final Pattern URI_USER_INFO =
      Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://[^/\\s:@]*):([^@/\\s]*)@");
  // ...?user=app&password=secret (also sslpassword=, client_secret=, token=) -> hides the value
  private static final Pattern PASSWORD_PARAMETER =
      Pattern.compile("(?i)([?&;][a-z0-9_.-]*(?:password|passwd|pwd|secret|token)=)[^&;\\s]*");

  private final Map<String, SecretKeys> sinks;
  private final Map<String, SecretKeys> sources;
  private final List<SecretKeys> driverProperties;

  private SecretMasker(
      Map<String, SecretKeys> sinks,
      Map<String, SecretKeys> sources,
      List<SecretKeys> driverProperties) {
    this.sinks = Map.copyOf(sinks);
    this.sources = Map.copyOf(sources);
    this.driverProperties = List.copyOf(driverProperties);
  }

  /** Asks the plug-ins of {@code plugins} about their keys. */
  static SecretMasker of(Plugins plugins) {
    Map<String, SecretKeys> sinks = new LinkedHashMap<>();
    plugins.sinkTypes().forEach(t -> sinks.put(t, plugins.sink(t).orElseThrow().secretKeys()));
    Map<String, SecretKeys> sources = new LinkedHashMap<>();
    List<SecretKeys> driver = new ArrayList<>();
    for (String t : plugins.sourceTypes()) {
      SourceProvider p = plugins.source(t).orElseThrow();
      sources.put(t, p.secretKeys());
      driver.add(p.databaseSecretKeys());
    }
    return new SecretMasker(sinks, sources, driver);
  }

  /** Knows no plug-in: only the relay's own keys and the name-based fallback. */
  public static SecretMasker withoutPlugins() {
    return new SecretMasker(Map.of(), Map.of(), List.of());
  }

  /**
   * Whether the key at {@code path} (a full path, e.g. {@code outbox-relay.pipelines.orders.sink.
   * kafka.producer."ssl.keystore.key"}) holds a secret.
   */
  public boolean isSecret(String path) {
    List<String> keys = split(path);
    Answer answer = owner(keys);
    if (answer != Answer.UNKNOWN) {
      return answer == Answer.SECRET;
    }
    return byName(path);
  }

  /** What the key's owner says, or UNKNOWN. */
  private Answer owner(List<String> keys) {
    List<String> rel = pipelineRelative(keys);
    if (rel == null || rel.size() < 2) {
      return Answer.UNKNOWN;
    }
    String kind = rel.get(0);
    if (kind.equals("database")) {
      if (rel.size() == 2 && rel.get(1).equals("password")) {
        return Answer.SECRET;
      }
      if (rel.size() >= 3 && rel.get(1).equals("properties")) {
        return combined(driverProperties, String.join(".", rel.subList(2, rel.size())));
      }
      return Answer.UNKNOWN;
    }
    Map<String, SecretKeys> plugins =
        kind.equals("sink") ? sinks : kind.equals("source") ? sources : Map.of();
    SecretKeys keysOfPlugin = plugins.get(rel.get(1));
    if (keysOfPlugin == null || rel.size() < 3) {
      return Answer.UNKNOWN;
    }
    return combined(List.of(keysOfPlugin), String.join(".", rel.subList(2, rel.size())));
  }

  /** SECRET if any says so, else NOT_SECRET if any knows the key, else UNKNOWN. */
  private static Answer combined(List<SecretKeys> owners, String key) {
    Answer result = Answer.UNKNOWN;
    for (SecretKeys owner : owners) {
      Answer a = owner.of(key);
      if (a == Answer.SECRET) {
        return a;
      }
      if (a == Answer.NOT_SECRET) {
        result = a;
      }
    }
    return result;
  }

  /** The keys after {@code outbox-relay.pipelines.<name>} or {@code ...pipeline-defaults}. */
  private static List<String> pipelineRelative(List<String> keys) {
    if (keys.size() >= 3 && keys.get(0).equals("outbox-relay")) {
      if (keys.get(1).equals("pipeline-defaults")) {
        return keys.subList(2, keys.size());
      }
      if (keys.get(1).equals("pipelines") && keys.size() >= 4) {
        return keys.subList(3, keys.size());
      }
    }
    return null;
  }

  private static List<String> split(String path) {
    try {
      return ConfigUtil.splitPath(path);
    } catch (ConfigException e) {
      return List.of(path.replace("\"", "").split("\\."));
    }
  }

  /**
   * The fallback for keys no owner knows: the last key of the path contains a secret word, or the
   * path ends with {@code sasl.jaas.config}.
   */
  static boolean byName(String path) {
    String p = path.toLowerCase(Locale.ROOT).replace("\"", "");
    if (p.endsWith("sasl.jaas.config")) {
      return true;
    }
    String last = p.substring(p.lastIndexOf('.') + 1);
    for (String word : SECRET_WORDS) {
      if (last.contains(word)) {
        return true;
      }
    }
    return false;
  }

  /** Hides a password embedded in a URI or URL; other text is returned unchanged. */
  public static String maskEmbedded(String value) {
    if (value == null || value.indexOf(':') < 0 && value.indexOf('=') < 0) {
      return value;
    }
    String masked = URI_USER_INFO.matcher(value).replaceAll("$1:" + MASK + "@");
    return PASSWORD_PARAMETER.matcher(masked).replaceAll("$1" + MASK);
  }

  /**
   * How the value of {@code path} may be shown: masked entirely, or with embedded secrets hidden.
   */
  public String display(String path, String value) {
    if (value == null) {
      return null;
    }
    return isSecret(path) ? MASK : maskEmbedded(value);
  }

  /**
   * A copy of {@code object} (found at {@code path}) with every secret replaced by {@link #MASK}.
   * Origins are kept.
   */
  public ConfigObject mask(ConfigObject object, String path) {
    Map<String, Object> copy = new LinkedHashMap<>();
    for (Map.Entry<String, ConfigValue> e : object.entrySet()) {
      copy.put(e.getKey(), mask(e.getValue(), path + "." + quoteIfNeeded(e.getKey())));
    }
    return ConfigValueFactory.fromMap(copy).withOrigin(object.origin());
  }

  private ConfigValue mask(ConfigValue value, String path) {
    switch (value.valueType()) {
      case OBJECT:
        return mask((ConfigObject) value, path);
      case LIST:
        List<ConfigValue> items = new ArrayList<>();
        for (ConfigValue item : (ConfigList) value) {
          items.add(mask(item, path));
        }
        return ConfigValueFactory.fromIterable(items).withOrigin(value.origin());
      case NULL:
        return value;
      case STRING:
        return ConfigValueFactory.fromAnyRef(display(path, (String) value.unwrapped()))
            .withOrigin(value.origin());
      default: // NUMBER, BOOLEAN
        return isSecret(path)
            ? ConfigValueFactory.fromAnyRef(MASK).withOrigin(value.origin())
            : value;
    }
  }

  private static String quoteIfNeeded(String key) {
    return key.contains(".") ? "\"" + key + "\"" : key;
  }
}
