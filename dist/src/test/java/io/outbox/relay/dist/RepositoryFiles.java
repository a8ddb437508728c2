package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The deployment files of the repository (docker-compose.yml, Dockerfile, config/, docs/) as the
 * tests read them: parsed YAML and JSON, metric names used in PromQL, headings of Markdown pages.
 */
final class RepositoryFiles {
  /** The Prometheus alert rules. */
  static final String ALERTS = "config/prometheus/alerts.yml";

  /** The Grafana dashboard. */
  static final String DASHBOARD = "config/grafana/dashboards/outbox-relay.json";

  private static final ObjectMapper JSON = new ObjectMapper();

  /** A metric name in PromQL: our own, the JVM/process binders' and Prometheus' {@code up}. */
  private static final Pattern METRIC =
      Pattern.compile("\\b((?:outbox_relay|jvm|process|system)_[a-z0-9_]+|up)\\b");

  /** A backquoted metric name in docs/metrics.md. */
  private static final Pattern DOCUMENTED =
      Pattern.compile("`((?:outbox_relay|jvm|process|system)_[a-z0-9_]+)`");

  private static final Pattern HISTOGRAM_SUFFIX = Pattern.compile("_(bucket|sum|count|max)$");

  private RepositoryFiles() {}

  /** The repository's root: set by the POM, or the parent of the module directory. */
  static Path root() {
    return Path.of(System.getProperty("outbox.repo.root", "..")).toAbsolutePath().normalize();
  }

  static Path path(String relative) {
    return root().resolve(relative);
  }

  static String read(String relative) {
    try {
      return Files.readString(path(relative), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + path(relative), e);
    }
  }

  /**
   * A YAML file as a JSON tree. SnakeYAML (which jackson-dataformat-yaml brings) parses it, because
   * it applies anchors and merge keys ({@code <<: *relay}) as docker-compose does.
   */
  static JsonNode yaml(String relative) {
    Object document = new Yaml(new SafeConstructor(new LoaderOptions())).load(read(relative));
    return JSON.valueToTree(document);
  }

  static JsonNode json(String relative) {
    try {
      return JSON.readTree(path(relative).toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(
          "invalid JSON in " + path(relative) + ": " + e.getMessage(), e);
    }
  }

  /** The metric names a PromQL expression reads (as written: with _bucket, _sum... suffixes). */
  static Set<String> metricsIn(String promql) {
    Set<String> names = new TreeSet<>();
    Matcher m = METRIC.matcher(promql);
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  /**
   * The name a metric is documented under: a histogram's {@code _bucket}, {@code _sum}, {@code
   * _count} and {@code _max} series belong to the histogram's name.
   */
  static String documentedName(String series, Set<String> documented) {
    if (documented.contains(series)) {
      return series;
    }
    String base = HISTOGRAM_SUFFIX.matcher(series).replaceFirst("");
    return documented.contains(base) ? base : series;
  }

  /** Every metric name docs/metrics.md lists in backquotes. */
  static Set<String> documentedMetrics() {
    Set<String> names = new TreeSet<>();
    Matcher m = DOCUMENTED.matcher(read("docs/metrics.md"));
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  /** GitHub's anchors of the headings of a Markdown file ("## Broker down" → broker-down). */
  static Set<String> anchors(String relative) {
    Set<String> anchors = new TreeSet<>();
    for (String line : read(relative).lines().toList()) {
      if (line.startsWith("#")) {
        String heading = line.replaceFirst("^#+\\s*", "").strip();
        anchors.add(
            heading.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-'));
      }
    }
    return anchors;
  }

  /** The rules of every group of the alert rules file. */
  static List<JsonNode> alertRules() {
    List<JsonNode> rules = new ArrayList<>();
    yaml(ALERTS).path("groups").forEach(g -> g.path("rules").forEach(rules::add));
    assertThat(rules).as("rules in " + ALERTS).isNotEmpty();
    return rules;
  }

  /** Series name → where it is used, for every PromQL expression of the alerts and dashboard. */
  static Map<String, Set<String>> usedMetrics() {
    Map<String, Set<String>> used = new TreeMap<>();
    for (JsonNode rule : alertRules()) {
      for (String name : metricsIn(rule.path("expr").asText())) {
        used.computeIfAbsent(name, n -> new TreeSet<>())
            .add("alert " + rule.path("alert").asText());
      }
    }
    for (JsonNode panel : json(DASHBOARD).path("panels")) {
      for (JsonNode target : panel.path("targets")) {
        for (String name : metricsIn(target.path("expr").asText())) {
          used.computeIfAbsent(name, n -> new TreeSet<>())
              .add("panel " + panel.path("title").asText());
        }
      }
    }
    return used;
  }
}
