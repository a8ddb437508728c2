package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import io.outbox.relay.dist.UnpackedDistribution.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Map.Entry;
import java.util.stream.StreamSupport;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import tools.jackson.databind.cfg.MapperConfig;
import tools.jackson.databind.introspect.Annotated;
import tools.jackson.databind.introspect.JacksonAnnotationIntrospector;
import tools.jackson.databind.json.JsonMapper;

/**
 * The kustomize base of deploy/kubernetes rendered by {@code kubectl kustomize} and read into
 * fabric8's Kubernetes model: each document must be of a known kind at its API version, and every
 * field of it must be one the model (generated from the Kubernetes and Prometheus Operator schemas)
 * knows, with a value of the right type.
 */
final class KubernetesManifests {
  static final String BASE = "deploy/kubernetes";

  /** The kinds the base renders, with the model class of each. */
  static final Map<String, Class<? extends HasMetadata>> KINDS =
      Map.of(
          "ConfigMap", ConfigMap.class,
          "Service", Service.class,
          "Deployment", Deployment.class,
          "PodDisruptionBudget", PodDisruptionBudget.class,
          "Job", Job.class,
          "ServiceMonitor", ServiceMonitor.class,
          "PrometheusRule", PrometheusRule.class);

  private static final ObjectMapper YAML_TREES = new ObjectMapper();

  /** fabric8's model is annotated for Jackson 3 (tools.jackson), so it is read with Jackson 3. */
  private static final JsonMapper READER = JsonMapper.builder().build();

  /**
   * Writes a model object back without its "additional properties", the fields fabric8 keeps aside
   * because its schema does not know them: what a round trip loses is unknown.
   */
  private static final JsonMapper KNOWN_FIELDS_ONLY =
      JsonMapper.builder()
          .annotationIntrospector(
              new JacksonAnnotationIntrospector() {
                private static final long serialVersionUID = 1L;

                @Override
                public Boolean hasAnyGetter(MapperConfig<?> config, Annotated a) {
                  return Boolean.FALSE;
                }
              })
          .changeDefaultPropertyInclusion(i -> i.withValueInclusion(JsonInclude.Include.NON_NULL))
          .build();

  private KubernetesManifests() {}

  /** {@code kubectl kustomize deploy/kubernetes}: the documents it prints. */
  static List<JsonNode> render() {
    Result kustomize =
        UnpackedDistribution.exec(
            RepositoryFiles.root(),
            Map.of(),
            List.of(UnpackedDistribution.tool("kubectl"), "kustomize", BASE));
    assertThat(kustomize.exitCode()).as(kustomize.toString()).isZero();
    Iterable<Object> loaded =
        new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(kustomize.out());
    return StreamSupport.stream(loaded.spliterator(), false)
        .filter(d -> d != null)
        .map(d -> YAML_TREES.<JsonNode>valueToTree(d))
        .toList();
  }

  /**
   * The document as a model object; fails naming every field the model does not know, a wrong type,
   * an unknown kind or an API version other than the model's.
   */
  static HasMetadata parse(JsonNode document) {
    String kind = document.path("kind").asText();
    Class<? extends HasMetadata> type = KINDS.get(kind);
    assertThat(type).as("a kind of %s: %s", KINDS.keySet(), kind).isNotNull();
    HasMetadata object;
    try {
      object = READER.readValue(document.toString(), type);
    } catch (RuntimeException e) {
      throw new AssertionError(kind + " does not fit the model: " + e.getMessage(), e);
    }
    String name = kind + " " + object.getMetadata().getName();
    assertThat(document.path("apiVersion").asText())
        .as("%s: apiVersion", name)
        .isEqualTo(HasMetadata.getApiVersion(type));
    List<String> unknown = new ArrayList<>();
    tools.jackson.databind.JsonNode known = KNOWN_FIELDS_ONLY.valueToTree(object);
    differences("", READER.readTree(document.toString()), known, unknown);
    assertThat(unknown).as("%s: fields the schema does not know", name).isEmpty();
    return object;
  }

  /** The paths under which {@code original} holds something that {@code known} lacks or changed. */
  private static void differences(
      String path,
      tools.jackson.databind.JsonNode original,
      tools.jackson.databind.JsonNode known,
      List<String> out) {
    if (original.isObject()) {
      for (Entry<String, tools.jackson.databind.JsonNode> field : original.properties()) {
        tools.jackson.databind.JsonNode kept = known.get(field.getKey());
        String at = path + "." + field.getKey();
        if (kept == null) {
          out.add(at);
        } else {
          differences(at, field.getValue(), kept, out);
        }
      }
    } else if (original.isArray()) {
      if (!known.isArray() || known.size() != original.size()) {
        out.add(path + " (a list)");
        return;
      }
      for (int i = 0; i < original.size(); i++) {
        differences(path + "[" + i + "]", original.get(i), known.get(i), out);
      }
    } else if (original.getNodeType() != known.getNodeType()
        || !original.asString().equals(known.asString())) {
      out.add(path + " = " + original + " (read as " + known + ")");
    }
  }
}
