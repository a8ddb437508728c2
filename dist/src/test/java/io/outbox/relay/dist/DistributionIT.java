package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.outbox.relay.dist.UnpackedDistribution.Result;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.TestDatabase;
import io.outbox.testkit.docs.LinkCheck;
import io.outbox.testkit.docs.MarkdownPage;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The distribution archive as a user gets it: unpacked with {@code tar}, its {@code
 * bin/outbox-relay} answers {@code --version}, {@code --help} and {@code check-config} with the
 * documented exit codes, and, called through a symlink from elsewhere, migrates a database and
 * relays events to Kafka until SIGTERM. Its files: NOTICE lists every third-party jar, every
 * relative link of its docs resolves inside it, config/reference.conf holds every module's
 * defaults, and no command needs a source checkout.
 */
class DistributionIT {
  /** An inline link {@code [text](target)} or a reference definition {@code [id]: target}. */

  /** A line of NOTICE's list: {@code group:artifact version: license; license}. */
  private static final Pattern NOTICE_ENTRY = Pattern.compile("[\\w.-]+:([\\w.-]+) (\\S+): \\S.*");

  @TempDir static Path unpackDir;
  private static UnpackedDistribution dist;

  @BeforeAll
  static void unpack() {
    dist = UnpackedDistribution.unpack(unpackDir);
  }

  @Test
  void archiveHasTheDocumentedLayout() throws IOException {
    Path home = dist.home();
    assertThat(Files.getPosixFilePermissions(dist.launcher()))
        .contains(PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OTHERS_EXECUTE);
    assertThat(home.resolve("config/relay.conf")).isRegularFile();
    assertThat(home.resolve("config/prometheus/alerts.yml")).isRegularFile();
    assertThat(home.resolve("config/grafana/dashboards/outbox-relay.json")).isRegularFile();
    assertThat(home.resolve("README.md")).isRegularFile();
    assertThat(home.resolve("CHANGELOG.md")).isRegularFile();
    assertThat(home.resolve("LICENSE")).isRegularFile();
    assertThat(home.resolve("docs/operations.md")).isRegularFile();
    // Only what a production user runs: the demo needs a source checkout.
    assertThat(home.resolve("config/demo.conf")).doesNotExist();
    // The deployment files, when the repository has them.
    Path deploy = RepositoryFiles.path("deploy");
    if (Files.isDirectory(deploy)) {
      try (Stream<Path> files = Files.walk(deploy)) {
        for (Path file : files.filter(Files::isRegularFile).toList()) {
          assertThat(home.resolve("deploy").resolve(deploy.relativize(file).toString()))
              .isRegularFile();
        }
      }
    }
    List<String> jars;
    try (Stream<Path> lib = Files.list(home.resolve("lib"))) {
      jars = lib.map(p -> p.getFileName().toString()).sorted().toList();
    }
    // NOTICE names every third-party jar lib/ bundles, with its license.
    Set<String> noticed = noticedJars(home.resolve("NOTICE"));
    assertThat(jars.stream().filter(jar -> !jar.startsWith("outbox-relay-")))
        .isNotEmpty()
        .allMatch(noticed::contains, "listed in NOTICE: " + noticed);
    assertThat(jars)
        .contains(
            "outbox-relay-daemon-" + UnpackedDistribution.version() + ".jar",
            "outbox-relay-polling-source-" + UnpackedDistribution.version() + ".jar",
            "outbox-relay-sink-kafka-" + UnpackedDistribution.version() + ".jar",
            "outbox-relay-sink-rabbitmq-" + UnpackedDistribution.version() + ".jar")
        .allMatch(name -> name.endsWith(".jar"), "only jars")
        .noneMatch(name -> name.startsWith("junit") || name.contains("testkit"), "no test jars");
  }

  @Test
  void printsItsVersionAndHelp() {
    Result version = dist.run("--version");
    assertThat(version.exitCode()).as(version.toString()).isZero();
    assertThat(version.out().strip()).isEqualTo("outbox-relay " + UnpackedDistribution.version());

    Result help = dist.run("--help");
    assertThat(help.exitCode()).as(help.toString()).isZero();
    assertThat(help.out())
        .contains("run", "migrate", "check-config", "status", "dead-letters")
        .doesNotContainPattern("(?m)^\\s+demo\\b")
        .doesNotContainPattern("(?m)^\\s+bench\\b");
    Result demo = dist.run("demo");
    assertThat(demo.exitCode()).as(demo.toString()).isEqualTo(2);
    assertThat(demo.err()).contains("unknown command 'demo'");
  }

