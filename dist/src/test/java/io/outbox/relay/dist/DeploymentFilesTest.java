package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The deployment files agree with each other and with what the relay exports: alert rules and
 * dashboard read only documented metrics, their links lead to sections of docs/operations.md, the
 * compose file mounts files that exist, the Dockerfile runs the archive's launcher as non-root.
 * (Validation by the real tools, docker-compose and promtool, is in DeploymentFilesIT.)
 */
class DeploymentFilesTest {
  private static final Pattern RUNBOOK = Pattern.compile("docs/operations\\.md#([a-z0-9_-]+)");

  @Test
  void alertRulesCoverTheOperationalRisks() {
    List<String> names = new ArrayList<>();
    for (JsonNode rule : RepositoryFiles.alertRules()) {
      String name = rule.path("alert").asText();
      names.add(name);
      assertThat(rule.path("expr").asText()).as("%s: expr", name).isNotBlank();
      assertThat(rule.path("labels").path("severity").asText())
          .as("%s: labels.severity", name)
          .isIn("critical", "warning", "info");
      assertThat(rule.path("annotations").path("summary").asText())
          .as("%s: annotations.summary", name)
          .isNotBlank();
      assertThat(rule.path("annotations").path("description").asText())
          .as("%s: annotations.description links the playbook", name)
          .containsPattern(RUNBOOK);
    }
    assertThat(names)
        .doesNotHaveDuplicates()
        .contains(
            "OutboxRelayBacklogGrowing",
            "OutboxRelayOldestPendingAge",
            "OutboxRelayDeadLetters",
            "OutboxRelaySlotWalRetained",
            "OutboxRelayDown");
  }

  @Test
  void alertRulesLinkExistingPlaybookSections() {
    Set<String> anchors = RepositoryFiles.anchors("docs/operations.md");
    for (JsonNode rule : RepositoryFiles.alertRules()) {
      Matcher m = RUNBOOK.matcher(rule.path("annotations").path("description").asText());
      while (m.find()) {
        assertThat(anchors)
            .as("%s links docs/operations.md#%s", rule.path("alert").asText(), m.group(1))
            .contains(m.group(1));
      }
    }
  }

  @Test
  void alertsAndDashboardReadOnlyDocumentedMetrics() {
    Set<String> documented = RepositoryFiles.documentedMetrics();
    assertThat(documented).as("metric names in docs/metrics.md").hasSizeGreaterThan(10);
    documented.add("up"); // Prometheus' own, per scraped target
    Map<String, Set<String>> used = RepositoryFiles.usedMetrics();
    assertThat(used.keySet())
        .as("metrics the alerts and the dashboard use")
        .contains("outbox_relay_pending_events", "outbox_relay_oldest_pending_age_seconds");
    used.forEach(
        (series, where) ->
            assertThat(documented)
                .as("%s (used in %s) is a metric of docs/metrics.md", series, where)
                .contains(RepositoryFiles.documentedName(series, documented)));
  }

  @Test
  void dashboardIsAProvisionableGrafanaDashboard() {
    JsonNode dashboard = RepositoryFiles.json(RepositoryFiles.DASHBOARD);
    assertThat(dashboard.path("uid").asText()).isEqualTo("outbox-relay");
    Set<String> variables = new HashSet<>();
    dashboard.path("templating").path("list").forEach(v -> variables.add(v.path("name").asText()));
    assertThat(variables).contains("datasource", "pipeline");
    Set<Integer> ids = new HashSet<>();
    int queries = 0;
    for (JsonNode panel : dashboard.path("panels")) {
      String title = panel.path("title").asText();
      assertThat(ids.add(panel.path("id").asInt())).as("unique panel id of %s", title).isTrue();
      JsonNode grid = panel.path("gridPos");
      assertThat(grid.path("x").asInt() + grid.path("w").asInt())
          .as("%s fits the 24 columns", title)
          .isLessThanOrEqualTo(24);
      if (!panel.path("type").asText().equals("row")) {
        assertThat(panel.path("datasource").path("uid").asText()).isEqualTo("${datasource}");
        assertThat(panel.path("targets")).as("%s has queries", title).isNotEmpty();
        for (JsonNode target : panel.path("targets")) {
          assertThat(target.path("expr").asText()).as("%s query", title).isNotBlank();
          queries++;
        }
      }
    }
    assertThat(queries).isGreaterThan(10);

    JsonNode datasource =
        RepositoryFiles.yaml("config/grafana/provisioning/datasources/prometheus.yml");
    assertThat(datasource.path("datasources").get(0).path("uid").asText()).isEqualTo("prometheus");
    assertThat(datasource.path("datasources").get(0).path("url").asText())
        .isEqualTo("http://prometheus:9090");
  }

