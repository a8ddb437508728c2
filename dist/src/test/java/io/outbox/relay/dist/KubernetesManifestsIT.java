package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import io.outbox.relay.dist.UnpackedDistribution.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/kubernetes rendered by {@code kubectl kustomize} (Debian's kubernetes-client, which {@code
 * scripts/services.sh up} unpacks), every document read strictly into fabric8's model
 * (KubernetesManifests), then what docs/deployment.md promises of it: two replicas with probes, a
 * disruption budget, migrate as the schema owner, the alert rules of config/prometheus, and a
 * configuration the archive's {@code check-config} accepts with the pods' environment.
 */
class KubernetesManifestsIT {
  private static List<JsonNode> documents;
  private static Deployment deployment;
  private static Job migrate;
  private static Service service;
  private static PodDisruptionBudget budget;
  private static ServiceMonitor monitor;
  private static PrometheusRule rules;
  private static Map<String, ConfigMap> configMaps = new HashMap<>();

  @BeforeAll
  static void render() {
    documents = KubernetesManifests.render();
    List<HasMetadata> objects = documents.stream().map(KubernetesManifests::parse).toList();
    deployment = one(objects, Deployment.class);
    migrate = one(objects, Job.class);
    service = one(objects, Service.class);
    budget = one(objects, PodDisruptionBudget.class);
    monitor = one(objects, ServiceMonitor.class);
    rules = one(objects, PrometheusRule.class);
    objects.stream()
        .filter(ConfigMap.class::isInstance)
        .map(ConfigMap.class::cast)
        .forEach(c -> configMaps.put(c.getMetadata().getName(), c));
  }

  private static <T> T one(List<HasMetadata> objects, Class<T> type) {
    List<T> found = objects.stream().filter(type::isInstance).map(type::cast).toList();
    assertThat(found).as("rendered %s", type.getSimpleName()).hasSize(1);
    return found.get(0);
  }

  @Test
  void rendersOneOfEachKind() {
    assertThat(documents)
        .extracting(d -> d.path("kind").asText())
        .containsExactlyInAnyOrder(
            "ConfigMap",
            "ConfigMap",
            "Service",
            "Deployment",
            "PodDisruptionBudget",
            "Job",
            "ServiceMonitor",
            "PrometheusRule");
  }

  @Test
  void strictReadingRejectsUnknownFieldsAndWrongTypes() {
    // The validation is not a rubber stamp: a misspelt field, and a string where a number goes.
    JsonNode original = document("Deployment");
    ObjectNode typo = original.deepCopy();
    ((ObjectNode) typo.at("/spec/template/spec/containers/0/readinessProbe/httpGet"))
        .put("paht", "/health/ready");
    assertThatFails(typo, ".spec.template.spec.containers[0].readinessProbe.httpGet.paht");
    ObjectNode wrongType = original.deepCopy();
    ((ObjectNode) wrongType.path("spec")).put("replicas", "2");
    assertThatFails(wrongType, ".spec.replicas");
  }