  @Test
  void everyRelativeLinkOfItsDocsResolvesInsideIt() throws IOException {
    Path home = dist.home();
    List<Path> pages;
    try (Stream<Path> files = Files.walk(home)) {
      pages = files.filter(p -> p.toString().endsWith(".md")).sorted().toList();
    }
    assertThat(pages).contains(home.resolve("README.md"), home.resolve("docs/sinks/nats.md"));
    LinkCheck check = new LinkCheck(home);
    List<String> broken = new ArrayList<>();
    int links = 0;
    for (Path page : pages) {
      MarkdownPage parsed = MarkdownPage.read(home, page);
      links += (int) parsed.links().stream().filter(LinkCheck::followed).count();
      broken.addAll(check.problems(parsed));
    }
    assertThat(links).as("relative links found").isGreaterThan(50);
    assertThat(broken).as("links that do not resolve inside the archive").isEmpty();
  }

  @Test
  void mergedDefaultsAreTheReferenceConfOfEveryModule() throws IOException {
    Path merged = dist.home().resolve("config/reference.conf");
    String text = Files.readString(merged, StandardCharsets.UTF_8);
    List<URL> jars = new ArrayList<>();
    List<String> withDefaults = new ArrayList<>();
    try (Stream<Path> lib = Files.list(dist.home().resolve("lib"))) {
      for (Path jar : lib.sorted().toList()) {
        jars.add(jar.toUri().toURL());
        try (JarFile file = new JarFile(jar.toFile())) {
          if (jar.getFileName().toString().startsWith("outbox-relay-")
              && file.getEntry("reference.conf") != null) {
            withDefaults.add(jar.getFileName().toString());
          }
        }
      }
    }
    // A header names each of our jars with defaults; the comments are kept.
    assertThat(withDefaults)
        .contains("outbox-relay-core-" + UnpackedDistribution.version() + ".jar");
    assertThat(withDefaults).allSatisfy(jar -> assertThat(text).contains("(lib/" + jar + ")"));
    assertThat(text)
        .contains("# outbox-relay: every default of the relay core, one comment per key.");
    // Together, the same settings as the jars' reference.conf files the relay reads.
    try (URLClassLoader loader = new URLClassLoader(jars.toArray(URL[]::new), null)) {
      Config fromJars = ConfigFactory.parseResources(loader, "reference.conf").resolve();
      Config fromFile = ConfigFactory.parseFile(merged.toFile()).resolve();
      assertThat(fromFile.getConfig("outbox-relay").root())
          .isEqualTo(fromJars.getConfig("outbox-relay").root());
    }
  }

  /** The jar file names ({@code artifact-version.jar}) NOTICE lists. */
  private static Set<String> noticedJars(Path notice) throws IOException {
    Set<String> jars = new TreeSet<>();
    for (String line : Files.readAllLines(notice, StandardCharsets.UTF_8)) {
      Matcher m = NOTICE_ENTRY.matcher(line);
      if (m.matches()) {
        jars.add(m.group(1) + "-" + m.group(2) + ".jar");
      }
    }
    return jars;
  }

  @Test
  void checksTheShippedConfiguration() throws IOException {
    Result ok = dist.run("check-config", "--config", "config/relay.conf");
    assertThat(ok.exitCode()).as(ok.toString()).isZero();
    assertThat(ok.out()).contains("pipelines", "orders");

    Path broken = dist.home().resolve("config/broken.conf");
    Files.writeString(broken, "outbox-relay.pipelines.orders.batch-size = many\n");
    Result bad = dist.run("check-config", "--config", "config/broken.conf");
    assertThat(bad.exitCode()).as(bad.toString()).isEqualTo(2);
    assertThat(bad.err()).contains("batch-size");
  }

  /** The one check of the real process environment: a JVM cannot set its own variables. */
  @Test
  void readsTheFileAndOverridesTheEnvironmentNames() {
    String lanes = "CONFIG_FORCE_outbox__relay_pipelines_orders_lanes";
    String password = "CONFIG_FORCE_outbox__relay_pipelines_orders_database_password";

    Result check =
        dist.run(
            Map.of("OUTBOX_RELAY_CONFIG", "config/relay.conf", lanes, "9", password, "canary-env"),
            "check-config");

    assertThat(check.exitCode()).as(check.toString()).isZero();
    assertThat(check.out())
        .startsWith("# Effective settings of config/relay.conf:")
        .contains("      lanes = \"9\"  # env " + lanes + "\n")
        .contains("      password = \"******\"  # env " + password + "\n")
        .containsPattern("table = \"outbox\"  # config/relay\\.conf:\\d+\n")
        .containsPattern(
            "stall-timeout = \"10s\"  # default: reference\\.conf:\\d+ of outbox-relay-core\n")
        .doesNotContain("canary");
    assertThat(check.err())
        .contains(
            "configuration: config/relay.conf (from OUTBOX_RELAY_CONFIG); set by the environment")
        .contains(lanes)
        .doesNotContain("canary");
  }

  @Test
  void reportsUsageErrorsAndAMissingJava() {
    Result unknown = dist.run("no-such-command");
    assertThat(unknown.exitCode()).as(unknown.toString()).isEqualTo(2);

    Result noJava = dist.run(Map.of("JAVA_HOME", "/nonexistent/jdk"), "--version");
    assertThat(noJava.exitCode()).as(noJava.toString()).isEqualTo(1);
    assertThat(noJava.err()).contains("JAVA_HOME", "/nonexistent/jdk");
  }

