package io.outbox.relay.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigValue;
import java.net.URL;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReferenceConfTest {

  private static final URL CORE_REFERENCE;

  static {
    try {
      CORE_REFERENCE =
          Path.of("src/main/resources/reference.conf").toAbsolutePath().toUri().toURL();
    } catch (java.net.MalformedURLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void everyKeyHasAComment() {
    ConfigObject root = ConfigFactory.parseURL(CORE_REFERENCE).root();
    List<String> undocumented = new ArrayList<>();
    collectUndocumented(root, "", undocumented);

    assertThat(undocumented).isEmpty();
  }

  @Test
  void holdsTheDocumentedDefaults() {
    var c = ConfigFactory.parseURL(CORE_REFERENCE).resolve().getConfig("outbox-relay");

    assertThat(c.getInt("http.port")).isEqualTo(9400);
    assertThat(c.getString("pipeline-defaults.routing.destination"))
        .isEqualTo("outbox.${aggregate_type}");
    assertThat(c.getIsNull("pipeline-defaults.database.url")).isTrue();
    assertThat(c.getObject("pipeline-defaults.database.properties")).isEmpty();
    assertThat(c.getString("pipeline-defaults.on-publish")).isEqualTo("mark");
  }

  private static void collectUndocumented(ConfigObject o, String path, List<String> out) {
    for (Map.Entry<String, ConfigValue> e : o.entrySet()) {
      String keyPath = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
      // The root object is only a namespace.
      if (!keyPath.equals("outbox-relay") && e.getValue().origin().comments().isEmpty()) {
        out.add(keyPath);
      }
      if (e.getValue() instanceof ConfigObject child) {
        collectUndocumented(child, keyPath, out);
      }
    }
  }
}