  @Test
  void composeFileWiresTheServicesTogether() {
    JsonNode services = RepositoryFiles.yaml("docker-compose.yml").path("services");
    assertThat(services.fieldNames())
        .toIterable()
        .contains("postgres", "kafka", "rabbitmq", "migrate", "relay", "prometheus", "grafana");
    assertThat(services.path("postgres").path("command").toString()).contains("wal_level=logical");
    assertThat(services.path("kafka").path("environment").path("KAFKA_PROCESS_ROLES").asText())
        .isEqualTo("broker,controller");
    assertThat(services.path("relay").path("depends_on").path("migrate").path("condition").asText())
        .isEqualTo("service_completed_successfully");
    assertThat(services.path("relay").path("build").path("context").asText()).isEqualTo(".");
    assertThat(services.path("relay").path("build").path("target").asText())
        .isEqualTo("from-source");

    // Every bind mount's source exists, and the mounts put files where their users look.
    Map<String, String> mounts = new TreeMap<>();
    services.forEach(
        service ->
            service
                .path("volumes")
                .forEach(
                    v -> {
                      String[] parts = v.asText().split(":");
                      if (parts[0].startsWith("./")) {
                        mounts.put(parts[1], parts[0]);
                      }
                    }));
    mounts.values().forEach(source -> assertThat(RepositoryFiles.path(source)).exists());
    assertThat(mounts)
        .containsEntry("/etc/outbox-relay/relay.conf", "./config/docker.conf")
        .containsEntry("/etc/prometheus", "./config/prometheus")
        .containsEntry("/etc/grafana/provisioning", "./config/grafana/provisioning");
    String dashboards =
        RepositoryFiles.yaml("config/grafana/provisioning/dashboards/outbox-relay.yml")
            .path("providers")
            .get(0)
            .path("options")
            .path("path")
            .asText();
    assertThat(mounts).containsEntry(dashboards, "./config/grafana/dashboards");
    assertThat(RepositoryFiles.read("config/prometheus/prometheus.yml")).contains("alerts.yml");
  }