  @Test
  void runsAsAnUnprivilegedUserFromARootOwnedInstallation() throws IOException {
    // As in the Docker image: files owned by root, the process run as uid 10001 (no home, no
    // write access to the installation).
    assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "needs root to run a command as another user (CI runs as root)");
    Files.setPosixFilePermissions(unpackDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    List<String> asUser =
        List.of("setpriv", "--reuid=10001", "--regid=10001", "--clear-groups", "--");
    Result version =
        UnpackedDistribution.exec(
            dist.home(), Map.of(), concat(asUser, dist.launcher().toString(), "--version"));
    assertThat(version.exitCode()).as(version.toString()).isZero();
    Result check =
        UnpackedDistribution.exec(
            dist.home(),
            Map.of(),
            concat(
                asUser,
                dist.launcher().toString(),
                "check-config",
                "--config",
                "config/relay.conf"));
    assertThat(check.exitCode()).as(check.toString()).isZero();
  }

  private static List<String> concat(List<String> prefix, String... rest) {
    List<String> all = new ArrayList<>(prefix);
    all.addAll(List.of(rest));
    return all;
  }

  /** With either source: the archive's lib/ must hold what each needs at run time. */
  @ParameterizedTest
  @ValueSource(strings = {"polling", "cdc"})
  void migratesAndRelaysEventsWhenCalledThroughASymlink(String source, @TempDir Path work)
      throws Exception {
    Path link = work.resolve("outbox-relay");
    Files.createSymbolicLink(link, dist.launcher());
    String topicPrefix = KafkaTestSupport.uniqueTopic("dist");
    int port = RunningRelay.freePort();
    try (TestDatabase db = TestDatabase.create("dist_it")) {
      Path config = work.resolve("relay.conf");
      Files.writeString(config, config(db, source, topicPrefix, port), StandardCharsets.UTF_8);

      Result migrate =
          UnpackedDistribution.exec(
              work, Map.of(), List.of(link.toString(), "migrate", "--config", "relay.conf"));
      assertThat(migrate.exitCode()).as(migrate.toString()).isZero();

      int events = OrderEvents.write(db, 20);

      RunningRelay relay = RunningRelay.start(link, work, Map.of(), config, port);
      try {
        List<ConsumerRecord<String, byte[]>> records =
            KafkaTestSupport.readRecords(topicPrefix + ".order", events, Duration.ofSeconds(60));
        assertThat(records).as(() -> "records; relay log:\n" + relay.log()).hasSize(events);
        await("every row marked published")
            .atMost(Duration.ofSeconds(30))
            .until(() -> OrderEvents.unpublished(db) == 0);

        assertThat(relay.get("/health/live").statusCode()).isEqualTo(200);
        // Every metric the alert rules and the dashboard read is exported: not the CDC source's
        // (this pipeline polls), nor the partitioned layout's (its outbox is one table; the
        // daemon's DocumentedMetricsIT serves it), nor Prometheus' own `up`.
        Set<String> expected =
            RepositoryFiles.usedMetrics().keySet().stream()
                .filter(
                    name ->
                        !name.equals("up")
                            && !name.startsWith("outbox_relay_cdc_")
                            && !name.startsWith("outbox_relay_partition_"))
                .collect(Collectors.toCollection(TreeSet::new));
        await("every metric the alerts and the dashboard read, on /metrics")
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofSeconds(1))
            .untilAsserted(
                () -> {
                  HttpResponse<String> metrics = relay.get("/metrics");
                  assertThat(metrics.statusCode()).isEqualTo(200);
                  assertThat(exportedSeries(metrics.body())).containsAll(expected);
                });
      } finally {
        relay.stop();
      }
    } finally {
      Files.deleteIfExists(link); // JUnit warns about links out of a temp dir it deletes
    }
  }

  private static String config(TestDatabase db, String source, String topicPrefix, int port) {
    // A CDC slot named after the test database: TestDatabase drops it with the database.
    return """
        outbox-relay {
          http { host = "127.0.0.1", port = %d, backlog-interval = 1s }
          shutdown-timeout = 15s
          pipelines.orders {
            database { url = "%s", user = "%s", password = "%s" }
            source { type = %s, polling.poll-interval = 250ms, cdc.slot-name = "%s" }
            sink.kafka.bootstrap-servers = "%s"
            routing.destination = "%s.${aggregate_type}"
          }
        }
        """
        .formatted(
            port,
            db.url(),
            db.user(),
            db.password(),
            source,
            db.name(),
            Services.kafkaBootstrap(),
            topicPrefix);
  }

  /** The series names of a Prometheus text exposition ({@code name{labels} value}). */
  private static Set<String> exportedSeries(String exposition) {
    return exposition
        .lines()
        .filter(line -> !line.isBlank() && !line.startsWith("#"))
        .map(line -> line.split("[{ ]", 2)[0])
        .collect(Collectors.toCollection(TreeSet::new));
  }
}