  @Test
  void twoReplicasWithProbesOnTheHealthEndpoints() {
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
    Container relay = container(deployment.getSpec().getTemplate());
    assertThat(relay.getArgs())
        .containsExactly("run", "--config", configPath(deployment.getSpec().getTemplate()));
    assertThat(relay.getPorts())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.getContainerPort()).isEqualTo(9400);
              assertThat(p.getName()).isEqualTo("http-metrics");
            });
    assertProbe(relay.getReadinessProbe(), "/health/ready");
    assertProbe(relay.getLivenessProbe(), "/health/live");
    assertThat(relay.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(relay.getResources().getLimits()).containsKey("memory");
  }

  @Test
  void podsRunAsNonRootAndStopWithinTheGracePeriod() {
    for (PodTemplateSpec pod :
        List.of(deployment.getSpec().getTemplate(), migrate.getSpec().getTemplate())) {
      PodSpec spec = pod.getSpec();
      assertThat(spec.getSecurityContext().getRunAsNonRoot()).isTrue();
      assertThat(spec.getSecurityContext().getRunAsUser()).isPositive();
      Container c = container(pod);
      assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
      assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
      assertThat(c.getImage())
          .as("the image kustomize's images: entry names")
          .isEqualTo("outbox-relay");
    }
    Duration shutdown = SystemdUnitTest.shutdownTimeout(relayConf());
    assertThat(
            Duration.ofSeconds(
                deployment.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds()))
        .as("terminationGracePeriodSeconds")
        .isGreaterThan(shutdown.plusSeconds(10));
  }

  @Test
  void disruptionBudgetAndServiceSelectTheRelayPodsOnly() {
    Map<String, String> relayPods = deployment.getSpec().getTemplate().getMetadata().getLabels();
    Map<String, String> migratePods = migrate.getSpec().getTemplate().getMetadata().getLabels();
    assertThat(budget.getSpec().getMinAvailable().getIntVal()).isEqualTo(1);
    assertThat(relayPods).containsAllEntriesOf(budget.getSpec().getSelector().getMatchLabels());
    assertThat(migratePods).doesNotContainEntry("app.kubernetes.io/component", "relay");
    assertThat(relayPods).containsAllEntriesOf(service.getSpec().getSelector());
    assertThat(migratePods.entrySet())
        .doesNotContainAnyElementsOf(Map.of("app.kubernetes.io/component", "relay").entrySet());
    assertThat(service.getSpec().getSelector())
        .containsEntry("app.kubernetes.io/component", "relay");
    assertThat(service.getSpec().getPorts())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.getPort()).isEqualTo(9400);
              assertThat(p.getTargetPort().getStrVal()).isEqualTo("http-metrics");
            });
  }

  @Test
  void migrateJobRunsAsTheSchemaOwner() {
    Container job = container(migrate.getSpec().getTemplate());
    Container relay = container(deployment.getSpec().getTemplate());
    assertThat(job.getArgs())
        .containsExactly("migrate", "--config", configPath(migrate.getSpec().getTemplate()));
    assertThat(secretOf(migrate.getSpec().getTemplate(), job)).isEqualTo("outbox-relay-db-owner");
    assertThat(secretOf(deployment.getSpec().getTemplate(), relay)).isEqualTo("outbox-relay-db");
    assertThat(migrate.getSpec().getTemplate().getSpec().getRestartPolicy())
        .isIn("OnFailure", "Never");
  }

  @Test
  void serviceMonitorScrapesTheServiceAndTheRulesAreTheAlertsFile() {
    assertThat(service.getMetadata().getLabels())
        .containsAllEntriesOf(monitor.getSpec().getSelector().getMatchLabels());
    assertThat(monitor.getSpec().getEndpoints())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getPort()).isEqualTo(service.getSpec().getPorts().get(0).getName());
              assertThat(e.getPath()).isEqualTo("/metrics");
            });
    // The Prometheus Operator names the job after the Service: the job the rules read.
    assertThat(RepositoryFiles.read(RepositoryFiles.ALERTS))
        .contains("job=\"" + service.getMetadata().getName() + "\"");
    // As rendered: read strictly into the model above, and equal to the file Prometheus users load.
    assertThat(rules.getSpec().getGroups()).isNotEmpty();
    JsonNode groups = document("PrometheusRule").path("spec").path("groups");
    assertThat(groups)
        .as(
            "PrometheusRule outbox-relay: spec.groups equal the groups of "
                + RepositoryFiles.ALERTS)
        .isEqualTo(RepositoryFiles.yaml(RepositoryFiles.ALERTS).path("groups"));
  }

  @Test
  void checkConfigAcceptsTheConfigMapWithEachPodsEnvironment(@TempDir Path dir) throws IOException {
    UnpackedDistribution dist = UnpackedDistribution.unpack(dir);
    Path conf = Files.writeString(dir.resolve("relay.conf"), relayConf());
    for (PodTemplateSpec pod :
        List.of(deployment.getSpec().getTemplate(), migrate.getSpec().getTemplate())) {
      Map<String, String> env = environment(pod, dir);
      Result check = dist.run(env, "check-config", "--config", conf.toString());
      assertThat(check.exitCode()).as(check.toString()).isZero();
      assertThat(check.out())
          .contains("port = 9400")
          .contains("user = \"" + env.get("APP_DB_USER") + "\"");
    }
  }

  /** The pod's environment as the kubelet gives it, with the Secret's files in {@code dir}. */
  private static Map<String, String> environment(PodTemplateSpec pod, Path dir) throws IOException {
    Container c = container(pod);
    Map<String, String> env = new HashMap<>();
    c.getEnvFrom()
        .forEach(from -> env.putAll(configMaps.get(from.getConfigMapRef().getName()).getData()));
    String secret = secretOf(pod, c);
    for (EnvVar var : c.getEnv()) {
      if (var.getValueFrom() != null) {
        assertThat(var.getValueFrom().getSecretKeyRef().getName()).isEqualTo(secret);
        env.put(var.getName(), secret.endsWith("-owner") ? "app_owner" : "outbox_relay");
      } else if (var.getName().equals("APP_DB_PASSWORD_FILE")) {
        // The Secret's file, where the pod mounts it: written into the test's directory.
        Path file =
            Files.createDirectories(dir.resolve(secret))
                .resolve(Path.of(var.getValue()).getFileName());
        Files.writeString(file, "not-the-password\n");
        env.put(var.getName(), file.toString());
      } else if (!var.getName().equals("JAVA_OPTS")) {
        env.put(var.getName(), var.getValue());
      }
    }
    return env;
  }

  /** The Secret whose key `password` the container reads through APP_DB_PASSWORD_FILE. */
  private static String secretOf(PodTemplateSpec pod, Container c) {
    String file =
        c.getEnv().stream()
            .filter(e -> e.getName().equals("APP_DB_PASSWORD_FILE"))
            .findFirst()
            .orElseThrow()
            .getValue();
    VolumeMount mount =
        c.getVolumeMounts().stream()
            .filter(m -> file.startsWith(m.getMountPath() + "/"))
            .findFirst()
            .orElseThrow(() -> new AssertionError(file + " is under no mount"));
    Volume volume = volume(pod, mount.getName());
    assertThat(volume.getSecret()).as("volume %s", mount.getName()).isNotNull();
    String item = file.substring(mount.getMountPath().length() + 1);
    assertThat(volume.getSecret().getItems())
        .anySatisfy(
            i -> {
              assertThat(i.getKey()).isEqualTo("password");
              assertThat(i.getPath()).isEqualTo(item);
            });
    String userSecret =
        c.getEnv().stream()
            .filter(e -> e.getName().equals("APP_DB_USER"))
            .findFirst()
            .orElseThrow()
            .getValueFrom()
            .getSecretKeyRef()
            .getName();
    assertThat(userSecret).isEqualTo(volume.getSecret().getSecretName());
    return userSecret;
  }

  /** --config's path: relay.conf of the ConfigMap the pod mounts. */
  private static String configPath(PodTemplateSpec pod) {
    VolumeMount mount =
        container(pod).getVolumeMounts().stream()
            .filter(m -> m.getName().equals("config"))
            .findFirst()
            .orElseThrow();
    String name = volume(pod, "config").getConfigMap().getName();
    assertThat(configMaps.get(name)).as("ConfigMap %s", name).isNotNull();
    assertThat(configMaps.get(name).getData()).containsKey("relay.conf");
    return mount.getMountPath() + "/relay.conf";
  }

  private static String relayConf() {
    return configMaps.values().stream()
        .filter(c -> c.getData().containsKey("relay.conf"))
        .findFirst()
        .orElseThrow()
        .getData()
        .get("relay.conf");
  }

  private static JsonNode document(String kind) {
    return documents.stream()
        .filter(d -> d.path("kind").asText().equals(kind))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " rendered"));
  }

  private static Volume volume(PodTemplateSpec pod, String name) {
    return pod.getSpec().getVolumes().stream()
        .filter(v -> v.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no volume " + name));
  }

  private static Container container(PodTemplateSpec pod) {
    assertThat(pod.getSpec().getContainers()).hasSize(1);
    return pod.getSpec().getContainers().get(0);
  }

  private static void assertProbe(Probe probe, String path) {
    assertThat(probe).as("probe on %s", path).isNotNull();
    assertThat(probe.getHttpGet().getPath()).isEqualTo(path);
    assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("http-metrics");
  }

  private static void assertThatFails(JsonNode document, String field) {
    try {
      KubernetesManifests.parse(document);
    } catch (AssertionError e) {
      assertThat(e.getMessage()).contains(field);
      return;
    }
    throw new AssertionError("accepted: " + document);
  }
}
