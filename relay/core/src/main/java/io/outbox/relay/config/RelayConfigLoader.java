package io.outbox.relay.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigResolver;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import io.outbox.relay.spi.SettingsProblem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Reads the user's HOCON file: parses it, lays the settings of {@code CONFIG_FORCE_...} environment
 * variables over it (see {@link EnvironmentOverrides}), merges it over every {@code reference.conf}
 * on the class path, resolves substitutions ({@code ${?ENV_VAR}} from the environment) and secret
 * file references ({@code password-file = /run/secrets/db}, see {@link SecretFiles}), then
 * validates and builds the typed {@link RelaySettings} eagerly. Any problem ends in one {@link
 * ConfigProblemsException} listing all of them.
 *
 * <pre>{@code
 * RelaySettings settings = RelayConfigLoader.standard().load(Path.of("relay.conf")).settings();
 * }</pre>
 */
public final class RelayConfigLoader {

  private static final String ROOT = "outbox-relay";

  private final Map<String, String> environment;
  private final ClassLoader classLoader;
  private final Plugins plugins;

  /**
   * @param environment the variables {@code ${VAR}} and {@code ${?VAR}} resolve to, and whose
   *     {@code CONFIG_FORCE_...} ones override settings of a file
   * @param classLoader where {@code reference.conf} files and plug-ins are looked up
   * @param plugins the installed plug-ins
   */
  public RelayConfigLoader(
      Map<String, String> environment, ClassLoader classLoader, Plugins plugins) {
    this.environment = Map.copyOf(environment);
    this.classLoader = Objects.requireNonNull(classLoader, "classLoader");
    this.plugins = Objects.requireNonNull(plugins, "plugins");
  }

  /** Resolves against the process environment; plug-ins and references from the class path. */
  public static RelayConfigLoader standard() {
    return standard(System.getenv());
  }

  /** Resolves against {@code environment}; plug-ins and references from the class path. */
  public static RelayConfigLoader standard(Map<String, String> environment) {
    ClassLoader cl = Thread.currentThread().getContextClassLoader();
    if (cl == null) {
      cl = RelayConfigLoader.class.getClassLoader();
    }
    return new RelayConfigLoader(environment, cl, Plugins.load(cl));
  }

  /**
   * The names of the variables of {@code environment} that override settings ({@code
   * CONFIG_FORCE_...}), sorted.
   */
  public static List<String> overridingVariables(Map<String, String> environment) {
    return environment.keySet().stream()
        .filter(name -> name.startsWith(EnvironmentOverrides.PREFIX))
        .sorted()
        .toList();
  }

  /** The plug-ins this loader validates against. */
  public Plugins plugins() {
    return plugins;
  }

  /**
   * Loads and validates a config file given with {@code --config}.
   *
   * @throws ConfigProblemsException when the file is missing, unreadable, malformed, or any setting
   *     is wrong; lists every problem
   */
  public LoadedConfig load(Path file) {
    return load(file, "--config");
  }

  /**
   * Loads and validates a config file, the settings of the environment's {@code CONFIG_FORCE_...}
   * variables over it.
   *
   * @param namedBy what named the file (an option, a variable), for the problem when it is missing
   * @throws ConfigProblemsException when the file is missing, unreadable, malformed, or any setting
   *     is wrong; lists every problem
   */
  public LoadedConfig load(Path file, String namedBy) {
    Config parsed = parse(file, namedBy);
    List<SettingsProblem> found = new ArrayList<>();
    Config user = EnvironmentOverrides.over(parsed, environment, found);
    return load(user, file.toString(), found);
  }

  /**
   * Validates an already parsed, unresolved config (the user's part only, without references).
   *
   * @param source what it came from, for messages
   * @throws ConfigProblemsException listing every problem
   */
  public LoadedConfig load(Config user, String source) {
    return load(user, source, List.of());
  }

