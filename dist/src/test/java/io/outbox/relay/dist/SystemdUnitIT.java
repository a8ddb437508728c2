package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.outbox.relay.dist.UnpackedDistribution.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The units of deploy/systemd checked by systemd itself: {@code systemd-analyze verify} and {@code
 * security --offline} against a root directory laid out as an installation (the archive unpacked
 * into /opt/outbox-relay, the units in /etc/systemd/system, the host's own units for the targets
 * they name). No systemd needs to run: both commands read files only. The configuration the migrate
 * unit's environment selects is checked by the archive's {@code check-config}.
 */
class SystemdUnitIT {
  /** Highest exposure {@code systemd-analyze security} may rate a unit, on its 0-100 scale. */
  private static final int MAX_EXPOSURE = 35;

  private static final Path HOST_UNITS = Path.of("/lib/systemd/system");

  @TempDir static Path dir;
  private static Path root;
  private static UnpackedDistribution dist;

  @BeforeAll
  static void install() throws IOException {
    assumeTrue(
        Files.isRegularFile(HOST_UNITS.resolve("sysinit.target")),
        "systemd's units are not installed in " + HOST_UNITS + ": systemd-analyze cannot run");
    root = dir.resolve("root");
    dist = UnpackedDistribution.unpack(Files.createDirectories(dir.resolve("unpacked")));
    Files.createDirectories(root.resolve("opt"));
    // As docs/deployment.md installs it: tar -xzf ... -C /opt/outbox-relay --strip-components=1
    Files.move(dist.home(), root.resolve("opt/outbox-relay"));
    dist = UnpackedDistribution.at(root.resolve("opt/outbox-relay"));
    Path units = Files.createDirectories(root.resolve("etc/systemd/system"));
    for (String unit : List.of(SystemdUnitTest.RELAY, SystemdUnitTest.MIGRATE)) {
      Path source = RepositoryFiles.path(unit);
      Files.copy(source, units.resolve(source.getFileName()));
    }
    Files.createDirectories(root.resolve("usr/lib/systemd"));
    Files.createSymbolicLink(root.resolve("usr/lib/systemd/system"), HOST_UNITS);
  }

  @Test
  void unitsVerify() {
    Result verify = verify("outbox-relay.service", "outbox-relay-migrate.service");
    // verify exits 0 on a line it ignores: its warnings on standard error count as failures.
    assertThat(verify.exitCode()).as(verify.toString()).isZero();
    assertThat(verify.err()).as(verify.toString()).isBlank();
  }

  @Test
  void verifyReportsTrailingCommentsAndAMissingLauncher() throws IOException {
    // The validator is not a rubber stamp: a comment after a value, and a launcher that is not in
    // the archive, both show.
    Path units = root.resolve("etc/systemd/system");
    String broken =
        RepositoryFiles.read(SystemdUnitTest.RELAY)
            .replace("TimeoutStopSec=60", "TimeoutStopSec=60   # above shutdown-timeout")
            .replace("/bin/outbox-relay run", "/bin/outbox-relayd run");
    Files.writeString(units.resolve("broken-relay.service"), broken);
    try {
      Result verify = verify("broken-relay.service");
      assertThat(verify.err())
          .as(verify.toString())
          .contains("Failed to parse", "60   # above shutdown-timeout")
          .contains("/opt/outbox-relay/bin/outbox-relayd is not executable");
      assertThat(verify.exitCode()).as(verify.toString()).isNotZero();
    } finally {
      Files.delete(units.resolve("broken-relay.service"));
    }
  }

  @Test
  void unitsAreHardened() {
    for (String unit : List.of("outbox-relay.service", "outbox-relay-migrate.service")) {
      Result security =
          systemdAnalyze(
              "security",
              "--offline=true",
              "--threshold=" + MAX_EXPOSURE,
              "/etc/systemd/system/" + unit);
      assertThat(security.exitCode()).as(security.toString()).isZero();
      assertThat(security.out()).contains("Overall exposure level for " + unit);
    }
  }

  @Test
  void migrateEnvironmentSelectsTheSchemaOwner() {
    Map<String, String> owner = SystemdUnitTest.envFile("deploy/systemd/migrate.env.example");
    Result asOwner = dist.run(owner, "check-config", "--config", "config/relay.conf");
    assertThat(asOwner.exitCode()).as(asOwner.toString()).isZero();
    assertThat(asOwner.out()).contains("user = \"app_owner\"").doesNotContain("change-me");
    // Without it (the relay's environment), the file's own role: SystemdUnitTest.
  }

  private static Result verify(String... units) {
    List<String> args = new ArrayList<>(List.of("verify"));
    for (String unit : units) {
      args.add("/etc/systemd/system/" + unit);
    }
    return systemdAnalyze(args.toArray(String[]::new));
  }

  /** {@code systemd-analyze --root=<the installation> args...}. */
  private static Result systemdAnalyze(String... args) {
    List<String> line = new ArrayList<>();
    line.add(UnpackedDistribution.tool("systemd-analyze"));
    line.add("--root=" + root);
    line.addAll(List.of(args));
    return UnpackedDistribution.exec(dir, Map.of(), line);
  }
}