  @Test
  void dockerfileRunsTheArchiveLauncherAsNonRoot() {
    List<String> lines = dockerfileLines();
    List<String> users =
        lines.stream().filter(l -> l.startsWith("USER ")).map(l -> l.substring(5).strip()).toList();
    assertThat(users).as("USER lines").hasSize(1);
    String user = users.get(0);
    assertThat(user).as("the runtime user, numeric (runAsNonRoot)").matches("[0-9]+:[0-9]+");
    assertThat(user.split(":")[0]).as("the runtime user").isNotEqualTo("0");

    // The base images are build arguments whose defaults are the public images.
    assertThat(lines)
        .contains("ARG BUILD_IMAGE=maven:3.9-eclipse-temurin-17")
        .contains("ARG RUNTIME_IMAGE=eclipse-temurin:17-jre")
        .contains("FROM ${BUILD_IMAGE} AS build")
        .contains("FROM ${RUNTIME_IMAGE} AS runtime");
    assertThat(lines.stream().filter(l -> l.startsWith("FROM ")))
        .as("every FROM names a build argument or an earlier stage")
        .allMatch(
            l -> l.startsWith("FROM ${") || l.matches("FROM (runtime|from-source) AS [a-z-]+"));
    assertThat(lines).contains("EXPOSE 9400", "STOPSIGNAL SIGTERM");
    assertThat(lines)
        .contains("ENTRYPOINT [\"/opt/outbox-relay/bin/outbox-relay\"]")
        .contains("CMD [\"run\", \"--config\", \"/etc/outbox-relay/relay.conf\"]");

    // A health check with the shell alone: neither curl nor wget is in every JRE image.
    String healthcheck =
        String.join(" ", lines).replaceAll("\\\\ +", "").replaceFirst("(?s).*HEALTHCHECK ", "");
    assertThat(healthcheck)
        .startsWith("--interval=")
        .contains("CMD [\"bash\", \"-c\"", "/dev/tcp/127.0.0.1/", "/health/live")
        .doesNotContain("curl", "wget");

    // Both targets unpack the archive this module builds, whose launcher is bin/outbox-relay: from
    // source (the Maven stage) or as built already (from-archive, no Maven).
    String file = String.join("\n", lines);
    assertThat(stage(file, "build"))
        .contains("package -pl dist -am")
        .contains(
            "tar -xzf dist/target/outbox-relay-*.tar.gz -C /opt/outbox-relay --strip-components=1");
    assertThat(stage(file, "unpack-archive"))
        .doesNotContain("mvn")
        .contains("ARG ARCHIVE=dist/target/outbox-relay-*.tar.gz")
        .contains("tar -xzf /tmp/outbox-relay.tar.gz -C /opt/outbox-relay --strip-components=1");
    assertThat(stage(file, "from-archive"))
        .contains(
            "COPY --from=unpack-archive --chown=root:root /opt/outbox-relay /opt/outbox-relay")
        .doesNotContain("--from=build");
    assertThat(stage(file, "from-source"))
        .contains("COPY --from=build --chown=root:root /opt/outbox-relay /opt/outbox-relay");
    assertThat(lines.get(lines.size() - 1))
        .as("the last stage, the default target, builds from source (docker build .)")
        .isEqualTo("FROM from-source AS default");
    // Docker's legacy builder builds every stage before its target: from-source must come before
    // the archive's stages, which fail without an archive in the context.
    assertThat(file.indexOf(" AS from-source")).isLessThan(file.indexOf(" AS unpack-archive"));
    assertThat(RepositoryFiles.read("dist/src/main/assembly/distribution.xml"))
        .contains("<baseDirectory>outbox-relay-${project.version}</baseDirectory>")
        .contains("<componentDescriptor>src/main/assembly/common.xml</componentDescriptor>");
    assertThat(RepositoryFiles.read("dist/src/main/assembly/common.xml"))
        .contains("<outputDirectory>bin</outputDirectory>");
    assertThat(RepositoryFiles.path("dist/src/main/bin/outbox-relay")).isRegularFile();
    assertThat(RepositoryFiles.path("config/relay.conf")).isRegularFile();
    // Files copied from the build context (other than the whole checkout and the archive) exist.
    lines.stream()
        .filter(l -> l.startsWith("COPY ") && !l.contains("--from="))
        .map(l -> l.split("\\s+"))
        .map(parts -> parts[parts.length - 2])
        .filter(source -> !source.equals(".") && !source.equals("${ARCHIVE}"))
        .forEach(source -> assertThat(RepositoryFiles.path(source)).as("COPY " + source).exists());
  }

  @Test
  void imageScriptBuildsTheArchiveTarget() {
    String script = RepositoryFiles.read("scripts/image.sh");
    assertThat(script)
        .contains("--target from-archive")
        .contains("--build-arg RUNTIME_IMAGE=")
        .contains("--isolation chroot")
        .contains("--format docker");
    assertThat(dockerfileLines()).contains("FROM runtime AS from-archive");
  }

  private static List<String> dockerfileLines() {
    return RepositoryFiles.read("Dockerfile")
        .lines()
        .filter(l -> !l.isBlank() && !l.startsWith("#"))
        .toList();
  }

  /** The instructions of one stage: from its FROM line to the next FROM. */
  private static String stage(String dockerfile, String name) {
    int start = -1;
    List<String> lines = dockerfile.lines().toList();
    StringBuilder stage = new StringBuilder();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.startsWith("FROM ")) {
        if (start >= 0) {
          break;
        }
        if (line.endsWith(" AS " + name)) {
          start = i;
        }
      }
      if (start >= 0) {
        stage.append(line).append('\n');
      }
    }
    assertThat(start).as("stage %s in the Dockerfile", name).isNotNegative();
    return stage.toString();
  }
}
