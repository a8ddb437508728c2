package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The systemd units of deploy/systemd say what docs/deployment.md promises: the archive's launcher
 * at its install path, migrate as the schema owner (never as the relay's role), a stop timeout
 * above shutdown-timeout, restarts, an unprivileged user. (systemd's own check, {@code
 * systemd-analyze verify}, is in SystemdUnitIT.)
 */
class SystemdUnitTest {
  static final String RELAY = "deploy/systemd/outbox-relay.service";
  static final String MIGRATE = "deploy/systemd/outbox-relay-migrate.service";
  static final String LAUNCHER = "/opt/outbox-relay/bin/outbox-relay";
  static final String CONFIG = "/etc/outbox-relay/relay.conf";

  private static final Pattern SYSTEMD_SECONDS = Pattern.compile("(\\d+)\\s*(s|sec|min)?");

  @Test
  void relayUnitRunsTheArchiveLauncherAsAService() {
    SystemdUnit unit = SystemdUnit.read(RELAY);
    assertThat(unit.sections()).containsExactly("Unit", "Service", "Install");
    assertThat(unit.all("Service", "ExecStart"))
        .containsExactly(LAUNCHER + " run --config " + CONFIG);
    assertThat(unit.get("Service", "Restart")).isEqualTo("on-failure");
    assertThat(unit.get("Service", "KillSignal")).isIn("", "SIGTERM");
    assertThat(unit.get("Service", "EnvironmentFile")).isEqualTo("/etc/outbox-relay/relay.env");
    assertThat(unit.get("Install", "WantedBy")).isEqualTo("multi-user.target");
    assertThat(unit.get("Unit", "After")).contains("outbox-relay-migrate.service");
    // Not as the relay's role: the migration is the other unit's, with the owner's credentials.
    assertThat(unit.settings())
        .noneMatch(s -> s.startsWith("Service.Exec") && s.contains(" migrate"));
  }

  @Test
  void relayUnitStopTimeoutExceedsTheShutdownTimeout() {
    Duration stop = systemdSeconds(SystemdUnit.read(RELAY).get("Service", "TimeoutStopSec"));
    Duration shutdown = shutdownTimeout(RepositoryFiles.read("config/relay.conf"));
    assertThat(shutdown).isEqualTo(shutdownTimeout("")); // the example keeps the default
    assertThat(stop).as("TimeoutStopSec").isGreaterThan(shutdown.plusSeconds(10));
  }

  @Test
  void migrateUnitRunsAsTheSchemaOwner() {
    SystemdUnit relay = SystemdUnit.read(RELAY);
    SystemdUnit migrate = SystemdUnit.read(MIGRATE);
    assertThat(migrate.get("Service", "Type")).isEqualTo("oneshot");
    assertThat(migrate.all("Service", "ExecStart"))
        .containsExactly(LAUNCHER + " migrate --config " + CONFIG);
    assertThat(migrate.get("Service", "EnvironmentFile"))
        .isEqualTo("/etc/outbox-relay/migrate.env")
        .isNotEqualTo(relay.get("Service", "EnvironmentFile"));
    // Started by hand (installation, upgrades), never at boot.
    assertThat(migrate.sections()).containsExactly("Unit", "Service");

    // The owner's environment file turns the example configuration's user into the owner.
    String conf = RepositoryFiles.read("config/relay.conf");
    Map<String, String> owner = envFile("deploy/systemd/migrate.env.example");
    assertThat(owner).containsOnlyKeys("APP_DB_USER", "APP_DB_PASSWORD");
    assertThat(databaseUser(conf, owner)).isEqualTo(owner.get("APP_DB_USER"));
    Map<String, String> relayEnv = envFile("deploy/systemd/relay.env.example");
    assertThat(relayEnv).containsOnlyKeys("APP_DB_PASSWORD");
    assertThat(databaseUser(conf, relayEnv)).isEqualTo("outbox_relay");
  }

  @Test
  void unitsRunUnprivilegedAndHardened() {
    for (String file : new String[] {RELAY, MIGRATE}) {
      SystemdUnit unit = SystemdUnit.read(file);
      assertThat(unit.get("Service", "DynamicUser")).as(file).isEqualTo("yes");
      assertThat(unit.get("Service", "User")).as(file).isEmpty();
      assertThat(unit.get("Service", "NoNewPrivileges")).as(file).isEqualTo("yes");
      assertThat(unit.get("Service", "ProtectSystem")).as(file).isEqualTo("strict");
      assertThat(unit.get("Service", "CapabilityBoundingSet")).as(file).isEmpty();
      // The JVM's JIT writes executable memory.
      assertThat(unit.get("Service", "MemoryDenyWriteExecute")).as(file).isIn("", "no");
    }
  }

  @Test
  void valuesCarryNoTrailingComments() {
    // systemd reads "TimeoutStopSec=60  # comment" as the value "60  # comment".
    for (String file : new String[] {RELAY, MIGRATE}) {
      assertThat(SystemdUnit.read(file).settings())
          .as(file)
          .noneMatch(s -> s.matches(".*\\s[#;].*"));
    }
  }

  /** A systemd time span of seconds or minutes ("60", "90s", "2min"). */
  static Duration systemdSeconds(String value) {
    Matcher m = SYSTEMD_SECONDS.matcher(value);
    assertThat(m.matches()).as("a time span in seconds or minutes: %s", value).isTrue();
    long n = Long.parseLong(m.group(1));
    return "min".equals(m.group(2)) ? Duration.ofMinutes(n) : Duration.ofSeconds(n);
  }

  /**
   * outbox-relay.shutdown-timeout of a configuration file's text, or the default of reference.conf.
   */
  static Duration shutdownTimeout(String conf) {
    Config config =
        ConfigFactory.parseString(conf)
            .resolve(
                ConfigResolveOptions.defaults()
                    .setAllowUnresolved(true)
                    .setUseSystemEnvironment(false))
            .withFallback(ConfigFactory.defaultReference());
    return config.getDuration("outbox-relay.shutdown-timeout");
  }

  /** database.user of the example's pipeline, with {@code env} as the process environment. */
  private static String databaseUser(String conf, Map<String, String> env) {
    // ${?VAR} falls back to the root of the configuration, then to the environment (turned off).
    return ConfigFactory.parseString(conf)
        .withFallback(ConfigFactory.parseMap(env))
        .resolve(ConfigResolveOptions.defaults().setUseSystemEnvironment(false))
        .getString("outbox-relay.pipelines.orders.database.user");
  }

  /** An EnvironmentFile's KEY=value lines. */
  static Map<String, String> envFile(String relative) {
    Map<String, String> env = new java.util.TreeMap<>();
    RepositoryFiles.read(relative)
        .lines()
        .filter(l -> !l.isBlank() && !l.startsWith("#"))
        .forEach(l -> env.put(l.substring(0, l.indexOf('=')), l.substring(l.indexOf('=') + 1)));
    return env;
  }
}