  private LoadedConfig load(Config user, String source, List<SettingsProblem> found) {
    Config reference = ConfigFactory.defaultReference(classLoader);
    Problems problems = new Problems();
    found.forEach(problems::add);
    Config root;
    try {
      root = user.withFallback(reference).resolve(resolveOptions());
    } catch (ConfigException e) {
      problems.add(new SettingsProblem(where(e, source), explain(e), null));
      throw new ConfigProblemsException(source, problems.list());
    }
    checkStrayTopLevelKeys(user, reference.getObject(ROOT), problems);
    if (!(root.root().get(ROOT) instanceof ConfigObject)) {
      problems.add(ROOT, "must be an object", root.root().get(ROOT).origin());
      throw new ConfigProblemsException(source, problems.list());
    }
    ConfigObject relay =
        SecretFiles.resolve(root.getObject(ROOT), ROOT, problems, plugins.secrets());
    LoadedConfig loaded =
        new RelaySettingsBinder(plugins, reference.getObject(ROOT))
            .bind(relay.toConfig(), source, problems);
    problems.throwIfAny(source);
    return loaded;
  }

  /**
   * Parses a config file without merging references or resolving it, for a caller that adds to it
   * before {@link #load(Config, String)}.
   *
   * @throws ConfigProblemsException when the file is missing, unreadable or malformed
   */
  public Config parse(Path file) {
    return parse(file, "--config");
  }

  private Config parse(Path file, String namedBy) {
    String source = file.toString();
    String missing = null;
    if (!Files.exists(file)) {
      missing = "file not found: " + file;
    } else if (Files.isDirectory(file)) {
      missing = "is a directory, not a config file: " + file;
    } else if (!Files.isReadable(file)) {
      missing = "file not readable: " + file;
    }
    if (missing != null) {
      throw new ConfigProblemsException(
          source, List.of(new SettingsProblem(namedBy, missing, null)));
    }
    try {
      return ConfigFactory.parseFile(
          file.toFile(),
          ConfigParseOptions.defaults().setAllowMissing(false).setClassLoader(classLoader));
    } catch (ConfigException e) {
      throw new ConfigProblemsException(
          source, List.of(new SettingsProblem(where(e, source), explain(e), null)));
    }
  }

  /** Settings written at the top level that belong inside {@code outbox-relay { }}. */
  private static void checkStrayTopLevelKeys(
      Config user, ConfigObject reference, Problems problems) {
    for (Map.Entry<String, ConfigValue> e : user.root().entrySet()) {
      if (reference.containsKey(e.getKey())) {
        problems.add(
            e.getKey(),
            "relay settings go inside " + ROOT + " { ... }, this key is at the top level",
            e.getValue().origin());
      }
    }
  }

  private ConfigResolveOptions resolveOptions() {
    return ConfigResolveOptions.defaults()
        .setUseSystemEnvironment(false)
        .appendResolver(new EnvironmentResolver(environment));
  }

  /** {@code file:line} of a parse or resolve error. */
  private static String where(ConfigException e, String source) {
    String origin = SettingsProblem.where(e.origin());
    return origin != null ? origin : source;
  }

  /** The library's message without its origin prefix, plus a hint for unresolved variables. */
  private static String explain(ConfigException e) {
    String message = e.getMessage();
    if (e.origin() != null && message.startsWith(e.origin().description() + ": ")) {
      message = message.substring(e.origin().description().length() + 2);
    }
    if (e instanceof ConfigException.UnresolvedSubstitution) {
      message +=
          " (set that environment variable, write ${?VAR} for an optional one, or quote a"
              + " template such as \"outbox.${aggregate_type}\")";
    } else if (e instanceof ConfigException.Parse) {
      message = "syntax error: " + message;
    }
    return message;
  }

  /** Looks substitutions up in the given environment rather than the process's. */
  private static final class EnvironmentResolver implements ConfigResolver {
    private final Map<String, String> environment;
    private final ConfigResolver fallback;

    EnvironmentResolver(Map<String, String> environment) {
      this(environment, null);
    }

    private EnvironmentResolver(Map<String, String> environment, ConfigResolver fallback) {
      this.environment = environment;
      this.fallback = fallback;
    }

    @Override
    public ConfigValue lookup(String path) {
      String value = environment.get(path);
      if (value != null) {
        return ConfigValueFactory.fromAnyRef(value, EnvironmentOverrides.ORIGIN + path);
      }
      return fallback == null ? null : fallback.lookup(path);
    }

    @Override
    public ConfigResolver withFallback(ConfigResolver other) {
      return other == null ? this : new EnvironmentResolver(environment, other);
    }
  }
}
