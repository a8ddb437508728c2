package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.typesafe.config.ConfigFactory;
import io.outbox.relay.Relay;
import io.outbox.relay.config.RelayConfigLoader;
import io.outbox.relay.config.RelaySettings;
import io.outbox.relay.http.HttpEndpoints;
import io.outbox.schema.PartitionedLayout;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivatePostgres;
import io.outbox.testkit.Teardown;
import io.outbox.testkit.TestCertificates;
import io.outbox.testkit.docs.MarkdownPage;
import io.outbox.testkit.docs.RepositoryDocs;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * docs/metrics.md and a running relay's {@code /metrics} name the same metrics, both ways. Two
 * relays between them serve every metric: the polling source publishing to Kafka (at least once),
 * and the CDC source publishing to Kafka exactly once on a private cluster whose {@code
 * max_slot_wal_keep_size} is set (the CDC gauges, the share of that limit among them). Names are
 * compared as the page writes them: a histogram's {@code _bucket}, {@code _count}, {@code _sum} and
 * {@code _max} series under its name. The JVM and process binders' series are many; the page names
 * some "and their siblings": those it names must be served.
 */
class DocumentedMetricsIT {

  private static final String METRICS_MD = "docs/metrics.md";
  private static final Pattern NAME =
      Pattern.compile("^((?:outbox_relay|jvm|process|system)_[a-z0-9_]+)$");
  private static final Pattern SERIES_SUFFIX = Pattern.compile("_(bucket|count|sum|max)$");
  private static final Pattern TYPE = Pattern.compile("(?m)^# TYPE ([a-z0-9_]+) (\\w+)$");
  private static final String FAST_BACKLOG = "\noutbox-relay.http.backlog-interval = 200ms\n";
  private static final Duration WAIT = Duration.ofSeconds(60);

  @RegisterExtension final Teardown teardown = new Teardown();
  private RelayFixture fx;

  @Test
  void everyDocumentedMetricIsServedAndEveryServedOneIsDocumented() throws Exception {
    Map<String, Integer> documented = documented();
    assertThat(documented).as("metric names in " + METRICS_MD).hasSizeGreaterThan(20);

    // A partitioned outbox: its retention serves the gauge of rows of an earlier round of ids.
    fx =
        teardown.add(
            RelayFixture.partitioned("documented_metrics", new PartitionedLayout(2, 1000)));
    Set<String> polling =
        servedBy(
            fx.config("layout = partitioned, partitions { count = 2, size = 1000 }\n")
                + FAST_BACKLOG,
            documented.keySet(),
            "outbox_relay_partition_earlier_round_rows");

    String password = "pw-" + UUID.randomUUID();
    TestCertificates certificates =
        TestCertificates.create(
            Files.createTempDirectory("documented-metrics-certs-"),
            "documented-metrics",
            TestCertificates.LOOPBACK);
    PrivatePostgres pg =
        teardown.add(
            PrivatePostgres.start(
                certificates, password, "wal_level=logical", "max_slot_wal_keep_size=1GB"));
    fx = teardown.add(RelayFixture.onPrivate(pg, password, "documented_metrics"));
    Set<String> cdc =
        servedBy(
            fx.config(fx.cdc("debezium { \"database.sslmode\" = require }") + fx.exactlyOnce())
                + FAST_BACKLOG,
            documented.keySet());

    Set<String> served = new TreeSet<>(polling);
    served.addAll(cdc);
    Set<String> notServed =
        documented.entrySet().stream()
            .filter(e -> !served.contains(e.getKey()))
            .map(e -> METRICS_MD + ":" + e.getValue() + ": " + e.getKey())
            .collect(Collectors.toCollection(TreeSet::new));
    assertThat(notServed).as("documented, served by neither relay").isEmpty();
    for (Map.Entry<String, Set<String>> relay : Map.of("polling", polling, "cdc", cdc).entrySet()) {
      assertThat(
              relay.getValue().stream()
                  .filter(name -> name.startsWith("outbox_relay_"))
                  .filter(name -> !documented.containsKey(name)))
          .as("served by the %s relay, not in %s", relay.getKey(), METRICS_MD)
          .isEmpty();
    }
  }

  /**
   * The metric names {@code hocon}'s relay serves once it is active and has read its backlog, under
   * the names the page uses.
   */
  private Set<String> servedBy(String hocon, Set<String> documented, String... awaited)
      throws Exception {
    RelaySettings settings =
        RelayConfigLoader.standard().load(ConfigFactory.parseString(hocon), "test").settings();
    try (Relay relay = Relay.start(settings);
        HttpEndpoints http = HttpEndpoints.start(settings.http(), relay)) {
      Scrape scrape = new Scrape(http.port());
      KafkaTestSupport.createTopic(fx.topic("order"), 1);
      fx.commit(List.of(event("a", 1), event("b", 2)));
      await()
          .atMost(WAIT)
          .untilAsserted(
              () -> {
                assertThat(scrape.pipeline("outbox_relay_active", "it")).isEqualTo(1);
                assertThat(scrape.pipeline("outbox_relay_events_published_total", "it"))
                    .isEqualTo(2);
                assertThat(scrape.pipeline("outbox_relay_backlog_read_timestamp_seconds", "it"))
                    .isPositive();
                for (String name : awaited) {
                  assertThat(scrape.metrics()).contains("# TYPE " + name + " ");
                }
              });
      // jvm_gc_pause_seconds appears with the first collection the binder sees.
      System.gc();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> scrape.metrics().contains("# TYPE jvm_gc_pause_seconds "));
      return served(scrape.metrics(), documented);
    }
  }

  /**
   * The names of the {@code # TYPE} lines, a counter's with {@code _total}, as the page writes
   * them.
   */
  static Set<String> served(String scraped, Set<String> documented) {
    Set<String> names = new TreeSet<>();
    Matcher m = TYPE.matcher(scraped);
    while (m.find()) {
      String name = m.group(1);
      if (m.group(2).equals("counter") && !name.endsWith("_total")) {
        name += "_total";
      }
      names.add(pageName(name, documented));
    }
    return names;
  }

  /** A histogram's series under the histogram's documented name. */
  private static String pageName(String name, Set<String> documented) {
    String base = SERIES_SUFFIX.matcher(name).replaceFirst("");
    return !documented.contains(name) && documented.contains(base) ? base : name;
  }

  /** Every metric name docs/metrics.md writes as inline code, with the line it first appears on. */
  private static Map<String, Integer> documented() {
    MarkdownPage page =
        MarkdownPage.read(RepositoryDocs.root(), RepositoryDocs.root().resolve(METRICS_MD));
    Map<String, Integer> names = new TreeMap<>();
    for (MarkdownPage.CodeSpan span : page.codeSpans()) {
      Matcher m = NAME.matcher(span.text());
      if (m.matches()) {
        names.putIfAbsent(m.group(1), span.line());
      }
    }
    Set<String> all = Set.copyOf(names.keySet());
    names.keySet().removeIf(name -> !pageName(name, all).equals(name));
    return names;
  }
}
